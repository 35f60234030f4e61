// Package keys is the one order-preserving key encoding shared by every engine, and the one
// string order of the Table service.
//
// String order: Azure compares keys and string values ordinally by UTF-16 code unit (the
// service is a Windows/.NET system). That equals UTF-8 byte order except that code points
// U+E000..U+FFFF sort after supplementary characters (U+10000 and up, which are surrogate
// pairs 0xD800.. in UTF-16). CompareOrdinal implements that order, and the encoded key
// bytes compare byte-wise in exactly the same order, so engines can compare with memcmp
// (Pebble, PostgreSQL bytea, CockroachDB BYTES).
//
// Layout of an entity key:
//
//	'e' | tableID (8 bytes big-endian) | enc(PartitionKey) | enc(RowKey)
//
// enc(s) maps the UTF-8 lead bytes 0xEE and 0xEF (U+E000..U+FFFF) to 0xF5 and 0xF6 (bytes
// never used by UTF-8) so that they sort after 4-byte sequences, escapes 0x00 as 0x00 0xFF
// and ends with 0x00 0x01. Escaping keeps the encoding prefix-free for any string, so a
// PartitionKey that is a prefix of another always sorts first.
package keys

import (
	"bytes"
	"encoding/binary"
	"errors"
	"unicode/utf8"
)

// Namespace prefixes of the engine's key space. The Table service's families use the
// single bytes below (its layout predates the other services and stays as it is on disk);
// every Queue key starts with 'Q' and every Blob key with 'B', so services never collide.
const (
	// TagQueue and TagBlob lead every key of the Queue and Blob services.
	TagQueue = 'Q'
	TagBlob  = 'B'

	prefixEntity  = 'e'
	prefixTable   = 't' // catalog: 't' | account | 0x00 | lower(table name)
	prefixTableMD = 'a' // per-table metadata (ACL): 'a' | tableID | name
	prefixMeta    = 'm' // server metadata: 'm' | name
	prefixAccount = 's' // per-account service data: 's' | account | 0x00 | name
)

// ErrCorrupt reports an encoded key that this package did not produce.
var ErrCorrupt = errors.New("keys: corrupt key")

// CompareOrdinal compares a and b by UTF-16 code unit, as Azure orders keys and strings.
func CompareOrdinal(a, b string) int {
	n := min(len(a), len(b))
	i := 0
	for i < n && a[i] == b[i] {
		i++
	}
	if i == n {
		switch {
		case len(a) < len(b):
			return -1
		case len(a) > len(b):
			return 1
		}
		return 0
	}
	// Back up to the start of the rune that differs (both strings share the bytes before i).
	for i > 0 && !utf8.RuneStart(a[i]) {
		i--
	}
	ra, _ := utf8.DecodeRuneInString(a[i:])
	rb, _ := utf8.DecodeRuneInString(b[i:])
	ka, kb := utf16Key(ra), utf16Key(rb)
	switch {
	case ka < kb:
		return -1
	case ka > kb:
		return 1
	}
	// Same rune but different bytes can only happen with invalid UTF-8; fall back to bytes.
	return bytes.Compare([]byte(a[i:]), []byte(b[i:]))
}

// utf16Key maps a rune to a value whose order is the order of its UTF-16 encoding.
func utf16Key(r rune) uint32 {
	if r >= 0x10000 {
		// High surrogate first, then low surrogate.
		r -= 0x10000
		hi := 0xD800 + uint32(r>>10)
		lo := 0xDC00 + uint32(r&0x3FF)
		return hi<<16 | lo
	}
	return uint32(r) << 16
}

// AppendString appends the order-preserving, prefix-free encoding of s.
func AppendString(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch c {
		case 0x00:
			dst = append(dst, 0x00, 0xFF)
		case 0xEE:
			dst = append(dst, 0xF5)
		case 0xEF:
			dst = append(dst, 0xF6)
		default:
			dst = append(dst, c)
		}
	}
	return append(dst, 0x00, 0x01)
}

// DecodeString decodes one string encoded by AppendString from the front of b and returns it
// with the remaining bytes.
func DecodeString(b []byte) (string, []byte, error) {
	out, rest, err := AppendDecodedString(make([]byte, 0, len(b)), b)
	if err != nil {
		return "", nil, err
	}
	return string(out), rest, nil
}

