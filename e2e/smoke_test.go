package e2e

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
)

func TestSmokeEntityLifecycle(t *testing.T) {
	ts := startServer(t)
	tc := ts.newTable(t)
	e := aztables.EDMEntity{
		Entity: aztables.Entity{PartitionKey: "p1", RowKey: "r1"},
		Properties: map[string]any{
			"Name": "x", "Age": int32(23), "Big": aztables.EDMInt64(1 << 60),
		},
	}
	b, _ := json.Marshal(e)
	if _, err := tc.AddEntity(ctx, b, nil); err != nil {
		t.Fatal(err)
	}
	got, err := tc.GetEntity(ctx, "p1", "r1", nil)
	if err != nil {
		t.Fatal(err)
	}
	var back aztables.EDMEntity
	if err := json.Unmarshal(got.Value, &back); err != nil {
		t.Fatal(err)
	}
	if back.Properties["Big"] != aztables.EDMInt64(1<<60) || back.Properties["Name"] != "x" {
		t.Fatalf("round trip: %#v", back.Properties)
	}
	_, err = tc.AddEntity(ctx, b, nil)
	var re *azcore.ResponseError
	if !errors.As(err, &re) || re.StatusCode != 409 || re.ErrorCode != "EntityAlreadyExists" {
		t.Fatalf("second insert: %v", err)
	}
}
