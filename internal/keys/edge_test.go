package keys

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

// TestOrdinalEdges: the runes at the edges of the UTF-16 mapping, and runes that share the
// high surrogate and differ only in the low one.
func TestOrdinalEdges(t *testing.T) {
	cases := []struct{ a, b string }{
		{"a", "\U00010000"},          // the first supplementary rune sorts after ASCII
		{"\uFFFF", "\uFFFF\x00"},     // a prefix sorts first
		{"\U00010000", "\uE000"},     // D800 DC00 < E000
		{"\U00010000", "\U00010001"}, // same high surrogate, low DC00 < DC01
		{"😀", "😁"},                   // U+1F600 < U+1F601: D83D DE00 < D83D DE01
		{"\U0010FFFE", "\U0010FFFF"}, // the last two runes
		{"\uD7FF", "\U00010000"},     // the last rune below the surrogates sorts first
	}
	for _, c := range cases {
		if got := CompareOrdinal(c.a, c.b); got != -1 || utf16Compare(c.a, c.b) != -1 {
			t.Errorf("CompareOrdinal(%q,%q)=%d, utf16=%d, want -1", c.a, c.b, got, utf16Compare(c.a, c.b))
		}
		if got := CompareOrdinal(c.b, c.a); got != 1 {
			t.Errorf("CompareOrdinal(%q,%q)=%d, want 1", c.b, c.a, got)
		}
		if bytes.Compare(Entity(1, c.a, ""), Entity(1, c.b, "")) != -1 {
			t.Errorf("encoded %q !< %q", c.a, c.b)
		}
	}
}

// TestOrdinalInvalidUTF8: bytes that are not UTF-8 (a filter literal may carry them) never
// make CompareOrdinal panic, even when the first byte is a continuation byte.
func TestOrdinalInvalidUTF8(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want int
	}{
		{"\x80", "\x81", -1},
		{"\xBF", "\x80", 1},
		{"\x80a", "\x80b", -1},
		{"a\xFF", "a\xFE", 1},
	} {
		if got := CompareOrdinal(c.a, c.b); got != c.want {
			t.Errorf("CompareOrdinal(%q,%q)=%d, want %d", c.a, c.b, got, c.want)
		}
	}
}

// TestDecodeCorrupt: keys this package did not write are refused with ErrCorrupt, never a
// panic or a wrong split.
func TestDecodeCorrupt(t *testing.T) {
	good := Entity(3, "p", "r")
	for name, k := range map[string][]byte{
		"empty":                  nil,
		"table prefix only":      TablePrefix(3),
		"wrong family":           append([]byte{prefixTable}, good[1:]...),
		"short id":               good[:8],
		"unterminated pk":        append(TablePrefix(3), 'p'),
		"pk ends in a lone 0x00": append(TablePrefix(3), 'p', 0x00),
		"unterminated rk":        good[:len(good)-2],
		"rk cut after 0x00":      good[:len(good)-1],
		"bad escape":             append(TablePrefix(3), 'p', 0x00, 0x02),
		"raw 0xEE":               append(TablePrefix(3), 0xEE, 0x00, 0x01, 0x00, 0x01),
		"raw 0xEF":               append(TablePrefix(3), 0xEF, 0x00, 0x01, 0x00, 0x01),
		"trailing bytes":         append(bytes.Clone(good), 'x'),
	} {
		if _, _, _, err := DecodeEntity(k); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s (%x): %v, want ErrCorrupt", name, k, err)
		}
	}
	for _, b := range [][]byte{[]byte("abc"), {'a', 0x00}, {0xF5, 0xF6}} {
		if _, _, err := DecodeString(b); !errors.Is(err, ErrCorrupt) {
			t.Errorf("DecodeString(%x): %v, want ErrCorrupt", b, err)
		}
	}
	// The escapes decode back, and the rest after the terminator is returned untouched.
	s, rest, err := DecodeString(append(AppendString(nil, "a\x00\uE000\uFFFF"), 'z'))
	if err != nil || s != "a\x00\uE000\uFFFF" || string(rest) != "z" {
		t.Fatalf("DecodeString: %q %q %v", s, rest, err)
	}
}