// AppendDecodedString is DecodeString appending to dst instead of allocating: it decodes the
// string encoded at the front of b, appends it to dst and returns the bytes after it.
// Decoding never lengthens a string, so len(b) bytes of spare capacity always suffice.
func AppendDecodedString(dst, b []byte) (out, rest []byte, err error) {
	for i := 0; i < len(b); i++ {
		switch c := b[i]; c {
		case 0x00:
			if i+1 >= len(b) {
				return dst, nil, ErrCorrupt
			}
			switch b[i+1] {
			case 0x01:
				return dst, b[i+2:], nil
			case 0xFF:
				dst = append(dst, 0x00)
				i++
			default:
				return dst, nil, ErrCorrupt
			}
		case 0xEE, 0xEF:
			return dst, nil, ErrCorrupt // AppendString never writes these
		case 0xF5:
			dst = append(dst, 0xEE)
		case 0xF6:
			dst = append(dst, 0xEF)
		default:
			dst = append(dst, c)
		}
	}
	return dst, nil, ErrCorrupt
}

// TablePrefix returns the prefix shared by every entity key of the table.
func TablePrefix(tableID uint64) []byte {
	b := make([]byte, 9, 64)
	b[0] = prefixEntity
	binary.BigEndian.PutUint64(b[1:], tableID)
	return b
}

// TableEnd returns the exclusive upper bound of the table's entity keys.
func TableEnd(tableID uint64) []byte {
	return PrefixEnd(TablePrefix(tableID))
}

// PartitionPrefix returns the prefix shared by every entity key of one partition.
func PartitionPrefix(tableID uint64, pk string) []byte {
	return AppendString(TablePrefix(tableID), pk)
}

// Entity returns the key of one entity.
func Entity(tableID uint64, pk, rk string) []byte {
	return AppendString(PartitionPrefix(tableID, pk), rk)
}

// DecodeEntity splits an entity key into its parts.
func DecodeEntity(key []byte) (tableID uint64, pk, rk string, err error) {
	if len(key) < 9 || key[0] != prefixEntity {
		return 0, "", "", ErrCorrupt
	}
	tableID = binary.BigEndian.Uint64(key[1:9])
	pk, rest, err := DecodeString(key[9:])
	if err != nil {
		return 0, "", "", err
	}
	rk, rest, err = DecodeString(rest)
	if err != nil || len(rest) != 0 {
		return 0, "", "", ErrCorrupt
	}
	return tableID, pk, rk, nil
}

// PrefixEnd returns the smallest key greater than every key with the given prefix.
func PrefixEnd(prefix []byte) []byte {
	end := bytes.Clone(prefix)
	for i := len(end) - 1; i >= 0; i-- {
		if end[i] < 0xFF {
			end[i]++
			return end[:i+1]
		}
	}
	return nil // no upper bound
}

// Table returns the catalog key of a table; name must already be lower-cased.
func Table(account, lowerName string) []byte {
	b := make([]byte, 0, 2+len(account)+len(lowerName))
	b = append(b, prefixTable)
	b = append(b, account...)
	b = append(b, 0)
	return append(b, lowerName...)
}

// TableCatalogPrefix returns the prefix of every catalog key of an account.
func TableCatalogPrefix(account string) []byte {
	return Table(account, "")
}

// TableMeta returns the key of a named piece of per-table metadata (e.g. "acl").
func TableMeta(tableID uint64, name string) []byte {
	b := make([]byte, 9, 9+len(name))
	b[0] = prefixTableMD
	binary.BigEndian.PutUint64(b[1:], tableID)
	return append(b, name...)
}

// TableMetaPrefix returns the prefix of all metadata keys of a table.
func TableMetaPrefix(tableID uint64) []byte { return TableMeta(tableID, "") }

// Meta returns the key of a server-wide metadata record.
func Meta(name string) []byte { return append([]byte{prefixMeta}, name...) }

// Account returns the key of a named per-account record (e.g. "properties").
func Account(account, name string) []byte {
	b := make([]byte, 0, 2+len(account)+len(name))
	b = append(b, prefixAccount)
	b = append(b, account...)
	b = append(b, 0)
	return append(b, name...)
}

