package blob

import (
	"encoding/binary"
	"encoding/json"
	"fmt"

	"github.com/tablo/tablo/internal/auth"
)

// Container is a container's record.
type Container struct {
	ID       uint64 `json:"id"`
	Name     string `json:"n"`
	Created  int64  `json:"c"` // ticks
	Modified int64  `json:"m"` // ticks; also the ETag
	Meta     Meta   `json:"md,omitempty"`
	// Public is "", "blob" or "container".
	Public string                  `json:"p,omitempty"`
	ACL    []auth.SignedIdentifier `json:"acl,omitempty"`
	Lease  Lease                   `json:"l"`
}

// ETag is the container's quoted ETag.
func (c *Container) ETag() string { return etagOf(c.Modified) }

// Block is one block of a committed blob: its id ("" for the single extent of a Put Blob)
// and where its bytes are.
type Block struct {
	ID   string `json:"i,omitempty"`
	Size int64  `json:"s"`
	Ext  uint64 `json:"e,omitempty"`
}

// Props are a blob's content properties (Set Blob Properties sets all of them at once).
type Props struct {
	ContentType        string `json:"ct,omitempty"`
	ContentEncoding    string `json:"ce,omitempty"`
	ContentLanguage    string `json:"cl,omitempty"`
	ContentDisposition string `json:"cd,omitempty"`
	CacheControl       string `json:"cc,omitempty"`
	ContentMD5         []byte `json:"md5,omitempty"`
}

// Copy is the copy state of a blob that was the destination of a copy.
type Copy struct {
	ID        string `json:"id"`
	Source    string `json:"src"`
	Completed int64  `json:"t"`
	Size      int64  `json:"n"`
}

// Blob types.
const (
	BlockBlob  = "BlockBlob"
	AppendBlob = "AppendBlob"
	PageBlob   = "PageBlob"
)

// Blob is a blob's record (base blob or snapshot).
type Blob struct {
	Name     string  `json:"-"`
	Snapshot int64   `json:"-"` // ticks of the snapshot, 0 for the base blob
	Type     string  `json:"t"`
	Size     int64   `json:"z"`
	Created  int64   `json:"c"`
	Modified int64   `json:"m"`
	Props    Props   `json:"p"`
	Meta     Meta    `json:"md,omitempty"`
	Tier     string  `json:"tier,omitempty"`
	Lease    Lease   `json:"l"`
	Blocks   []Block `json:"b,omitempty"`
	// Pages are a page blob's written runs (pages.go).
	Pages []Page `json:"pg,omitempty"`
	// Appends counts an append blob's committed blocks.
	Appends int   `json:"a,omitempty"`
	Copy    *Copy `json:"cp,omitempty"`
	// Snapshots counts the blob's snapshots (base blob only), for Delete's SnapshotsPresent.
	Snapshots int `json:"sn,omitempty"`
	// Tags are the blob index tags (tags.go).
	Tags Tags `json:"tg,omitempty"`
	// Seq is a page blob's sequence number.
	Seq int64 `json:"sq,omitempty"`
	// inline holds the bytes of a small blob, stored in the record itself.
	inline []byte
}

// ETag is the blob's quoted ETag.
func (b *Blob) ETag() string { return etagOf(b.Modified) }

// encodeRecord writes a JSON header, its length first, then raw inline bytes.
func encodeRecord(v any, inline []byte) []byte {
	j, err := json.Marshal(v)
	if err != nil {
		panic(err) // only plain fields
	}
	out := make([]byte, 4, 4+len(j)+len(inline))
	binary.BigEndian.PutUint32(out, uint32(len(j)))
	out = append(out, j...)
	return append(out, inline...)
}

func decodeRecord(b []byte, v any) (inline []byte, err error) {
	if len(b) < 4 || int(binary.BigEndian.Uint32(b)) > len(b)-4 {
		return nil, fmt.Errorf("blob: corrupt record")
	}
	n := int(binary.BigEndian.Uint32(b))
	if err := json.Unmarshal(b[4:4+n], v); err != nil {
		return nil, fmt.Errorf("blob: corrupt record: %w", err)
	}
	return b[4+n:], nil
}

// recordHeaderEnd is where a record's JSON header ends.
func recordHeaderEnd(b []byte) int {
	if len(b) < 4 {
		return 0
	}
	return min(len(b), 4+int(binary.BigEndian.Uint32(b)))
}

func decodeBlob(b []byte) (*Blob, error) {
	bl := &Blob{}
	in, err := decodeRecord(b, bl)
	if err != nil {
		return nil, err
	}
	if len(in) > 0 {
		bl.inline = append([]byte(nil), in...)
	}
	return bl, nil
}

func (b *Blob) encode() []byte { return encodeRecord(b, b.inline) }

// staged is an uncommitted block's record.
type staged struct {
	Size   int64  `json:"s"`
	Ext    uint64 `json:"e"`
	Staged int64  `json:"t"` // ticks
}
