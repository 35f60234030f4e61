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

// TestEvictsTheOldestBuild: with no reads in between, the table built first is the least
// recently used one, evicted when a third does not fit beside the other two.
func TestEvictsTheOldestBuild(t *testing.T) {
	probe := newFixture(t, Options{MaxBytes: 16 << 20})
	probe.load(1, 100)
	if err := probe.c.Build(1, []string{"Cat"}); err != nil {
		t.Fatal(err)
	}
	size := probe.c.Stats().Bytes
	f := newFixture(t, Options{MaxBytes: 5 * size / 2})
	for id := uint64(1); id <= 3; id++ {
		f.load(id, 100)
		if err := f.c.Build(id, []string{"Cat"}); err != nil {
			t.Fatal(err)
		}
	}
	if f.ready(1, []string{"Cat"}) || !f.ready(2, []string{"Cat"}) || !f.ready(3, []string{"Cat"}) {
		t.Fatalf("after three builds, tables 2 and 3 should remain: 1 %v, 2 %v, 3 %v",
			f.ready(1, []string{"Cat"}), f.ready(2, []string{"Cat"}), f.ready(3, []string{"Cat"}))
	}
	// Two tables that fill the budget exactly both stay.
	g := newFixture(t, Options{MaxBytes: 2 * size})
	for id := uint64(1); id <= 2; id++ {
		g.load(id, 100)
		if err := g.c.Build(id, []string{"Cat"}); err != nil {
			t.Fatal(err)
		}
	}
	if !g.ready(1, []string{"Cat"}) || !g.ready(2, []string{"Cat"}) {
		t.Fatal("a table was evicted although both fit the budget exactly")
	}
}
