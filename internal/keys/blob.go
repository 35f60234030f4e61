package keys

import (
	"bytes"
	"encoding/binary"
	"strings"
)

// Blob service layout. Containers get a numeric id from a counter, and everything a
// container holds lives under 'B' 'd' | id, so Delete Container is one range delete and a
// re-created container is new and empty.
//
//	'B' 'c' | account | 0x00 | name        container catalog → container record
//	'B' 's' | account | 0x00 | name        per-account blob settings (service properties)
//	'B' 'n'                                 container id counter
//	'B' 'd' | id(8) | 'b' | name | 0x00 | kind [| snapshot(8)]   blob record (kind 1 snapshot, 2 base)
//	'B' 'd' | id(8) | 'u' | name | 0x00 | block id               uncommitted block
//
// Blob names are compared byte-wise (UTF-8 code-point order, as Azure lists them) and may
// not contain NUL, so 0x00 ends a name: "a" sorts with its snapshots before "a!".

// BlobCatalog is a container's catalog key.
func BlobCatalog(account, name string) []byte {
	b := make([]byte, 0, 3+len(account)+len(name))
	b = append(b, TagBlob, 'c')
	b = append(b, account...)
	b = append(b, 0)
	return append(b, name...)
}

// BlobSetting is a per-account Blob service document.
func BlobSetting(account, name string) []byte {
	b := []byte{TagBlob, 's'}
	b = append(b, account...)
	b = append(b, 0)
	return append(b, name...)
}

// BlobContainerCounter holds the last container id handed out.
func BlobContainerCounter() []byte { return []byte{TagBlob, 'n'} }

// BlobContainerData is the prefix of everything container id holds.
func BlobContainerData(id uint64) []byte {
	return binary.BigEndian.AppendUint64([]byte{TagBlob, 'd'}, id)
}

// BlobPrefix is the prefix of the blob records of container id whose names start with
// namePrefix.
func BlobPrefix(id uint64, namePrefix string) []byte {
	return append(append(BlobContainerData(id), 'b'), namePrefix...)
}

// Blob kinds within one name: snapshots (oldest first) before the base blob.
const (
	BlobKindSnapshot = 1
	BlobKindBase     = 2
)

// Blob is the key of a blob (snapshot 0) or of one of its snapshots.
func Blob(id uint64, name string, snapshot int64) []byte {
	b := append(BlobPrefix(id, name), 0)
	if snapshot == 0 {
		return append(b, BlobKindBase)
	}
	return binary.BigEndian.AppendUint64(append(b, BlobKindSnapshot), uint64(snapshot))
}

// BlobVersions is the prefix of a blob's record and its snapshots' records.
func BlobVersions(id uint64, name string) []byte { return append(BlobPrefix(id, name), 0) }

// DecodeBlob splits a blob key of container id into name and snapshot (0: base). Names
// hold no NUL, so the first 0x00 ends the name; the kind byte after it says whether an
// 8-byte snapshot time follows (which may hold any bytes, 0x00 included).
func DecodeBlob(id uint64, key []byte) (name string, snapshot int64, err error) {
	rest, ok := bytes.CutPrefix(key, BlobPrefix(id, ""))
	i := bytes.IndexByte(rest, 0)
	if !ok || i < 0 {
		return "", 0, ErrCorrupt
	}
	switch tail := rest[i+1:]; {
	case len(tail) == 1 && tail[0] == BlobKindBase:
		return string(rest[:i]), 0, nil
	case len(tail) == 9 && tail[0] == BlobKindSnapshot:
		return string(rest[:i]), int64(binary.BigEndian.Uint64(tail[1:])), nil
	}
	return "", 0, ErrCorrupt
}

// BlobBlockPrefix is the prefix of the uncommitted blocks of a blob ("" name and all:
// false gives the prefix of every uncommitted block in the container).
func BlobBlockPrefix(id uint64, name string, all bool) []byte {
	b := append(append(BlobContainerData(id), 'u'), name...)
	if all {
		return b
	}
	return append(b, 0)
}

// BlobBlock is an uncommitted block's key.
func BlobBlock(id uint64, name, blockID string) []byte {
	return append(BlobBlockPrefix(id, name, false), blockID...)
}

// DecodeBlobBlock splits an uncommitted block key of container id into blob name and block
// id.
func DecodeBlobBlock(id uint64, key []byte) (name, blockID string, err error) {
	rest, ok := bytes.CutPrefix(key, BlobBlockPrefix(id, "", true))
	name, blockID, found := strings.Cut(string(rest), "\x00")
	if !ok || !found {
		return "", "", ErrCorrupt
	}
	return name, blockID, nil
}
