package load

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
)

// Preloaded data layouts. Spread puts preloadPerPartition consecutive entities in each partition,
// so one 100-entity transaction fills exactly one partition; the page layout puts every entity in
// one partition.
const (
	preloadPerPartition = 100
	pagePartition       = "page"
	categories          = 100 // Category takes values c00..c99, so a Category filter matches 1%
	filterCategory      = "c07"
)

// spreadKey returns the keys of preloaded entity i in the spread layout.
func spreadKey(i int) (pk, rk string) {
	return spreadPartition(i / preloadPerPartition), rowKey(i)
}

// pageKey returns the keys of preloaded entity i in the one-partition layout.
func pageKey(i int) (pk, rk string) { return pagePartition, rowKey(i) }

// keyFunc returns the key function of a preloaded layout.
func keyFunc(l layout) func(i int) (pk, rk string) {
	if l == layoutPage {
		return pageKey
	}
	return spreadKey
}

func spreadPartition(p int) string { return fmt.Sprintf("p%05d", p) }

func rowKey(i int) string { return fmt.Sprintf("r%08d", i) }

// entityJSON renders a benchmark entity: its keys, a Category (n mod 100), an Int32 N and a Data
// string that makes up the configured entity size.
func entityJSON(pk, rk string, n int, data string) []byte {
	b := make([]byte, 0, 96+len(pk)+len(rk)+len(data))
	b = append(b, `{"PartitionKey":`...)
	b = appendJSONString(b, pk)
	b = append(b, `,"RowKey":`...)
	b = appendJSONString(b, rk)
	b = append(b, `,"Category":"`...)
	b = append(b, category(n)...)
	b = append(b, `","N":`...)
	b = strconv.AppendInt(b, int64(n%(1<<31)), 10)
	b = append(b, `,"Data":`...)
	b = appendJSONString(b, data)
	return append(b, '}')
}

func category(n int) string { return fmt.Sprintf("c%02d", n%categories) }

// payload returns the Data property for a given entity size: printable ASCII, so its JSON and
// its UTF-16 length (what Azure limits) are both exactly size.
func payload(size int) string {
	const alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	var b strings.Builder
	b.Grow(size)
	for i := range size {
		b.WriteByte(alphabet[(i*7+i/len(alphabet))%len(alphabet)])
	}
	return b.String()
}

// uniquePayload returns entity n's own Data of the given size: characters of a 64-letter
// alphabet drawn from a generator seeded with n. No two entities share it and block compression
// gets almost nothing out of it, so on-disk sizes are those of real data rather than of one
// repeated string. Like payload, its JSON and UTF-16 lengths are both exactly size.
func uniquePayload(size, n int) string {
	const alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_"
	src := rand.NewPCG(uint64(n), 0x7ab10)
	b := make([]byte, size)
	var bits uint64
	left := 0
	for i := range b {
		if left == 0 {
			bits, left = src.Uint64(), 10 // ten 6-bit draws per 64-bit word
		}
		b[i] = alphabet[bits&63]
		bits >>= 6
		left--
	}
	return string(b)
}
