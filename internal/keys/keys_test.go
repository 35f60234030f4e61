package keys

import (
	"bytes"
	"math/rand/v2"
	"slices"
	"testing"
	"unicode/utf16"
)

func utf16Compare(a, b string) int {
	return slices.Compare(utf16.Encode([]rune(a)), utf16.Encode([]rune(b)))
}

// TestOrdinalIsUTF16 pins the decision: keys sort by UTF-16 code unit, so U+FFFD sorts after
// an emoji (a surrogate pair), unlike UTF-8 byte order.
func TestOrdinalIsUTF16(t *testing.T) {
	cases := []struct{ a, b string }{
		{"a", "b"}, {"A", "a"}, {"Z", "_"}, {"_", "a"}, {"", "a"}, {"p1", "p10"}, {"p10", "p2"},
		{"😀", "\uFFFD"}, {"😀", "\uE000"}, {"\uD7FF", "😀"}, {"x😀", "x\uFFFF"}, {"é", "😀"},
		{"a\x00", "a\x00\x00"}, {"partition-1", "partition-10"},
	}
	for _, c := range cases {
		if got, want := CompareOrdinal(c.a, c.b), utf16Compare(c.a, c.b); got != want || got >= 0 {
			t.Errorf("CompareOrdinal(%q,%q)=%d, utf16=%d, want -1", c.a, c.b, got, want)
		}
		ka, kb := Entity(1, c.a, ""), Entity(1, c.b, "")
		if bytes.Compare(ka, kb) >= 0 {
			t.Errorf("encoded %q !< %q", c.a, c.b)
		}
	}
}

var alphabet = []string{"", "a", "b", "A", "\x00", "\x01", "é", "\uE000", "\uFFFF", "😀", "𝄞", "'", " ", "~", "\u07FF"}

func randString(r *rand.Rand) string {
	n := r.IntN(4)
	s := ""
	for range n {
		s += alphabet[r.IntN(len(alphabet))]
	}
	return s
}

func TestEncodingOrderMatchesTuples(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		pk1, rk1, pk2, rk2 := randString(r), randString(r), randString(r), randString(r)
		want := utf16Compare(pk1, pk2)
		if want == 0 {
			want = utf16Compare(rk1, rk2)
		}
		got := bytes.Compare(Entity(7, pk1, rk1), Entity(7, pk2, rk2))
		if got != want {
			t.Fatalf("(%q,%q) vs (%q,%q): bytes %d, tuples %d", pk1, rk1, pk2, rk2, got, want)
		}
		if c := CompareOrdinal(pk1, pk2); c != utf16Compare(pk1, pk2) {
			t.Fatalf("CompareOrdinal(%q,%q)=%d", pk1, pk2, c)
		}
	}
}

func TestRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for range 5000 {
		pk, rk := randString(r), randString(r)
		id, gpk, grk, err := DecodeEntity(Entity(42, pk, rk))
		if err != nil || id != 42 || gpk != pk || grk != rk {
			t.Fatalf("round trip (%q,%q): %d %q %q %v", pk, rk, id, gpk, grk, err)
		}
	}
}

func TestPrefixes(t *testing.T) {
	k := Entity(5, "p", "r")
	if !bytes.HasPrefix(k, PartitionPrefix(5, "p")) || !bytes.HasPrefix(k, TablePrefix(5)) {
		t.Fatal("prefix")
	}
	if bytes.Compare(k, TableEnd(5)) >= 0 || bytes.Compare(Entity(6, "", ""), TableEnd(5)) < 0 {
		t.Fatal("table end")
	}
	if bytes.HasPrefix(Entity(5, "pq", "r"), PartitionPrefix(5, "p")) {
		t.Fatal("partition prefix must not match a longer PartitionKey")
	}
	if PrefixEnd([]byte{0xFF, 0xFF}) != nil {
		t.Fatal("PrefixEnd all-FF")
	}
}

func FuzzDecodeEntity(f *testing.F) {
	f.Add(Entity(1, "a", "b"))
	f.Add([]byte("e\x00\x00\x00\x00\x00\x00\x00\x01\x00"))
	f.Fuzz(func(t *testing.T, b []byte) {
		id, pk, rk, err := DecodeEntity(b)
		if err == nil && !bytes.Equal(Entity(id, pk, rk), b) {
			t.Fatalf("decode/encode mismatch for %x", b)
		}
	})
}

func BenchmarkEntityKey(b *testing.B) {
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		_ = Entity(42, "partition-0001", "row-000000123")
	}
}

func BenchmarkDecodeEntity(b *testing.B) {
	k := Entity(42, "partition-0001", "row-000000123")
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, _, _, err := DecodeEntity(k); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkCompareOrdinal(b *testing.B) {
	for i := 0; i < b.N; i++ {
		_ = CompareOrdinal("partition-0001/row-000000123", "partition-0001/row-000000124")
	}
}

// Queue keys: every one carries the queue tag, one queue's data is one range that holds
// nothing of another queue, and the indexes decode back.
func TestQueueKeys(t *testing.T) {
	for _, k := range [][]byte{QueueCatalog("a", "q"), QueueSetting("a", "p"), QueueMessage(7, 1), QueueVisible(7, 5, 1), QueueExpiry(5, 7, 1)} {
		if k[0] != TagQueue {
			t.Fatalf("%q lacks the queue tag", k)
		}
		if bytes.HasPrefix(k, TablePrefix(0)[:1]) || bytes.HasPrefix(k, Table("a", "")[:1]) {
			t.Fatalf("%q collides with a table family", k)
		}
	}
	lo, hi := QueueData(7), PrefixEnd(QueueData(7))
	for _, k := range [][]byte{QueueMessage(7, 0), QueueMessage(7, ^uint64(0)), QueueVisible(7, 1<<62, ^uint64(0))} {
		if bytes.Compare(k, lo) < 0 || bytes.Compare(k, hi) >= 0 {
			t.Fatalf("%q outside its queue's range", k)
		}
	}
	for _, k := range [][]byte{QueueMessage(6, ^uint64(0)), QueueMessage(8, 0), QueueVisible(8, 0, 0)} {
		if bytes.Compare(k, lo) >= 0 && bytes.Compare(k, hi) < 0 {
			t.Fatalf("%q of another queue inside queue 7's range", k)
		}
	}
	if bytes.Compare(QueueVisible(7, 5, 9), QueueVisible(7, 6, 1)) >= 0 {
		t.Fatal("visibility index not ordered by time first")
	}
	if at, seq, err := DecodeQueueVisible(QueueVisible(7, 5, 9)); err != nil || at != 5 || seq != 9 {
		t.Fatal(at, seq, err)
	}
	if at, q, seq, err := DecodeQueueExpiry(QueueExpiry(5, 7, 9)); err != nil || at != 5 || q != 7 || seq != 9 {
		t.Fatal(at, q, seq, err)
	}
}
