package pebble

import "testing"

// TestCacheSize: the block cache is the size Options ask for, and the default when they
// leave it 0 or negative.
func TestCacheSize(t *testing.T) {
	for _, c := range []struct{ asked, want int64 }{{0, defaultCacheSize}, {-1, defaultCacheSize}, {1 << 20, 1 << 20}} {
		db, err := Open(Options{InMemory: true, CacheSize: c.asked})
		if err != nil {
			t.Fatal(err)
		}
		opts := db.opts()
		if got := opts.Cache.MaxSize(); got != c.want {
			t.Errorf("CacheSize %d: block cache of %d bytes, want %d", c.asked, got, c.want)
		}
		opts.Cache.Unref()
		db.Close()
	}
}
