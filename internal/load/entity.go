package load

import (
	"fmt"
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
