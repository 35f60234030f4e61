package auth

import (
	"math/rand/v2"
	"slices"
	"testing"
	"unicode/utf16"
)

// cmpUTF16 is the brute-force oracle: compare the UTF-16 encodings code unit by code unit.
func cmpUTF16(a, b string) int {
	return slices.Compare(utf16.Encode([]rune(a)), utf16.Encode([]rune(b)))
}

// cmpTuple compares (pk, rk) pairs lexicographically with cmpUTF16.
func cmpTuple(pk1, rk1, pk2, rk2 string) int {
	if c := cmpUTF16(pk1, pk2); c != 0 {
		return c
	}
	return cmpUTF16(rk1, rk2)
}

// oracleInRange restates auth.md §7.4 as tuple comparisons: an absent srk is the empty string
// (the smallest key); an absent erk leaves the whole end partition inside.
func oracleInRange(spk, srk, epk, erk, pk, rk string) bool {
	if spk != "" && cmpTuple(pk, rk, spk, srk) < 0 {
		return false
	}
	if epk != "" {
		if erk == "" {
			return cmpUTF16(pk, epk) <= 0
		}
		return cmpTuple(pk, rk, epk, erk) <= 0
	}
	return true
}

// keyAlphabet mixes ASCII with characters where UTF-8 and UTF-16 order disagree.
var keyAlphabet = []rune{'a', 'b', 'z', 0x7F, 0xE9, 0xD7FF, 0xE000, 0xFFFD, 0xFFFF, 0x10000, 0x1F600, 0x10FFFF}

func randomKey(r *rand.Rand) string {
	n := r.IntN(4)
	out := make([]rune, n)
	for i := range out {
		out[i] = keyAlphabet[r.IntN(len(keyAlphabet))]
	}
	return string(out)
}

func TestInRangeProperty(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		s := &SAS{Kind: ServiceSAS, StartPK: randomKey(r), EndPK: randomKey(r)}
		if s.StartPK != "" {
			s.StartRK = randomKey(r)
		}
		if s.EndPK != "" {
			s.EndRK = randomKey(r)
		}
		for range 50 {
			pk, rk := randomKey(r), randomKey(r)
			if r.IntN(4) == 0 { // hit the boundary partitions often
				pk = s.StartPK
			} else if r.IntN(4) == 0 {
				pk = s.EndPK
			}
			want := oracleInRange(s.StartPK, s.StartRK, s.EndPK, s.EndRK, pk, rk)
			if got := s.InRange(pk, rk); got != want {
				t.Fatalf("range [%q,%q]..[%q,%q], key (%q,%q): got %v, want %v",
					s.StartPK, s.StartRK, s.EndPK, s.EndRK, pk, rk, got, want)
			}
		}
	}
}

func TestInRangeExamples(t *testing.T) {
	s := &SAS{Kind: ServiceSAS, StartPK: "pk1", StartRK: "rk0", EndPK: "pk1", EndRK: "rk9"}
	tests := []struct {
		pk, rk string
		want   bool
	}{
		{"pk1", "rk1", true}, {"pk1", "rk0", true}, {"pk1", "rk9", true},
		{"pk1", "rj", false}, {"pk1", "rk9a", false}, {"page", "r00", false}, {"pk2", "", false},
	}
	for _, tt := range tests {
		if got := s.InRange(tt.pk, tt.rk); got != tt.want {
			t.Errorf("(%q,%q): got %v", tt.pk, tt.rk, got)
		}
	}
	// Supplementary characters sort before U+E000..U+FFFF in UTF-16 order.
	s = &SAS{Kind: ServiceSAS, EndPK: "\uE000"}
	if !s.InRange("\U0001F600", "") || s.InRange("\uFFFD", "") {
		t.Error("UTF-16 order not used")
	}
	// No end row key: the whole end partition is inside.
	s = &SAS{Kind: ServiceSAS, StartPK: "a", EndPK: "b"}
	if !s.InRange("b", "\U0010FFFF") || !s.InRange("a", "") || s.InRange("", "x") {
		t.Error("partition-only bounds")
	}
	if a := (&SAS{Kind: AccountSAS, StartPK: "x"}); !a.InRange("a", "a") {
		t.Error("account SAS has no range")
	}
}

func TestKeyRange(t *testing.T) {
	s := &SAS{Kind: ServiceSAS, StartPK: "a", EndPK: "c", EndRK: "r"}
	start, end := s.KeyRange()
	if *start != (KeyBound{PartitionKey: "a"}) || *end != (KeyBound{PartitionKey: "c", RowKey: "r", HasRowKey: true}) {
		t.Fatalf("got %+v %+v", start, end)
	}
	if start, end := (&SAS{Kind: ServiceSAS}).KeyRange(); start != nil || end != nil {
		t.Fatal("unbounded range has bounds")
	}
}
