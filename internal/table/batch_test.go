package table

import (
	"context"
	"errors"
	"testing"

	"github.com/tablo/tablo/internal/azerr"
	"github.com/tablo/tablo/internal/entity"
)

// TestBatchReportsLowestFailingIndex: a batch's ops are read in key order, but the failure
// reported is the first in request order, as Azure reports it, and nothing is written.
func TestBatchReportsLowestFailingIndex(t *testing.T) {
	ctx := context.Background()
	svc, _ := newService(t)
	if _, err := svc.CreateTable(ctx, testAccount, "lowest"); err != nil {
		t.Fatal(err)
	}
	ent := func(rk string) *entity.Entity {
		return &entity.Entity{PartitionKey: "p", RowKey: rk, Props: []entity.Property{{Name: "V", Value: entity.Int32Value(1)}}}
	}
	for _, rk := range []string{"b", "y"} {
		if _, err := svc.Batch(ctx, testAccount, "lowest", []Op{{Kind: Insert, Entity: ent(rk)}}); err != nil {
			t.Fatal(err)
		}
	}
	cases := []struct {
		name string
		ops  []Op
		want int
		code azerr.Code
	}{
		{"later key fails first in order", []Op{
			{Kind: Insert, Entity: ent("m")},
			{Kind: Insert, Entity: ent("y")},                               // exists
			{Kind: Replace, IfMatch: IfMatch{Any: true}, Entity: ent("a")}, // missing, lower key
		}, 1, azerr.EntityAlreadyExists},
		{"lower key fails first in order", []Op{
			{Kind: Delete, IfMatch: IfMatch{Any: true}, Entity: ent("c")}, // missing
			{Kind: Insert, Entity: ent("b")},                              // exists, lower key
		}, 0, azerr.ResourceNotFound},
	}
	for _, c := range cases {
		_, err := svc.Batch(ctx, testAccount, "lowest", c.ops)
		var be *BatchError
		if !errors.As(err, &be) || be.Index != c.want || !azerr.Is(be.Err, c.code) {
			t.Errorf("%s: got %v, want index %d %s", c.name, err, c.want, c.code)
		}
	}
	if _, err := svc.GetEntity(ctx, testAccount, "lowest", "p", "m"); !azerr.Is(err, azerr.ResourceNotFound) {
		t.Errorf("a failed batch wrote an entity: %v", err)
	}
}
