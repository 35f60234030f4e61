package table

import (
	"bytes"
	"context"
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/tablo/tablo/internal/azerr"
	"github.com/tablo/tablo/internal/entity"
	"github.com/tablo/tablo/internal/keys"
)

// keyBytes mixes the characters whose bytes the key encoding escapes (0x00, 0xEE, 0xEF)
// with other UTF-8 (keys are valid UTF-8, so 0xF5, 0xF6 and 0xFF never occur in them).
var keyBytes = []string{"a", "Z", "\x00", "\u00e9", "\uee00", "\uefff", "\U0001F600", "/"}

func randEncKey(rng *rand.Rand) string {
	var b []byte
	for range rng.IntN(10) {
		b = append(b, keyBytes[rng.IntN(len(keyBytes))]...)
	}
	return string(b)
}

// TestDecodeEntityKeyMatchesKeys: the allocation-free decoder agrees with keys.DecodeEntity,
// also when its buffer is reused from a longer key.
func TestDecodeEntityKeyMatchesKeys(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var buf []byte
	for range 5000 {
		pk, rk := randEncKey(rng), randEncKey(rng)
		var pkGot, rkGot string
		var err error
		pkGot, rkGot, buf, err = decodeEntityKey(buf, keys.Entity(7, pk, rk))
		if err != nil || pkGot != pk || rkGot != rk {
			t.Fatalf("decodeEntityKey(%q, %q) = %q, %q, %v", pk, rk, pkGot, rkGot, err)
		}
	}
}

// FuzzDecodeEntityKey: on any bytes after a valid header, decodeEntityKey fails exactly when
// keys.DecodeEntity does and otherwise returns the same keys.
func FuzzDecodeEntityKey(f *testing.F) {
	f.Add([]byte("p\x00\x01r\x00\x01"))
	f.Add([]byte("\x00\xffp\xf5\x00\x01\x00\x01"))
	f.Add([]byte("p\x00\x01r"))
	f.Fuzz(func(t *testing.T, tail []byte) {
		key := append(keys.TablePrefix(3), tail...)
		_, pk, rk, wantErr := keys.DecodeEntity(key)
		pkGot, rkGot, _, err := decodeEntityKey(nil, key)
		if (err == nil) != (wantErr == nil) {
			t.Fatalf("err %v, keys.DecodeEntity err %v", err, wantErr)
		}
		if err == nil && (pkGot != pk || rkGot != rk) {
			t.Fatalf("got %q/%q, want %q/%q", pkGot, rkGot, pk, rk)
		}
	})
}

// TestQueryVisitError: an error from visit ends the query and is returned.
func TestQueryVisitError(t *testing.T) {
	svc, _ := newService(t)
	ctx := context.Background()
	if _, err := svc.CreateTable(ctx, testAccount, "visiterr"); err != nil {
		t.Fatal(err)
	}
	for _, rk := range []string{"1", "2"} {
		e := &entity.Entity{PartitionKey: "p", RowKey: rk}
		if _, err := svc.Batch(ctx, testAccount, "visiterr", []Op{{Kind: Insert, Entity: e}}); err != nil {
			t.Fatal(err)
		}
	}
	boom := errors.New("boom")
	calls := 0
	_, err := svc.QueryEntities(ctx, testAccount, "visiterr", Query{}, func(r entity.Raw) (bool, error) {
		calls++
		return true, boom
	})
	if !errors.Is(err, boom) || calls != 1 {
		t.Fatalf("err %v after %d calls, want boom after 1", err, calls)
	}
}

// TestQueryRawKeysPerEntity: each visited Raw carries its own keys while it is visited (the
// key buffer is reused between entities).
func TestQueryRawKeysPerEntity(t *testing.T) {
	svc, _ := newService(t)
	ctx := context.Background()
	if _, err := svc.CreateTable(ctx, testAccount, "rawkeys"); err != nil {
		t.Fatal(err)
	}
	want := []string{"\x00b", "a", "z", "\uee01long row key"} // key order
	for _, rk := range want {
		e := &entity.Entity{PartitionKey: "p\uef00", RowKey: rk}
		if _, err := svc.Batch(ctx, testAccount, "rawkeys", []Op{{Kind: Insert, Entity: e}}); err != nil {
			t.Fatal(err)
		}
	}
	var got [][]byte
	_, err := svc.QueryEntities(ctx, testAccount, "rawkeys", Query{}, func(r entity.Raw) (bool, error) {
		if r.PartitionKey() != "p\uef00" {
			t.Errorf("PartitionKey %q", r.PartitionKey())
		}
		got = append(got, []byte(r.RowKey()))
		return true, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("got %d entities, want %d", len(got), len(want))
	}
	for i := range want {
		if !bytes.Equal(got[i], []byte(want[i])) {
			t.Errorf("RowKey %d = %q, want %q", i, got[i], want[i])
		}
	}
}

// TestGetEntityRaw: the point read's stored form decodes to what GetEntity returns.
func TestGetEntityRaw(t *testing.T) {
	svc, _ := newService(t)
	ctx := context.Background()
	if _, err := svc.CreateTable(ctx, testAccount, "getraw"); err != nil {
		t.Fatal(err)
	}
	e := &entity.Entity{PartitionKey: "p", RowKey: "r", Props: []entity.Property{
		{Name: "N", Value: entity.Int64Value(-5)},
		{Name: "S", Value: entity.StringValue("x😀")},
	}}
	if _, err := svc.Batch(ctx, testAccount, "getraw", []Op{{Kind: Insert, Entity: e}}); err != nil {
		t.Fatal(err)
	}
	want, err := svc.GetEntity(ctx, testAccount, "getraw", "p", "r")
	if err != nil {
		t.Fatal(err)
	}
	raw, err := svc.GetEntityRaw(ctx, testAccount, "getraw", "p", "r")
	if err != nil {
		t.Fatal(err)
	}
	got, err := raw.Decode()
	if err != nil {
		t.Fatal(err)
	}
	o := entity.EncodeOptions{Level: entity.FullMetadata, BaseURL: "http://h/a", Account: "a", Table: "getraw"}
	if a, b := entity.AppendJSON(nil, got, o), entity.AppendJSON(nil, want, o); !bytes.Equal(a, b) {
		t.Fatalf("got %s\nwant %s", a, b)
	}
	if _, err := svc.GetEntityRaw(ctx, testAccount, "getraw", "p", "missing"); !azerr.Is(err, azerr.ResourceNotFound) {
		t.Fatalf("missing entity: %v", err)
	}
	if _, err := svc.GetEntityRaw(ctx, testAccount, "nope", "p", "r"); !azerr.Is(err, azerr.TableNotFound) {
		t.Fatalf("missing table: %v", err)
	}
}
