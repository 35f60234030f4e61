package queue

import (
	"encoding/base64"
	"encoding/binary"
	"testing"
)

// TestReceiptNeverLooksLikeAnOption: a pop receipt never starts with '-' (az takes such an
// argument for an option), and it parses back to its number and deadline.
func TestReceiptNeverLooksLikeAnOption(t *testing.T) {
	for _, r := range []uint64{0, 1, 0xF800000000000000, 0xFBFFFFFFFFFFFFFF, ^uint64(0)} {
		for _, at := range []int64{0, 1, 1 << 62, 1<<63 - 1} {
			s := receiptString(r, at)
			if s[0] == '-' || s[0] == '_' {
				t.Errorf("receipt %q for %x starts with %q", s, r, s[0])
			}
			if got, gotAt, err := parseReceipt(s); err != nil || got != r || gotAt != at {
				t.Errorf("parseReceipt(%q) = %x, %d, %v; want %x, %d", s, got, gotAt, err, r, at)
			}
		}
	}
	for _, bad := range []string{"A", "", "A" + receiptString(1, 2)[2:], receiptString(1, 2) + "A", "!" + receiptString(1, 2)[1:]} {
		if _, _, err := parseReceipt(bad); err == nil {
			t.Errorf("parseReceipt(%q) accepted", bad)
		}
	}
}

// Receipts of the earlier form (8 bytes, with or without the lead letter) parse, but name
// no message.
func TestOldReceiptNamesNoMessage(t *testing.T) {
	old := base64.RawURLEncoding.EncodeToString(binary.BigEndian.AppendUint64(nil, 42))
	for _, s := range []string{old, receiptLead + old} {
		if _, at, err := parseReceipt(s); err != nil || at != oldReceipt {
			t.Errorf("parseReceipt(%q) = %d, %v; want the old-receipt deadline", s, at, err)
		}
	}
}

// Message ids are GUID-shaped and parse back.
func TestMessageIDRoundTrip(t *testing.T) {
	for _, c := range [][2]uint64{{0, 0}, {1, 2}, {0x0123456789abcdef, 0xfedcba9876543210}, {^uint64(0), ^uint64(0)}} {
		id := messageID(c[0], c[1])
		if len(id) != 36 || id[8] != '-' || id[13] != '-' || id[18] != '-' || id[23] != '-' {
			t.Errorf("messageID(%x, %x) = %q", c[0], c[1], id)
		}
		if q, s, ok := parseMessageID(id); !ok || q != c[0] || s != c[1] {
			t.Errorf("parseMessageID(%q) = %x, %x, %v", id, q, s, ok)
		}
	}
	if got := messageID(0x0123456789abcdef, 0xfedcba9876543210); got != "01234567-89ab-cdef-fedc-ba9876543210" {
		t.Errorf("messageID = %q", got)
	}
}
