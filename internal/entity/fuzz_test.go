package entity

import (
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tablo/tablo/internal/azerr"
)

// wireSampleBodies returns the JSON entity bodies of the SDK wire samples, if the spec
// checkout is present (it is outside the module, so the seeds are optional).
func wireSampleBodies(t testing.TB) []string {
	files, _ := filepath.Glob("../../../shared/spec/wire-samples/*/*.txt")
	var out []string
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		req, _, _ := strings.Cut(string(data), "\n=== response")
		if _, b, ok := strings.Cut(req, "\r\n\r\n"); ok && strings.HasPrefix(b, "{") {
			out = append(out, b)
		}
	}
	return out
}

// FuzzDecodeJSON: DecodeJSON never panics, fails only with Azure errors, and whatever it
// accepts survives encode (full and minimal metadata) → decode and binary → decode unchanged.
func FuzzDecodeJSON(f *testing.F) {
	for _, tc := range decodeCases(f) {
		if len(tc.body) < 4096 {
			f.Add([]byte(tc.body))
		}
	}
	for _, b := range wireSampleBodies(f) {
		f.Add([]byte(b))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		e, keys, err := DecodeJSON(body)
		if err != nil {
			if azerr.From(err).Code == azerr.InternalError {
				t.Fatalf("non-Azure error %v", err)
			}
			return
		}
		e.Timestamp = 42
		for _, level := range []MetadataLevel{FullMetadata, MinimalMetadata} {
			js := AppendJSON(nil, e, EncodeOptions{Level: level, Metadata: "m", BaseURL: "b", Account: "a", Table: "t"})
			again, keys2, err := DecodeJSON(js)
			if err != nil {
				t.Fatalf("%v: re-decode: %v\n%s", level, err, js)
			}
			again.Timestamp = 42
			if keys2 != both {
				t.Fatalf("keys %+v", keys2)
			}
			if !keys.PartitionKey || !keys.RowKey {
				// Missing keys are written as empty strings; compare the rest.
				again.PartitionKey, again.RowKey = e.PartitionKey, e.RowKey
			}
			if d := entityDiff(again, e); d != "" {
				t.Fatalf("%v: %s\n%s", level, d, js)
			}
		}
		back, err := DecodeBinary(AppendBinary(nil, e), e.PartitionKey, e.RowKey)
		if err != nil {
			t.Fatal(err)
		}
		if d := entityDiff(back, e); d != "" {
			t.Fatalf("binary: %s", d)
		}
	})
}

// FuzzDecodeBinary: DecodeBinary and Raw never panic on corrupt input, and an accepted value
// re-encodes to an equivalent entity that Raw reads the same way.
func FuzzDecodeBinary(f *testing.F) {
	rng := rand.New(rand.NewPCG(3, 4))
	for range 20 {
		e := randEntity(rng)
		if b := AppendBinary(nil, e); len(b) < 8192 {
			f.Add(b)
		}
	}
	f.Add([]byte{})
	f.Add([]byte{binaryVersion, 0, 0, 0, 0, 0, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		raw, rawErr := NewRaw(b, "p", "r")
		e, err := DecodeBinary(b, "p", "r")
		if rawErr == nil {
			raw.Get("A")
			raw.Get("Timestamp")
			_ = raw.Timestamp()
		}
		if err != nil {
			return
		}
		if rawErr != nil {
			t.Fatalf("DecodeBinary accepted what NewRaw refused: %v", rawErr)
		}
		again := AppendBinary(nil, e)
		e2, err := DecodeBinary(again, "p", "r")
		if err != nil {
			t.Fatal(err)
		}
		if d := entityDiff(e2, e); d != "" {
			t.Fatal(d)
		}
		for _, p := range e.Props {
			v, ok := raw.Get(p.Name)
			// With duplicate names (impossible from our writers) Raw finds the first one.
			if !ok || (!Equal(v, p.Value) && !hasDuplicateNames(e)) {
				t.Fatalf("Raw.Get(%q) = %s,%v want %s", p.Name, describe(v), ok, describe(p.Value))
			}
		}
		_ = AppendJSON(nil, e, EncodeOptions{Level: FullMetadata})
		if !bytes.Equal(again, AppendBinary(nil, e2)) {
			t.Fatal("encoding is not stable")
		}
	})
}

func hasDuplicateNames(e *Entity) bool {
	seen := map[string]bool{}
	for _, p := range e.Props {
		if seen[p.Name] {
			return true
		}
		seen[p.Name] = true
	}
	return false
}
