package queue

import "testing"

// TestReceiptNeverLooksLikeAnOption: a pop receipt never starts with '-' (az takes such an
// argument for an option), and both forms, with and without the lead letter, parse back.
func TestReceiptNeverLooksLikeAnOption(t *testing.T) {
	for _, r := range []uint64{0, 1, 0xF800000000000000, 0xFBFFFFFFFFFFFFFF, ^uint64(0)} {
		s := receiptString(r)
		if s[0] == '-' || s[0] == '_' {
			t.Errorf("receipt %q for %x starts with %q", s, r, s[0])
		}
		if got, err := parseReceipt(s); err != nil || got != r {
			t.Errorf("parseReceipt(%q) = %x, %v; want %x", s, got, err, r)
		}
		if got, err := parseReceipt(s[1:]); err != nil || got != r {
			t.Errorf("parseReceipt(%q) (without the lead) = %x, %v; want %x", s[1:], got, err, r)
		}
	}
	if _, err := parseReceipt("A"); err == nil {
		t.Error("parseReceipt(\"A\") accepted")
	}
}
