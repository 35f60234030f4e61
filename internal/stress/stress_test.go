package stress

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/tablo/tablo/internal/app"
	"github.com/tablo/tablo/internal/auth"
	"github.com/tablo/tablo/internal/config"
	"github.com/tablo/tablo/internal/partition"
)

// The guide's formula: y = Rand(0.8z, 1.2z)·(2^x − 1), then Min(zmin + y, zmax).
func TestExponentialBackoffFormula(t *testing.T) {
	p := RetryPolicy{Kind: "exponential", Max: 5, Backoff: time.Second, Min: 100 * time.Millisecond, Cap: 10 * time.Second}
	rnd := rand.New(rand.NewPCG(1, 1))
	for x := 1; x <= 6; x++ {
		lo := time.Duration(float64(p.Min) + 0.8*float64(p.Backoff)*float64(int(1)<<x-1))
		hi := time.Duration(float64(p.Min) + 1.2*float64(p.Backoff)*float64(int(1)<<x-1))
		lo, hi = min(lo, p.Cap), min(hi, p.Cap)
		seenLow, seenHigh := false, false
		for range 2000 {
			d := p.Delay(rnd, x)
			if d < lo || d > hi {
				t.Fatalf("retry %d: delay %s outside [%s, %s]", x, d, lo, hi)
			}
			mid := lo + (hi-lo)/2
			seenLow = seenLow || d < mid
			seenHigh = seenHigh || d > mid
		}
		if lo < hi && (!seenLow || !seenHigh) {
			t.Fatalf("retry %d: delays not spread over ±20%%", x)
		}
	}
	if d := (RetryPolicy{Kind: "fixed", Backoff: 3 * time.Second}).Delay(rnd, 4); d != 3*time.Second {
		t.Fatalf("fixed: %s", d)
	}
}

