package blob

import (
	"encoding/base64"
	"hash/crc64"
	"testing"
)

// The vectors of blob.md §12.1.
func TestCRC64Vectors(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"", "AAAAAAAAAAA="},
		{"hello, blob world\n", "BKTgoL2oTyw="},
	} {
		got := base64.StdEncoding.EncodeToString(CRC64Bytes(crc64.Checksum([]byte(c.in), CRC64Table)))
		if got != c.want {
			t.Errorf("crc64(%q) = %s, want %s", c.in, got, c.want)
		}
	}
}
