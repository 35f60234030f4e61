package table

import (
	"bytes"
	"fmt"
	"testing"
)

// TestRecentValuesBounded: the guesses stay within their byte budget, least recently used
// out first, and large values are not kept.
func TestRecentValuesBounded(t *testing.T) {
	const budget = 64 << 10
	c := newRecentValues(budget)
	val := bytes.Repeat([]byte("v"), 200)
	for i := range 1000 {
		c.put(fmt.Appendf(nil, "k%04d", i), val)
		if i == 10 {
			c.get([]byte("k0000")) // used: outlives its neighbours
		}
		if c.size > budget {
			t.Fatalf("after %d puts: %d bytes, budget %d", i+1, c.size, budget)
		}
	}
	if _, ok := c.get([]byte("k0999")); !ok {
		t.Fatal("the latest value is gone")
	}
	if _, ok := c.get([]byte("k0001")); ok {
		t.Fatal("the oldest value is still there")
	}
	c.put([]byte("big"), make([]byte, budget/32))
	if _, ok := c.get([]byte("big")); ok {
		t.Fatal("a value of 1/32 of the budget was kept")
	}
	c.put([]byte("k0999"), []byte("new"))
	if v, _ := c.get([]byte("k0999")); string(v) != "new" {
		t.Fatalf("replaced value = %q", v)
	}
	c.drop([]byte("k0999"))
	if _, ok := c.get([]byte("k0999")); ok {
		t.Fatal("dropped value still there")
	}
	var none *recentValues // off: every call is a no-op
	none.put([]byte("k"), val)
	if _, ok := none.get([]byte("k")); ok {
		t.Fatal("a nil cache remembered a value")
	}
	total := 0
	for _, e := range c.items {
		r := e.Value.(*recentEntry)
		total += len(r.key) + len(r.value) + recentOverhead
	}
	if total != c.size {
		t.Fatalf("accounted size %d, entries hold %d", c.size, total)
	}
}