func TestKeyGenerators(t *testing.T) {
	rnd := rand.New(rand.NewPCG(1, 2))
	gen := func(spec string) []string {
		g, err := ParseKeyGen(spec)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for range 200 {
			out = append(out, g.Next(rnd))
		}
		return out
	}
	seq, rev := gen("sequential"), gen("reverse")
	for i := 1; i < len(seq); i++ {
		if seq[i] <= seq[i-1] || rev[i] >= rev[i-1] {
			t.Fatalf("sequential %q→%q, reverse %q→%q", seq[i-1], seq[i], rev[i-1], rev[i])
		}
	}
	buckets := map[string]bool{}
	for _, k := range gen("hashed:16") {
		buckets[k] = true
	}
	if len(buckets) != 16 {
		t.Fatalf("hashed:16 gave %d buckets: %v", len(buckets), buckets)
	}
	if g := gen("fixed:abc"); g[0] != "abc" || g[199] != "abc" {
		t.Fatal("fixed")
	}
	for _, bad := range []string{"", "hashed", "hashed:0", "list:", "sequential:3", "zigzag"} {
		if _, err := ParseKeyGen(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func startTablo(t *testing.T, emulate string) string {
	t.Helper()
	cfg := config.Config{Host: "127.0.0.1", InMemory: true, Accounts: []auth.Account{auth.DevAccount()}}
	var err error
	if cfg.Partition, err = partition.ParseOptions(emulate); err != nil {
		t.Fatal(err)
	}
	a, err := app.Start(context.Background(), cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = a.Close(context.Background()) })
	return "DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==;TableEndpoint=http://" + a.Addr().String() + "/devstoreaccount1;"
}

func runStress(t *testing.T, args ...string) *Report {
	t.Helper()
	var out, errOut bytes.Buffer
	if err := Main(context.Background(), append(args, "--json", "-"), func(string) string { return "" }, &out, &errOut); err != nil {
		t.Fatalf("stress: %v\n%s", err, errOut.String())
	}
	var rep Report
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatalf("%v: %s", err, out.String())
	}
	return &rep
}

// The append-only design is named for what it is, and Tablo names one range partition per
// query.
func TestStressAppendOnly(t *testing.T) {
	conn := startTablo(t, "")
	rep := runStress(t, "--conn", conn, "--pk", "sequential", "--duration", "700ms", "--preload", "100", "--concurrency", "4")
	if rep.Total.OK == 0 || rep.Total.Failed != 0 || rep.Preload.Entities != 100 {
		t.Fatalf("report %+v", rep)
	}
	if !strings.Contains(strings.Join(rep.Verdict, " "), "append-only") {
		t.Fatalf("verdict %q", rep.Verdict)
	}
	if rep.RangeQueries == 0 || rep.RangesMax != 1 {
		t.Fatalf("range queries %d, at most %d ranges", rep.RangeQueries, rep.RangesMax)
	}
	// Unique keys: the listing summarises the tail, and the key order shows every recent
	// insert at its end.
	p := rep.Partitions
	last := p.KeyRanges[len(p.KeyRanges)-1]
	if p.Tail == nil || p.Tail.Share < 0.5 || len(p.KeyRanges) != keySlices || p.Appends < 0.5 || last.Recent < 0.9 {
		t.Fatalf("partitions %+v, tail %+v", p, p.Tail)
	}
	if v := strings.Join(rep.Verdict, " "); !strings.Contains(v, "went above every PartitionKey") || !strings.Contains(v, "share the load thinly") {
		t.Fatalf("verdict %q", v)
	}
}

// Random GUIDs: inserts land all over the key order; each slice takes its share.
func TestStressGUIDKeyOrder(t *testing.T) {
	conn := startTablo(t, "")
	rep := runStress(t, "--conn", conn, "--pk", "guid", "--duration", "700ms", "--preload", "100", "--concurrency", "4", "--mix", "insert=1")
	p := rep.Partitions
	if len(p.KeyRanges) != keySlices || p.Appends > 0.1 || p.Prepends > 0.1 || p.Tail == nil {
		t.Fatalf("partitions %+v", p)
	}
	for _, k := range p.KeyRanges {
		if k.Share < 0.05 || k.Recent > 0.5 {
			t.Fatalf("key range %+v: the load is not spread", k)
		}
	}
	if v := strings.Join(rep.Verdict, " "); !strings.Contains(v, "all over the key order") {
		t.Fatalf("verdict %q", v)
	}
	var out bytes.Buffer
	rep.WriteText(&out)
	if !strings.Contains(out.String(), "key order (") || !strings.Contains(out.String(), "the other ") {
		t.Fatalf("text report:\n%s", out.String())
	}
}

// Against emulated targets, a single hot partition gets ServerBusy; the exponential policy
// retries, and the report says so.
func TestStressHotPartitionRetries(t *testing.T) {
	conn := startTablo(t, "partition=50,server=1000000,heat=300ms,move=100ms,tick=100ms")
	rep := runStress(t, "--conn", conn, "--pk", "fixed", "--duration", "1500ms", "--preload", "50", "--concurrency", "4",
		"--mix", "insert=1", "--backoff", "50ms", "--backoff-min", "10ms", "--backoff-max", "500ms", "--retry-max", "10")
	if rep.Total.ServerBusy == 0 || rep.Total.Retries == 0 {
		t.Fatalf("no ServerBusy or retries: %+v", rep.Total)
	}
	v := strings.Join(rep.Verdict, " ")
	if !strings.Contains(v, "ServerBusy") || !strings.Contains(v, "one PartitionKey") {
		t.Fatalf("verdict %q", v)
	}
}

// The key order is judged only against keys written before the lag period: the first
// inserts have nothing to compare with and are not counted as appends or prepends.
func TestKeyOrderNeedsEarlierKeys(t *testing.T) {
	r := &run{measuring: true}
	for _, k := range []string{"m", "a", "z", "b"} {
		r.noteKeyOrder(k)
	}
	if r.inserts != 0 || r.appends != 0 || r.prepends != 0 {
		t.Fatalf("%d inserts counted (%d appends, %d prepends) with no earlier keys", r.inserts, r.appends, r.prepends)
	}
	r.keyPeriod-- // a period later: "a".."z" are the earlier keys
	r.noteKeyOrder("zz")
	r.noteKeyOrder("c")
	if r.inserts != 2 || r.appends != 1 || r.prepends != 0 {
		t.Fatalf("inserts %d, appends %d, prepends %d; want 2, 1, 0", r.inserts, r.appends, r.prepends)
	}
}
