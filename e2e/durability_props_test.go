package e2e

// Entities as canonical (EDM type, text) properties, so that what was written and what is
// read back compare exactly whatever JSON spelling the server chose.

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"
)

// pval is a property as (EDM type, canonical text), comparable across encodings.
type pval struct{ typ, val string }

type props map[string]pval

const dateLayout = "2006-01-02T15:04:05.0000000Z"

// marshalEntity writes pk, rk and ps as an annotated JSON entity.
func marshalEntity(pk, rk string, ps props) []byte {
	m := map[string]any{"PartitionKey": pk, "RowKey": rk}
	for name, v := range ps {
		switch v.typ {
		case "Edm.String":
			m[name] = v.val
		case "Edm.Boolean":
			m[name] = v.val == "true"
		case "Edm.Int32", "Edm.Double":
			m[name] = json.Number(v.val)
		default:
			m[name] = v.val
		}
		if v.typ != "Edm.String" && v.typ != "Edm.Boolean" && v.typ != "Edm.Int32" {
			m[name+"@odata.type"] = v.typ
		}
	}
	b, err := json.Marshal(m)
	if err != nil {
		panic(err) // only strings, numbers and bools: cannot fail
	}
	return b
}

// decodeEntity parses a minimal-metadata entity into its keys, ETag and canonical properties.
func decodeEntity(raw []byte) (pk, rk, etag string, ps props, err error) {
	var m map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err = dec.Decode(&m); err != nil {
		return
	}
	str := func(name string) string {
		var s string
		_ = json.Unmarshal(m[name], &s)
		return s
	}
	pk, rk, etag = str("PartitionKey"), str("RowKey"), str("odata.etag")
	ps = props{}
	for name, rawVal := range m {
		if strings.HasPrefix(name, "odata.") || strings.Contains(name, "@odata.") ||
			name == "PartitionKey" || name == "RowKey" || name == "Timestamp" {
			continue
		}
		typ := str(name + "@odata.type")
		v, cerr := canonical(typ, rawVal)
		if cerr != nil {
			return "", "", "", nil, fmt.Errorf("property %s: %w", name, cerr)
		}
		ps[name] = v
	}
	return
}

func canonical(typ string, raw json.RawMessage) (pval, error) {
	var s string
	isString := json.Unmarshal(raw, &s) == nil
	text := string(raw)
	if typ == "" {
		switch {
		case isString:
			return pval{"Edm.String", s}, nil
		case text == "true" || text == "false":
			return pval{"Edm.Boolean", text}, nil
		case strings.ContainsAny(text, ".eE"):
			typ = "Edm.Double"
		default:
			typ = "Edm.Int32"
		}
	}
	if isString {
		text = s
	}
	switch typ {
	case "Edm.String", "Edm.Boolean":
		return pval{typ, text}, nil
	case "Edm.Int32":
		n, err := strconv.ParseInt(text, 10, 32)
		return pval{typ, strconv.FormatInt(n, 10)}, err
	case "Edm.Int64":
		n, err := strconv.ParseInt(text, 10, 64)
		return pval{typ, strconv.FormatInt(n, 10)}, err
	case "Edm.Double":
		f, err := strconv.ParseFloat(text, 64)
		return pval{typ, strconv.FormatFloat(f, 'g', -1, 64)}, err
	case "Edm.DateTime":
		tm, err := time.Parse(time.RFC3339Nano, text)
		return pval{typ, tm.UTC().Format(dateLayout)}, err
	case "Edm.Binary":
		b, err := base64.StdEncoding.DecodeString(text)
		return pval{typ, base64.StdEncoding.EncodeToString(b)}, err
	case "Edm.Guid":
		return pval{typ, strings.ToLower(text)}, nil
	}
	return pval{}, fmt.Errorf("unknown type %q", typ)
}

var int64Extremes = []int64{math.MaxInt64, math.MinInt64, 0, -1, 1 << 53, -(1 << 53) - 1}
var doubleSamples = []float64{1.5, -0.1, 2, math.MaxFloat64, math.SmallestNonzeroFloat64, -1e-300, 1e21, 123456.789}
var dateExtremes = []time.Time{
	time.Date(1601, 1, 1, 0, 0, 0, 0, time.UTC),
	time.Date(9999, 12, 31, 23, 59, 59, 999999900, time.UTC),
	time.Date(1970, 1, 1, 0, 0, 0, 0, time.UTC),
}

