package entity

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"strings"
	"testing"
)

// randSelect returns nil (no $select) or a shuffled list mixing the entity's names, missing
// names and system properties.
func randSelect(rng *rand.Rand, e *Entity) []string {
	if rng.IntN(3) == 0 {
		return nil
	}
	sel := []string{}
	for _, p := range e.Props {
		if rng.IntN(2) == 0 {
			sel = append(sel, p.Name)
		}
	}
	for _, name := range []string{"PartitionKey", "RowKey", "Timestamp", "Missing", "p0_", "名"} {
		if rng.IntN(3) == 0 {
			sel = append(sel, name)
		}
	}
	rng.Shuffle(len(sel), func(i, j int) { sel[i], sel[j] = sel[j], sel[i] })
	return sel
}

func randOptions(rng *rand.Rand, e *Entity) EncodeOptions {
	o := EncodeOptions{
		Level:   []MetadataLevel{NoMetadata, MinimalMetadata, FullMetadata}[rng.IntN(3)],
		BaseURL: "http://127.0.0.1:10002/devstoreaccount1",
		Account: "devstoreaccount1",
		Table:   "Orders",
		Select:  randSelect(rng, e),
	}
	if rng.IntN(2) == 0 {
		o.Metadata = "http://127.0.0.1:10002/devstoreaccount1/$metadata#Orders/@Element"
	}
	return o
}

// viaEntity is the reference path: decode the stored form, then encode the Entity.
func viaEntity(dst, stored []byte, pk, rk string, o EncodeOptions) ([]byte, error) {
	e, err := DecodeBinary(stored, pk, rk)
	if err != nil {
		return dst, err
	}
	return AppendJSON(dst, e, o), nil
}

// TestAppendJSONRawMatchesAppendJSON: for random entities of every type and edge value, at
// every level and with random $select lists, both paths write identical bytes.
func TestAppendJSONRawMatchesAppendJSON(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	for i := range 3000 {
		e := randEntity(rng)
		o := randOptions(rng, e)
		stored := AppendBinary(nil, e)
		r, err := NewRaw(stored, e.PartitionKey, e.RowKey)
		if err != nil {
			t.Fatalf("case %d: NewRaw: %v", i, err)
		}
		prefix := []byte("prefix,")
		want, err := viaEntity(bytes.Clone(prefix), stored, e.PartitionKey, e.RowKey, o)
		if err != nil {
			t.Fatalf("case %d: DecodeBinary: %v", i, err)
		}
		got, err := AppendJSONRaw(bytes.Clone(prefix), r, o)
		if err != nil {
			t.Fatalf("case %d: AppendJSONRaw: %v", i, err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("case %d (level %v, select %q):\n got %s\nwant %s", i, o.Level, o.Select, got, want)
		}
	}
}

func TestAppendJSONRawCorrupt(t *testing.T) {
	e := &Entity{PartitionKey: "p", RowKey: "r", Timestamp: 1, Props: []Property{
		{Name: "A", Value: StringValue("hello")},
		{Name: "B", Value: BoolValue(true)},
	}}
	good := AppendBinary(nil, e)
	badBool := bytes.Clone(good)
	badBool[len(badBool)-1] = 2
	cases := map[string][]byte{
		"empty":     nil,
		"version":   append([]byte{9}, good[1:]...),
		"truncated": good[:len(good)-3],
		"trailing":  append(bytes.Clone(good), 0),
		"bad bool":  badBool,
	}
	for name, b := range cases {
		for _, sel := range [][]string{nil, {"A"}, {"Missing"}} {
			dst := []byte("keep")
			got, err := AppendJSONRaw(dst, Raw{b: b, pk: "p", rk: "r"}, EncodeOptions{Level: MinimalMetadata, Select: sel})
			if !errors.Is(err, ErrCorrupt) {
				t.Errorf("%s %q: err %v, want ErrCorrupt", name, sel, err)
			}
			if string(got) != "keep" {
				t.Errorf("%s %q: dst %q, want it unchanged", name, sel, got)
			}
		}
	}
}

// FuzzAppendJSONRaw: on any stored bytes and $select list, AppendJSONRaw fails exactly when
// DecodeBinary does and otherwise writes what AppendJSON writes for the decoded entity.
func FuzzAppendJSONRaw(f *testing.F) {
	rng := rand.New(rand.NewPCG(3, 5))
	for range 40 {
		e := randEntity(rng)
		if stored := AppendBinary(nil, e); len(stored) < 4096 {
			sel := strings.Join(randSelect(rng, e), ",")
			f.Add(stored, sel, uint8(rng.IntN(3)), rng.IntN(2) == 0)
		}
	}
	f.Fuzz(func(t *testing.T, stored []byte, selection string, level uint8, hasSelect bool) {
		o := EncodeOptions{
			Level:    MetadataLevel(level % 3),
			Metadata: "m",
			BaseURL:  "http://h/a",
			Account:  "a",
			Table:    "t",
		}
		if hasSelect {
			o.Select = strings.Split(selection, ",")
		}
		want, wantErr := viaEntity(nil, stored, "p k", "r/k", o)
		got, gotErr := AppendJSONRaw(nil, Raw{b: stored, pk: "p k", rk: "r/k"}, o)
		if (wantErr == nil) != (gotErr == nil) {
			t.Fatalf("DecodeBinary err %v, AppendJSONRaw err %v", wantErr, gotErr)
		}
		if gotErr != nil {
			if !errors.Is(gotErr, ErrCorrupt) || len(got) != 0 {
				t.Fatalf("err %v, output %q", gotErr, got)
			}
			return
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("\n got %s\nwant %s", got, want)
		}
	})
}
