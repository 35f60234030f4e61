package e2e

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
)

// typedStrings is an entity body whose Boolean, Int32 and Double values arrive as JSON
// strings with type annotations, as az CLI sends them.
func typedStrings(pk, rk, flag, n, d string) []byte {
	return fmt.Appendf(nil, `{"PartitionKey":%q,"RowKey":%q,"Flag":%q,"Flag@odata.type":"Edm.Boolean","N":%q,"N@odata.type":"Edm.Int32","D":%q,"D@odata.type":"Edm.Double"}`, pk, rk, flag, n, d)
}

// Azure accepts a typed value sent as a string that parses as its type, and stores the
// typed value: reading it back gives a JSON boolean / number, and filters compare it as that
// type. Insert, the four update modes and batch sub-requests all decode bodies alike.
func TestTypedStringValues(t *testing.T) {
	ts := startServer(t)
	tc := ts.newTable(t)

	write := map[string]func(rk string, body []byte) error{
		"insert": func(_ string, b []byte) error { _, err := tc.AddEntity(ctx, b, nil); return err },
		"upsert-replace": func(_ string, b []byte) error {
			_, err := tc.UpsertEntity(ctx, b, &aztables.UpsertEntityOptions{UpdateMode: aztables.UpdateModeReplace})
			return err
		},
		"upsert-merge": func(_ string, b []byte) error {
			_, err := tc.UpsertEntity(ctx, b, &aztables.UpsertEntityOptions{UpdateMode: aztables.UpdateModeMerge})
			return err
		},
		"update-replace": func(rk string, b []byte) error {
			mustAdd(t, tc, "p", rk, 0)
			_, err := tc.UpdateEntity(ctx, b, &aztables.UpdateEntityOptions{UpdateMode: aztables.UpdateModeReplace, IfMatch: to.Ptr(azcore.ETagAny)})
			return err
		},
		"update-merge": func(rk string, b []byte) error {
			mustAdd(t, tc, "p", rk, 0)
			_, err := tc.UpdateEntity(ctx, b, &aztables.UpdateEntityOptions{UpdateMode: aztables.UpdateModeMerge, IfMatch: to.Ptr(azcore.ETagAny)})
			return err
		},
		"batch": func(_ string, b []byte) error {
			_, err := tc.SubmitTransaction(ctx, []aztables.TransactionAction{{ActionType: aztables.TransactionTypeAdd, Entity: b}}, nil)
			return err
		},
	}
	for name, w := range write {
		t.Run(name, func(t *testing.T) {
			rk := name
			if err := w(rk, typedStrings("p", rk, "FALSE", "32", "1.5")); err != nil {
				t.Fatalf("write: %v", err)
			}
			resp, err := tc.GetEntity(ctx, "p", rk, nil)
			if err != nil {
				t.Fatal(err)
			}
			var got map[string]any
			if err := json.Unmarshal(resp.Value, &got); err != nil {
				t.Fatal(err)
			}
			if got["Flag"] != false || got["N"] != float64(32) || got["D"] != 1.5 {
				t.Errorf("read back %s, want Flag=false N=32 D=1.5 as JSON boolean and numbers", resp.Value)
			}
			// Filters compare the stored values as their types.
			f := fmt.Sprintf("RowKey eq '%s' and Flag eq false and N eq 32 and D eq 1.5", rk)
			if n := countFilter(t, tc, f); n != 1 {
				t.Errorf("%s matched %d entities, want 1", f, n)
			}
		})
	}

	t.Run("case-insensitive booleans", func(t *testing.T) {
		for i, s := range []string{"True", "false", "TRUE", "fAlSe"} {
			rk := fmt.Sprintf("b%d", i)
			if _, err := tc.AddEntity(ctx, typedStrings("p", rk, s, "1", "1"), nil); err != nil {
				t.Fatalf("%q: %v", s, err)
			}
		}
		if n := countFilter(t, tc, "Flag eq true and RowKey ge 'b' and RowKey lt 'c'"); n != 2 {
			t.Errorf("Flag eq true matched %d, want 2", n)
		}
	})

	t.Run("unparsable strings", func(t *testing.T) {
		for _, b := range [][]byte{
			typedStrings("p", "x1", "yes", "1", "1"),
			typedStrings("p", "x2", "true", "1.5", "1"),
			typedStrings("p", "x3", "true", "2147483648", "1"),
			typedStrings("p", "x4", "true", "1", "abc"),
		} {
			_, err := tc.AddEntity(ctx, b, nil)
			wantCode(t, err, 400, "InvalidInput")
			_, err = tc.SubmitTransaction(ctx, []aztables.TransactionAction{{ActionType: aztables.TransactionTypeAdd, Entity: b}}, nil)
			if err == nil {
				t.Errorf("batch insert of %s succeeded", b)
			}
		}
		if n := countFilter(t, tc, "RowKey ge 'x'"); n != 0 {
			t.Errorf("%d refused entities were written", n)
		}
	})
}

func countFilter(t testing.TB, tc *aztables.Client, filter string) int {
	t.Helper()
	p := tc.NewListEntitiesPager(&aztables.ListEntitiesOptions{Filter: &filter})
	n := 0
	for p.More() {
		page, err := p.NextPage(ctx)
		if err != nil {
			t.Fatalf("query %q: %v", filter, err)
		}
		n += len(page.Entities)
	}
	return n
}
