package blob

import (
	"context"
	"testing"
)

// TestContainerCacheNeverStale: the decoded-container cache answers only for the exact bytes
// it decoded, so every change (ACL, metadata, delete and recreate) is seen by the next read,
// and a caller changing its copy does not change what the next caller reads.
func TestContainerCacheNeverStale(t *testing.T) {
	ctx := context.Background()
	s, _ := openService(t, "", nil)
	if _, err := s.CreateContainer(ctx, "a", "cnt", "", nil); err != nil {
		t.Fatal(err)
	}
	first, err := s.GetContainer(ctx, "a", "cnt")
	if err != nil || first.Public != "" {
		t.Fatalf("%+v %v", first, err)
	}
	first.Public, first.Meta = "container", Meta{{"k", "v"}} // the caller's copy only
	if c, _ := s.GetContainer(ctx, "a", "cnt"); c.Public != "" || c.Meta != nil {
		t.Fatalf("a caller's change to its copy reached the next read: %+v", c)
	}
	if _, err := s.SetContainerACL(ctx, "a", "cnt", "blob", nil, Cond{}); err != nil {
		t.Fatal(err)
	}
	if c, _ := s.GetContainer(ctx, "a", "cnt"); c.Public != "blob" {
		t.Fatalf("after Set Container ACL: public %q", c.Public)
	}
	if _, err := s.SetContainerMetadata(ctx, "a", "cnt", Meta{{"x", "1"}}, Cond{}); err != nil {
		t.Fatal(err)
	}
	if c, _ := s.GetContainer(ctx, "a", "cnt"); len(c.Meta) != 1 || c.Meta[0] != [2]string{"x", "1"} {
		t.Fatalf("after Set Container Metadata: %v", c.Meta)
	}
	if err := s.DeleteContainer(ctx, "a", "cnt", Cond{}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.GetContainer(ctx, "a", "cnt"); err == nil {
		t.Fatal("a deleted container was still found")
	}
	again, err := s.CreateContainer(ctx, "a", "cnt", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	if c, _ := s.GetContainer(ctx, "a", "cnt"); c.ID != again.ID || c.ID == first.ID || c.Public != "" {
		t.Fatalf("recreated container read as %+v, want id %d", c, again.ID)
	}
}