// Queue service keys. A queue's messages and its visibility index share the prefix
// QueueData(id), so Delete Queue (and Clear Messages) is one DeleteRange:
//
//	'Q' 'n'                                           the next queue id
//	'Q' 'c' account 0x00 name                         catalog: queue id, metadata, ACL
//	'Q' 's' account 0x00 name                         per-account settings (service properties)
//	'Q' 'd' queueID 'm' seq                           a message
//	'Q' 'd' queueID 'v' visibleAt seq                 visibility index: when it may be got
//	'Q' 'x' expiresAt queueID seq                     expiry index, across queues
//
// Numbers are 8 bytes big-endian; times are Unix nanoseconds (never negative here).

// QueueCatalog is the catalog key of a queue.
func QueueCatalog(account, name string) []byte {
	b := make([]byte, 0, 3+len(account)+len(name))
	b = append(b, TagQueue, 'c')
	b = append(b, account...)
	b = append(b, 0)
	return append(b, name...)
}

// QueueNextID is the key of the counter that numbers queues.
func QueueNextID() []byte { return []byte{TagQueue, 'n'} }

// QueueCatalogPrefix is the prefix of an account's queue catalog.
func QueueCatalogPrefix(account string) []byte { return QueueCatalog(account, "") }

// QueueSetting is the key of a named per-account Queue service record.
func QueueSetting(account, name string) []byte {
	b := make([]byte, 0, 3+len(account)+len(name))
	b = append(b, TagQueue, 's')
	b = append(b, account...)
	b = append(b, 0)
	return append(b, name...)
}

// QueueData is the prefix of everything a queue holds (messages and their index).
func QueueData(queueID uint64) []byte {
	b := make([]byte, 10, 28)
	b[0], b[1] = TagQueue, 'd'
	binary.BigEndian.PutUint64(b[2:], queueID)
	return b
}

// QueueMessagePrefix is the prefix of a queue's messages.
func QueueMessagePrefix(queueID uint64) []byte { return append(QueueData(queueID), 'm') }

// QueueMessage is the key of one message.
func QueueMessage(queueID, seq uint64) []byte {
	return binary.BigEndian.AppendUint64(QueueMessagePrefix(queueID), seq)
}

// QueueVisiblePrefix is the prefix of a queue's visibility index.
func QueueVisiblePrefix(queueID uint64) []byte { return append(QueueData(queueID), 'v') }

// QueueVisible is the visibility-index key of a message that may be got from visibleAt on.
func QueueVisible(queueID uint64, visibleAt int64, seq uint64) []byte {
	b := binary.BigEndian.AppendUint64(QueueVisiblePrefix(queueID), uint64(visibleAt))
	return binary.BigEndian.AppendUint64(b, seq)
}

// DecodeQueueVisible returns the time and sequence number of a visibility-index key.
func DecodeQueueVisible(key []byte) (visibleAt int64, seq uint64, err error) {
	if len(key) != 27 || key[0] != TagQueue || key[1] != 'd' || key[10] != 'v' {
		return 0, 0, ErrCorrupt
	}
	return int64(binary.BigEndian.Uint64(key[11:19])), binary.BigEndian.Uint64(key[19:]), nil
}

// QueueExpiryPrefix is the prefix of the expiry index of every queue.
func QueueExpiryPrefix() []byte { return []byte{TagQueue, 'x'} }

// QueueExpiry is the expiry-index key of a message expiring at expiresAt.
func QueueExpiry(expiresAt int64, queueID, seq uint64) []byte {
	b := make([]byte, 2, 26)
	b[0], b[1] = TagQueue, 'x'
	b = binary.BigEndian.AppendUint64(b, uint64(expiresAt))
	b = binary.BigEndian.AppendUint64(b, queueID)
	return binary.BigEndian.AppendUint64(b, seq)
}

// DecodeQueueExpiry splits an expiry-index key.
func DecodeQueueExpiry(key []byte) (expiresAt int64, queueID, seq uint64, err error) {
	if len(key) != 26 || key[0] != TagQueue || key[1] != 'x' {
		return 0, 0, 0, ErrCorrupt
	}
	return int64(binary.BigEndian.Uint64(key[2:10])), binary.BigEndian.Uint64(key[10:18]), binary.BigEndian.Uint64(key[18:]), nil
}
