package colcache

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/tablo/tablo/internal/store"
)

// TestAwaitBuild: a scan that finds a build of its columns running waits for it and then finds
// them ready; it does not wait for a build of other columns, or for none, or past its deadline
// or context. (The build itself waits here for a writer to finish.)
func TestAwaitBuild(t *testing.T) {
	f := newFixture(t, Options{MaxBytes: 16 << 20, BuildAfter: 1})
	f.load(1, 100)
	ctx := context.Background()
	far := time.Now().Add(time.Minute)
	if f.c.AwaitBuild(ctx, 1, []string{"Cat"}, far) {
		t.Fatal("awaited a build that is not running")
	}

	// A writer holds the table's lock shared, so the build waits in its freeze.
	release := make(chan struct{})
	// Let the writer go however the test ends, so that the cache's Close (a cleanup that
	// runs after this one) does not wait forever on the build held up behind it.
	var releaseOnce sync.Once
	releaseWriter := func() { releaseOnce.Do(func() { close(release) }) }
	t.Cleanup(releaseWriter)
	writing := make(chan struct{})
	wrote := make(chan error, 1)
	go func() {
		wrote <- f.st.Update(ctx, []store.Lock{{Name: fmt.Sprint("table", 1), Shared: true}}, func(store.Txn) error {
			close(writing)
			<-release
			return nil
		})
	}()
	<-writing
	f.c.NoteScan(1, []string{"Cat"}, 1) // starts a build of Cat
	if f.c.AwaitBuild(ctx, 1, []string{"Name"}, far) {
		t.Fatal("awaited a build of other columns")
	}
	if f.c.AwaitBuild(ctx, 1, []string{"Cat"}, time.Now().Add(10*time.Millisecond)) {
		t.Fatal("a build held up by a writer ended")
	}
	canceled, cancel := context.WithCancel(ctx)
	cancel()
	if f.c.AwaitBuild(canceled, 1, []string{"Cat"}, far) {
		t.Fatal("awaited with a canceled context")
	}
	awaited := make(chan bool, 1)
	go func() { awaited <- f.c.AwaitBuild(ctx, 1, []string{"Cat"}, far) }()
	for !f.awaiting(1) { // the build cannot end before release: AwaitBuild must be waiting on it
		select {
		case ok := <-awaited:
			t.Fatalf("AwaitBuild returned %v while the build was held up", ok)
		case <-time.After(time.Millisecond):
		}
	}
	releaseWriter()
	if err := <-wrote; err != nil {
		t.Fatal(err)
	}
	if !<-awaited {
		t.Fatal("the build ended but AwaitBuild reported otherwise")
	}
	if !f.ready(1, []string{"Cat"}) {
		t.Fatal("not ready after the awaited build")
	}
}

// awaiting reports whether a scan waits in AwaitBuild on table id's running build.
func (f *fixture) awaiting(id uint64) bool {
	f.c.mu.Lock()
	defer f.c.mu.Unlock()
	ts := f.c.tables[id]
	return ts != nil && ts.awaiting > 0
}
