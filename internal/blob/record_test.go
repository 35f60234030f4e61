package blob

import (
	"bytes"
	"encoding/binary"
	"testing"

	"github.com/tablo/tablo/internal/keys"
)

// recordKind reads only the byte after the container id of a Blob data key: any other key,
// one too short to hold that byte included, names no extent (tablo migrate hands it every
// key of the engine).
func TestRecordKindOfAnyKey(t *testing.T) {
	data := keys.BlobContainerData(7) // 'B' 'd' and the 8-byte id: 10 bytes
	for _, c := range []struct {
		name string
		k    []byte
		want RecordKind
	}{
		{"blob", keys.Blob(7, "n", 0), BlobRecord},
		{"snapshot", keys.Blob(7, "n", 12345), BlobRecord},
		{"staged block", keys.BlobBlock(7, "n", "QUFB"), BlockRecord},
		{"data prefix only", data, OtherRecord},
		{"data prefix and 'b'", append(bytes.Clone(data), 'b'), BlobRecord},
		{"data prefix and another byte", append(bytes.Clone(data), 'x'), OtherRecord},
		{"container", keys.BlobCatalog("a", "ccc"), OtherRecord},
		{"counter", keys.BlobContainerCounter(), OtherRecord},
		{"empty", nil, OtherRecord},
		{"another tag", append([]byte{'Q', 'd'}, data[2:]...), OtherRecord},
	} {
		if got := recordKind(c.k); got != c.want {
			t.Errorf("%s: %d, want %d", c.name, got, c.want)
		}
	}
}

// A record is its JSON header's length (4 bytes), the header, then inline bytes; one whose
// length does not fit is corrupt, one whose header fills it exactly has no inline bytes.
func TestRecordFraming(t *testing.T) {
	b := &Blob{Type: BlockBlob, Size: 3, inline: []byte("abc")}
	enc := b.encode()
	n := int(binary.BigEndian.Uint32(enc))
	if len(enc) != 4+n+3 || !bytes.Equal(enc[4+n:], []byte("abc")) || recordHeaderEnd(enc) != 4+n {
		t.Fatalf("framing: %q (header %d)", enc, n)
	}
	got, err := decodeBlob(enc)
	if err != nil || !bytes.Equal(got.inline, []byte("abc")) || got.Size != 3 {
		t.Fatalf("decode: %+v %v", got, err)
	}
	noInline := enc[:4+n]
	if got, err := decodeBlob(noInline); err != nil || got.inline != nil || recordHeaderEnd(noInline) != 4+n {
		t.Errorf("without inline bytes: %+v %v", got, err)
	}
	for _, bad := range [][]byte{nil, {0, 0, 0}, enc[:4+n-1], append([]byte{0, 0, 0, 2}, "{x"...)} {
		if _, err := decodeBlob(bad); err == nil {
			t.Errorf("%q decoded", bad)
		}
	}
	if got := recordHeaderEnd([]byte{0, 0, 0}); got != 0 {
		t.Errorf("header end of 3 bytes: %d", got)
	}
	if got := recordHeaderEnd(enc[:10]); got != 10 {
		t.Errorf("header end of a cut record: %d, want 10", got)
	}
	if got := recordHeaderEnd([]byte{0, 0, 0, 0}); got != 4 {
		t.Errorf("header end of an empty header: %d, want 4", got)
	}
}
