package blob

import (
	"bytes"
	"context"
	"crypto/md5"
	"hash/crc64"
	"io"
	"testing"

	"github.com/tablo/tablo/internal/azerr"
)

// A body's checksums are checked against the bytes, inline and streamed to an extent: a
// right CRC-64 or MD5 is accepted (and stored or echoed), a wrong one refused with its code,
// and a refused body leaves no extent and no hold behind.
func TestWriteVerifiesChecksums(t *testing.T) {
	s, st := openService(t, "", nil)
	ctx := context.Background()
	if _, err := s.CreateContainer(ctx, "a", "ccc", "", nil); err != nil {
		t.Fatal(err)
	}
	r := Ref{Account: "a", Container: "ccc", Name: "b"}
	for _, size := range []int{0, 1, 100, inlineMax, inlineMax + 1, copyChunk + 7} {
		data := bytes.Repeat([]byte("0123456789abcdef"), size/16+1)[:size]
		crc := CRC64Bytes(crc64.Checksum(data, CRC64Table))
		sum := md5.Sum(data)
		badCRC := append([]byte(nil), crc...)
		badCRC[0] ^= 1
		badCRC2 := append([]byte(nil), crc...)
		badCRC2[7] ^= 0x80
		badMD5 := append([]byte(nil), sum[:]...)
		badMD5[15] ^= 1
		for _, c := range []struct {
			name     string
			md5, crc []byte
			want     azerr.Code
		}{
			{"right CRC-64", nil, crc, ""},
			{"right MD5", sum[:], nil, ""},
			{"both right", sum[:], crc, ""},
			{"CRC-64 wrong in its first byte", nil, badCRC, azerr.CRC64Mismatch},
			{"CRC-64 wrong in its last byte", nil, badCRC2, azerr.CRC64Mismatch},
			{"MD5 wrong", badMD5, nil, azerr.MD5Mismatch},
			{"MD5 wrong, CRC-64 right", badMD5, crc, azerr.MD5Mismatch},
		} {
			b := body(data)
			b.MD5, b.CRC64 = c.md5, c.crc
			got, err := s.Put(ctx, r, PutRequest{Type: BlockBlob, Body: b})
			wantCode(t, "Put Blob, "+c.name, err, c.want)
			if err == nil && (got.Size != int64(size) || !bytes.Equal(got.Props.ContentMD5, sum[:]) || !bytes.Equal(readAll(t, s, r), data)) {
				t.Errorf("Put Blob of %d bytes, %s: size %d, MD5 %x", size, c.name, got.Size, got.Props.ContentMD5)
			}
			b = body(data)
			b.MD5, b.CRC64 = c.md5, c.crc
			res, err := s.PutBlock(ctx, r, "QUFB", b, Cond{})
			wantCode(t, "Put Block, "+c.name, err, c.want)
			if err == nil && c.md5 != nil && !bytes.Equal(res.MD5, sum[:]) {
				t.Errorf("Put Block of %d bytes, %s: MD5 %x", size, c.name, res.MD5)
			}
			if err == nil && c.md5 == nil && !bytes.Equal(res.CRC64, crc) {
				t.Errorf("Put Block of %d bytes, %s: CRC-64 %x, want %x", size, c.name, res.CRC64, crc)
			}
		}
	}
	if len(s.gc.held) != 0 {
		t.Errorf("holds left after the writes: %v", s.gc.held)
	}
	if _, err := s.Put(ctx, r, PutRequest{Type: BlockBlob}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.PutBlockList(ctx, r, nil, PutRequest{}); err != nil {
		t.Fatal(err)
	}
	sweep2(t, s)
	if n, _ := countExtents(t, st); n != 0 {
		t.Errorf("%d extents left after refused bodies, overwrites and sweeps", n)
	}
}

// A whole blob of at most inlineMax bytes is kept in its record; one byte more goes to an
// extent; a body of unknown length is streamed whatever its size. A body longer than its
// Content-Length is cut there, a shorter one refused.
func TestWriteInlineLimitAndLengths(t *testing.T) {
	s, st := openService(t, "", nil)
	ctx := context.Background()
	if _, err := s.CreateContainer(ctx, "a", "ccc", "", nil); err != nil {
		t.Fatal(err)
	}
	data := bytes.Repeat([]byte("z"), inlineMax+10)
	for i, c := range []struct {
		name    string
		b       Body
		size    int
		extents int
	}{
		{"exactly the inline limit", Body{R: bytes.NewReader(data[:inlineMax]), Size: inlineMax}, inlineMax, 0},
		{"one byte more", Body{R: bytes.NewReader(data[:inlineMax+1]), Size: inlineMax + 1}, inlineMax + 1, 1},
		{"unknown length, small", Body{R: bytes.NewReader(data[:10]), Size: -1}, 10, 1},
		{"longer than its length, inline", Body{R: bytes.NewReader(data), Size: 5}, 5, 0},
		{"longer than its length, streamed", Body{R: bytes.NewReader(data), Size: inlineMax + 2}, inlineMax + 2, 1},
	} {
		r := Ref{Account: "a", Container: "ccc", Name: "b" + string(rune('0'+i))}
		before, _ := countExtents(t, st)
		got, err := s.Put(ctx, r, PutRequest{Type: BlockBlob, Body: c.b})
		if err != nil || got.Size != int64(c.size) {
			t.Fatalf("%s: %v, size %d want %d", c.name, err, got.Size, c.size)
		}
		if after, _ := countExtents(t, st); after-before != c.extents {
			t.Errorf("%s: %d extents made, want %d", c.name, after-before, c.extents)
		}
		if !bytes.Equal(readAll(t, s, r), data[:c.size]) {
			t.Errorf("%s: read back differs", c.name)
		}
	}
	// a streamed body (a block) of length 0 reads nothing of what follows
	if _, err := s.PutBlock(ctx, Ref{Account: "a", Container: "ccc", Name: "empty"}, "QUFB", Body{R: bytes.NewReader(data[:5]), Size: 0}, Cond{}); err != nil {
		t.Errorf("empty block with bytes after it: %v", err)
	}
	for _, size := range []int64{inlineMax, inlineMax + 5} {
		short := Body{R: bytes.NewReader(data[:size-1]), Size: size}
		_, err := s.Put(ctx, Ref{Account: "a", Container: "ccc", Name: "short"}, PutRequest{Type: BlockBlob, Body: short})
		wantCode(t, "short body", err, azerr.InvalidInput)
		_, err = s.PutBlock(ctx, Ref{Account: "a", Container: "ccc", Name: "short"}, "QUFB", Body{R: bytes.NewReader(data[:size-1]), Size: size}, Cond{})
		wantCode(t, "short block", err, azerr.InvalidInput)
	}
	if len(s.gc.held) != 0 {
		t.Errorf("holds left: %v", s.gc.held)
	}
	// a reader's other errors are passed on as they are
	_, err := s.Put(ctx, Ref{Account: "a", Container: "ccc", Name: "broken"}, PutRequest{Type: BlockBlob, Body: Body{R: io.MultiReader(bytes.NewReader(data[:100]), errReader{}), Size: inlineMax + 1}})
	if err != errBroken {
		t.Errorf("broken body: %v, want the reader's error", err)
	}
	_, err = s.Put(ctx, Ref{Account: "a", Container: "ccc", Name: "broken"}, PutRequest{Type: BlockBlob, Body: Body{R: errReader{}, Size: 10}})
	if err != errBroken {
		t.Errorf("broken small body: %v, want the reader's error", err)
	}
}

type errReader struct{}

var errBroken = io.ErrClosedPipe

func (errReader) Read([]byte) (int, error) { return 0, errBroken }

// The wire form of a CRC-64 is its 8 bytes little-endian.
func TestCRC64WireForm(t *testing.T) {
	if got, want := CRC64Bytes(0x0102030405060708), []byte{8, 7, 6, 5, 4, 3, 2, 1}; !bytes.Equal(got, want) {
		t.Errorf("CRC64Bytes = %x, want %x", got, want)
	}
	h := crc64.New(CRC64Table)
	h.Write([]byte("hello"))
	if got, want := crcWire(h.Sum(nil)), CRC64Bytes(h.Sum64()); !bytes.Equal(got, want) {
		t.Errorf("crcWire = %x, want %x", got, want)
	}
}
