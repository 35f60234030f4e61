package batch

import (
	"bytes"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestDelimFinderMatchesIndex checks delimFinder.index against bytes.Index on random data
// over a small alphabet, so that matches, near misses and the fallback all occur.
func TestDelimFinderMatchesIndex(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const alphabet = "\n-_ab"
	randText := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = alphabet[rng.IntN(len(alphabet))]
		}
		return b
	}
	boundaries := []string{"_", "a_b", "ab", "a-b", "b_", "cs_1", "changeset_c"}
	for range 20000 {
		boundary := boundaries[rng.IntN(len(boundaries))]
		if rng.IntN(4) == 0 {
			boundary = string(randText(1 + rng.IntN(4)))
		}
		pat := []byte("\n--" + boundary)
		data := randText(rng.IntN(200))
		if rng.IntN(2) == 0 { // plant a match
			at := rng.IntN(len(data) + 1)
			data = append(data[:at:at], append(pat, data[at:]...)...)
		}
		f := newDelimFinder(pat)
		if got, want := f.index(data), bytes.Index(data, pat); got != want {
			t.Fatalf("index(%q, %q) = %d, want %d", data, pat, got, want)
		}
	}
}

func TestDelimFinderAnchor(t *testing.T) {
	tests := []struct {
		boundary string
		anchor   int // in "\n--" + boundary
	}{
		{"changeset_5765a5ae-c9ca-4b0d-b295-cf85344690e6", 12},
		{"batch_b", 8},
		{"abc", 0},
		{"a-b", 0},
		{"a.b", 4},
		// The edges of each class the anchor skips.
		{"a_", 4}, {"z_", 4}, {"A_", 4}, {"Z_", 4}, {"0_", 4}, {"9_", 4},
	}
	for _, tt := range tests {
		if got := newDelimFinder([]byte("\n--" + tt.boundary)).anchor; got != tt.anchor {
			t.Errorf("anchor of %q = %d, want %d", tt.boundary, got, tt.anchor)
		}
	}
}

// TestDelimFinderHostile checks that an anchor byte filling the data still finds the match.
func TestDelimFinderHostile(t *testing.T) {
	pat := []byte("\n--cs_1")
	data := []byte(strings.Repeat("_", 100000) + "\n--cs_1")
	f := newDelimFinder(pat)
	if got := f.index(data); got != 100000 {
		t.Fatalf("index = %d, want 100000", got)
	}
}

// TestHasControlMatchesSlow checks the eight-byte test against the byte loop with every byte
// value at every offset, in strings of every length around a block.
// The fillers matter: the eight-byte test must find a control character among bytes below
// 0x60 (upper case, digits, punctuation) as well as among lower case and non-ASCII ones.
func TestHasControlMatchesSlow(t *testing.T) {
	for _, filler := range []string{"a\xe9", "A0 .Z", "~\x80"} {
		testHasControlFiller(t, filler)
	}
}

func testHasControlFiller(t *testing.T, filler string) {
	for n := 1; n <= 20; n++ {
		for pos := 0; pos < n; pos++ {
			for c := range 256 {
				b := []byte(strings.Repeat(filler, n)[:n])
				b[pos] = byte(c)
				for _, tab := range []bool{false, true} {
					if got, want := hasControl(b, tab), hasControlSlow(b, tab); got != want {
						t.Fatalf("hasControl(%q, %v) = %v, want %v", b, tab, got, want)
					}
					if got, want := hasControl(string(b), tab), hasControlSlow(b, tab); got != want {
						t.Fatalf("hasControl(string %q, %v) = %v, want %v", b, tab, got, want)
					}
				}
			}
		}
	}
}
