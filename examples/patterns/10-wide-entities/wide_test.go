package main

import (
	"context"
	"errors"
	"maps"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/tablo/tablo/examples/internal/tablotest"
)

func TestWideEntities(t *testing.T) {
	svc, rec := tablotest.Start(t).TableService(t, true)
	res, err := Run(context.Background(), svc, tablotest.Writer(t))
	if err != nil {
		t.Fatal(err)
	}
	// 365 properties do not fit one entity, as on Azure.
	var re *azcore.ResponseError
	if !errors.As(res.OneEntityErr, &re) || re.StatusCode != 400 || re.ErrorCode != "TooManyProperties" {
		t.Errorf("one wide entity: %v, want 400 TooManyProperties", res.OneEntityErr)
	}
	// Two entities written together hold the whole year, read back in one query.
	if res.Parts != 2 || !maps.Equal(res.Read, res.Written) || len(res.Read) != 365 {
		t.Errorf("read %d days from %d entities", len(res.Read), res.Parts)
	}
	p := rec.Plans()
	if len(p) != 1 || p[0].Kind != "row-range" || p[0].Scanned != 2 {
		t.Errorf("plans %v", p)
	}
}
