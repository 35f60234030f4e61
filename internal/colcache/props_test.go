package colcache

import "testing"

// TestMaxPropsKeepsTheMostRecent: past MaxProps requested properties, the least recently
// requested are dropped from the next build.
func TestMaxPropsKeepsTheMostRecent(t *testing.T) {
	f := newFixture(t, Options{MaxBytes: 16 << 20, MaxProps: 2})
	f.load(1, 10)
	if err := f.c.Build(1, []string{"Cat", "Name", "Timestamp"}); err != nil {
		t.Fatal(err)
	}
	if !f.ready(1, []string{"Name", "Timestamp"}) || f.ready(1, []string{"Cat"}) {
		t.Fatal("built columns are not the two most recently requested")
	}
	if err := f.c.Build(1, []string{"Cat"}); err != nil {
		t.Fatal(err)
	}
	if !f.ready(1, []string{"Cat", "Timestamp"}) || f.ready(1, []string{"Name"}) {
		t.Fatal("a property requested again did not replace the least recent one")
	}
}