// randomProps makes 1–7 properties of random types over a small fixed name set, so that
// merges overlap earlier properties and sometimes change their type.
func randomProps(r *rand.Rand, seq int64) props {
	ps := props{"Seq": {"Edm.Int64", strconv.FormatInt(seq, 10)}}
	for range 1 + r.IntN(6) {
		name := fmt.Sprintf("P%d", r.IntN(8))
		var v pval
		switch r.IntN(8) {
		case 0:
			v = pval{"Edm.String", fmt.Sprintf("s-%d-ü'\"%d", seq, r.IntN(1000))}
		case 1:
			v = pval{"Edm.Int32", strconv.FormatInt(int64(int32(r.Uint32())), 10)}
		case 2:
			n := int64Extremes[r.IntN(len(int64Extremes))]
			if r.IntN(2) == 0 {
				n = int64(r.Uint64())
			}
			v = pval{"Edm.Int64", strconv.FormatInt(n, 10)}
		case 3:
			f := doubleSamples[r.IntN(len(doubleSamples))]
			v = pval{"Edm.Double", strconv.FormatFloat(f, 'g', -1, 64)}
		case 4:
			tm := dateExtremes[r.IntN(len(dateExtremes))]
			if r.IntN(2) == 0 {
				tm = time.Unix(0, r.Int64N(4e18)).UTC().Truncate(100 * time.Nanosecond)
			}
			v = pval{"Edm.DateTime", tm.Format(dateLayout)}
		case 5:
			b := make([]byte, 1+r.IntN(48))
			for i := range b {
				b[i] = byte(r.Uint32())
			}
			v = pval{"Edm.Binary", base64.StdEncoding.EncodeToString(b)}
		case 6:
			v = pval{"Edm.Guid", fmt.Sprintf("%08x-%04x-4%03x-8%03x-%012x", r.Uint32(), r.Uint32()&0xffff,
				r.Uint32()&0xfff, r.Uint32()&0xfff, r.Uint64()&0xffffffffffff)}
		default:
			v = pval{"Edm.Boolean", strconv.FormatBool(r.IntN(2) == 0)}
		}
		ps[name] = v
	}
	return ps
}

// listPartition reads every entity of one partition with raw signed requests: the Go SDK
// re-encodes entities through map[string]any, which turns an integral Double into an Int32.
func listPartition(t *testing.T, p *tabloProc, table, pk string) map[string]state {
	t.Helper()
	got := map[string]state{}
	q := url.Values{"$filter": {fmt.Sprintf("PartitionKey eq '%s'", pk)}}
	for {
		req, err := http.NewRequest(http.MethodGet, p.endpoint+"/"+table+"()?"+q.Encode(), nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("x-ms-version", "2019-02-02")
		req.Header.Set("x-ms-date", time.Now().UTC().Format(http.TimeFormat))
		req.Header.Set("Accept", "application/json;odata=minimalmetadata")
		signLite(req)
		ctx, cancel := context.WithTimeout(context.Background(), requestTimeout)
		resp, err := http.DefaultClient.Do(req.WithContext(ctx))
		if err != nil {
			cancel()
			t.Fatalf("list %s: %v", pk, err)
		}
		var page struct{ Value []json.RawMessage }
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		cancel()
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("list %s: %d %v %s", pk, resp.StatusCode, err, body)
		}
		if err := json.Unmarshal(body, &page); err != nil {
			t.Fatalf("list %s: %v", pk, err)
		}
		for _, raw := range page.Value {
			epk, rk, etag, ps, err := decodeEntity(raw)
			if err != nil {
				t.Fatalf("decode %s: %v", raw, err)
			}
			if epk != pk {
				t.Fatalf("filter PartitionKey eq %q returned %q", pk, epk)
			}
			got[rk] = state{exists: true, props: ps, etag: etag}
		}
		npk, nrk := resp.Header.Get("x-ms-continuation-NextPartitionKey"), resp.Header.Get("x-ms-continuation-NextRowKey")
		if npk == "" && nrk == "" {
			return got
		}
		q.Set("NextPartitionKey", npk)
		q.Set("NextRowKey", nrk)
	}
}