func TestPrefixEnd(t *testing.T) {
	for _, c := range []struct{ in, want []byte }{
		{[]byte{0x01}, []byte{0x02}},
		{[]byte{0x01, 0xFF}, []byte{0x02}},
		{[]byte{0x01, 0xFF, 0xFF}, []byte{0x02}},
		{[]byte{0x01, 0x05, 0xFF}, []byte{0x01, 0x06}},
		{[]byte{0xFE}, []byte{0xFF}},
	} {
		if got := PrefixEnd(c.in); !bytes.Equal(got, c.want) {
			t.Errorf("PrefixEnd(%x)=%x, want %x", c.in, got, c.want)
		}
	}
	in := []byte{0x01, 0xFF}
	PrefixEnd(in)
	if !bytes.Equal(in, []byte{0x01, 0xFF}) {
		t.Fatal("PrefixEnd changed its argument")
	}
}

// TestNamedKeys: the catalog, metadata and settings keys hold their parts in order, for
// names shorter and longer than the account (the capacity arithmetic must not go negative).
func TestNamedKeys(t *testing.T) {
	long := strings.Repeat("n", 40)
	for _, c := range []struct {
		got  []byte
		want string
	}{
		{Table("devstoreaccount1", ""), "tdevstoreaccount1\x00"},
		{Table("a", long), "ta\x00" + long},
		{TableCatalogPrefix("devstoreaccount1"), "tdevstoreaccount1\x00"},
		{Account("devstoreaccount1", ""), "sdevstoreaccount1\x00"},
		{Account("a", long), "sa\x00" + long},
		{TableMeta(1, "acl"), "a\x00\x00\x00\x00\x00\x00\x00\x01acl"},
		{TableMeta(1, long), "a\x00\x00\x00\x00\x00\x00\x00\x01" + long},
		{TableMetaPrefix(258), "a\x00\x00\x00\x00\x00\x00\x01\x02"},
		{Meta("version"), "mversion"},
		{QueueCatalog("devstoreaccount1", ""), "Qcdevstoreaccount1\x00"},
		{QueueCatalog("a", long), "Qca\x00" + long},
		{QueueCatalogPrefix("acct"), "Qcacct\x00"},
		{QueueSetting("devstoreaccount1", ""), "Qsdevstoreaccount1\x00"},
		{QueueSetting("a", long), "Qsa\x00" + long},
		{QueueNextID(), "Qn"},
		{QueueCount(1), "Qd\x00\x00\x00\x00\x00\x00\x00\x01n"},
	} {
		if string(c.got) != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
	// One account's catalog prefix never covers another account whose name extends it.
	if bytes.HasPrefix(Table("ab", "t"), TableCatalogPrefix("a")) || bytes.HasPrefix(QueueCatalog("ab", "q"), QueueCatalogPrefix("a")) {
		t.Fatal("account prefix covers a longer account name")
	}
}

func TestQueueIndexCorrupt(t *testing.T) {
	v := QueueVisible(7, 5, 9)
	for _, k := range [][]byte{v[:26], append(bytes.Clone(v), 0), QueueExpiry(5, 7, 9), append([]byte{'X'}, v[1:]...)} {
		if _, _, err := DecodeQueueVisible(k); !errors.Is(err, ErrCorrupt) {
			t.Errorf("DecodeQueueVisible(%x): %v", k, err)
		}
	}
	x := QueueExpiry(5, 7, 9)
	for _, k := range [][]byte{x[:25], append(bytes.Clone(x), 0), v[:26]} {
		if _, _, _, err := DecodeQueueExpiry(k); !errors.Is(err, ErrCorrupt) {
			t.Errorf("DecodeQueueExpiry(%x): %v", k, err)
		}
	}
}

// TestBlobKeys: a blob's snapshots sort before its base record, both before any longer name,
// every key decodes back, and keys this package did not write are refused.
func TestBlobKeys(t *testing.T) {
	const id = 9
	long := strings.Repeat("n", 40)
	if got := string(BlobCatalog("a", long)); got != "Bca\x00"+long {
		t.Fatalf("BlobCatalog: %q", got)
	}
	if got := string(BlobCatalog("devstoreaccount1", "")); got != "Bcdevstoreaccount1\x00" {
		t.Fatalf("BlobCatalog: %q", got)
	}
	if got := string(BlobSetting("acct", "properties")); got != "Bsacct\x00properties" {
		t.Fatalf("BlobSetting: %q", got)
	}
	if got := string(BlobContainerCounter()); got != "Bn" {
		t.Fatalf("BlobContainerCounter: %q", got)
	}
	order := [][]byte{Blob(id, "a", 1), Blob(id, "a", 1<<40), Blob(id, "a", 0), Blob(id, "a!", 0), Blob(id, "b", 5)}
	for i := 1; i < len(order); i++ {
		if bytes.Compare(order[i-1], order[i]) >= 0 {
			t.Fatalf("%q !< %q", order[i-1], order[i])
		}
	}
	for _, k := range order {
		if !bytes.HasPrefix(k, BlobPrefix(id, "")) || !bytes.HasPrefix(k, BlobContainerData(id)) {
			t.Fatalf("%q outside its container", k)
		}
	}
	if !bytes.HasPrefix(Blob(id, "a", 7), BlobVersions(id, "a")) || bytes.HasPrefix(Blob(id, "a!", 0), BlobVersions(id, "a")) {
		t.Fatal("BlobVersions")
	}
	for _, c := range []struct {
		name string
		snap int64
	}{{"a", 0}, {"a", 1}, {"dir/x.txt", 1 << 40}, {"", 0}, {"", 3}, {"\x01\x02", 0}} {
		name, snap, err := DecodeBlob(id, Blob(id, c.name, c.snap))
		if err != nil || name != c.name || snap != c.snap {
			t.Errorf("DecodeBlob(Blob(%q,%d)) = %q %d %v", c.name, c.snap, name, snap, err)
		}
	}
	base := Blob(id, "ab", 0)
	snap := Blob(id, "ab", 3)
	for name, k := range map[string][]byte{
		"prefix only":             BlobPrefix(id, ""),
		"one byte":                append(BlobPrefix(id, ""), BlobKindBase),
		"base without separator":  append(BlobPrefix(id, "ab"), 1, BlobKindBase),
		"unknown kind":            append(BlobPrefix(id, "ab"), 0, 3),
		"snapshot cut short":      append(BlobPrefix(id, ""), 0, BlobKindSnapshot, 1),
		"snapshot no separator":   append(bytes.Clone(snap[:len(snap)-10]), 'x', BlobKindSnapshot, 0, 0, 0, 0, 0, 0, 0, 3),
		"base with trailing kind": append(bytes.Clone(base), BlobKindBase),
		"another container":       Blob(id+1, "ab", 0),
		"a block key":             BlobBlock(id, "ab", "b"),
	} {
		if _, _, err := DecodeBlob(id, k); !errors.Is(err, ErrCorrupt) {
			t.Errorf("DecodeBlob %s (%q): %v, want ErrCorrupt", name, k, err)
		}
	}

	bk := BlobBlock(id, "dir/x", "block-1")
	if !bytes.HasPrefix(bk, BlobBlockPrefix(id, "dir/x", false)) || !bytes.HasPrefix(bk, BlobBlockPrefix(id, "", true)) ||
		bytes.HasPrefix(BlobBlock(id, "dir/xy", "b"), BlobBlockPrefix(id, "dir/x", false)) {
		t.Fatal("BlobBlockPrefix")
	}
	if name, block, err := DecodeBlobBlock(id, bk); err != nil || name != "dir/x" || block != "block-1" {
		t.Fatalf("DecodeBlobBlock: %q %q %v", name, block, err)
	}
	if name, block, err := DecodeBlobBlock(id, BlobBlock(id, "x", "")); err != nil || name != "x" || block != "" {
		t.Fatalf("DecodeBlobBlock with an empty block id: %q %q %v", name, block, err)
	}
	for _, k := range [][]byte{BlobBlockPrefix(id, "", true)[:5], append(BlobBlockPrefix(id, "", true), "nonul"...), BlobBlock(id+1, "x", "b"), Blob(id, "x", 0)} {
		if _, _, err := DecodeBlobBlock(id, k); !errors.Is(err, ErrCorrupt) {
			t.Errorf("DecodeBlobBlock(%q): %v, want ErrCorrupt", k, err)
		}
	}
}
