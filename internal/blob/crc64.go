package blob

import "hash/crc64"

// CRC64Table is Azure Storage's CRC-64: reflected polynomial 0x9A6C9329AC4BC9B5, initial
// value and final XOR all ones (what hash/crc64 computes), sent as 8 little-endian bytes.
var CRC64Table = crc64.MakeTable(0x9A6C9329AC4BC9B5)

// CRC64Bytes is the wire form of a CRC-64 value (8 bytes, little-endian).
func CRC64Bytes(v uint64) []byte {
	b := make([]byte, 8)
	for i := range b {
		b[i] = byte(v >> (8 * i))
	}
	return b
}
