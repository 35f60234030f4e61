package partition

import (
	"strings"
	"testing"
	"time"

	"github.com/tablo/tablo/internal/azerr"
)

func TestParseFaults(t *testing.T) {
	fs, err := ParseFaults("seed=7; fault=busy op=write table=Orders pk=user- p=0.25; fault=latency,latency=20ms,every=3,when=after")
	if err != nil {
		t.Fatal(err)
	}
	if fs.Seed != 7 || len(fs.rules) != 2 {
		t.Fatalf("parsed %+v", fs)
	}
	r := fs.rules[0]
	if r.kind != faultBusy || r.op != "write" || r.table != "orders" || r.pk != "user-" || r.p != 0.25 || r.after {
		t.Fatalf("rule 1: %+v", r)
	}
	if r := fs.rules[1]; r.kind != faultLatency || r.latency != 20*time.Millisecond || r.every != 3 || !r.after {
		t.Fatalf("rule 2: %+v", r)
	}
	again, err := ParseFaults(fs.String())
	if err != nil || again.String() != fs.String() {
		t.Fatalf("round trip: %q → %q (%v)", fs.String(), again.String(), err)
	}
	for _, bad := range []string{
		"fault=busy", "p=0.5", "fault=busy p=0", "fault=busy p=1.5", "fault=busy every=0",
		"fault=busy p=0.5 every=2", "fault=nope p=1", "fault=busy p=1 when=later", "fault=busy p=1 op=fly",
		"seed=-1", "fault=busy p=1 colour=red", "fault=busy p=1 service=file", "fault=latency latency=2h p=1",
		"fault", "fault=busy p=NaN",
	} {
		if _, err := ParseFaults(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

func FuzzParseFaults(f *testing.F) {
	for _, s := range []string{"", "seed=1", "fault=busy p=0.1", "seed=3; fault=drop every=2 when=after; fault=latency latency=1s p=1 op=read table=t pk=a",
		"fault=busy every=1 service=queue queue=hot* op=dequeue; fault=timeout service=blob container=logs when=after p=0.5 pk=2024/"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, spec string) {
		fs, err := ParseFaults(spec)
		if err != nil {
			return
		}
		// A parsed spec renders to a spec that parses to the same rules.
		again, err := ParseFaults(fs.String())
		if err != nil || again.String() != fs.String() {
			t.Fatalf("%q renders as %q, which parses as %q (%v)", spec, fs.String(), again.String(), err)
		}
		for _, r := range fs.rules {
			if r.kind == 0 || (r.p == 0) == (r.every == 0) {
				t.Fatalf("%q: invalid rule accepted: %+v", spec, r)
			}
		}
	})
}

func FuzzParseOptions(f *testing.F) {
	for _, s := range []string{"", "on", "off", "partition=10,heat=1s", "account.x=5,servers=3,move=2s,tick=100ms,keys=9,off"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, spec string) {
		o, err := ParseOptions(spec)
		if err != nil {
			return
		}
		l := New(o) // any accepted options make a working layer
		op := Op{Service: Table, Account: "a", Container: "t", Key: "k", Kind: KindInsert, Entities: 1}
		tk := l.Admit(&op, t0)
		l.Finish(&tk, Result{Status: 204, Now: t0})
	})
}

// faultSequence sends the same 200 requests to a fresh layer and returns what each met.
func faultSequence(t *testing.T, spec string) string {
	fs, err := ParseFaults(spec)
	if err != nil {
		t.Fatal(err)
	}
	l := New(Options{})
	l.SetFaults(fs)
	var b strings.Builder
	for i := range 200 {
		kind := KindInsert
		if i%3 == 0 {
			kind = KindPointRead
		}
		op := Op{Service: Table, Account: "a", Container: "t", Key: "k", Kind: kind, Entities: 1}
		tk := l.Admit(&op, t0)
		drop, delay, err := l.AfterFault(&tk)
		switch {
		case tk.Err != nil:
			b.WriteString(string(azerr.From(tk.Err).Code)[:1])
		case tk.Drop:
			b.WriteByte('D')
		case tk.Delay > 0:
			b.WriteByte('L')
		case err != nil:
			b.WriteByte('a')
		case drop || delay > 0:
			b.WriteByte('d')
		default:
			b.WriteByte('.')
		}
	}
	return b.String()
}

func TestFaultsReproducible(t *testing.T) {
	spec := "seed=42; fault=busy op=write p=0.2; fault=timeout when=after p=0.1; fault=drop every=17"
	a, b := faultSequence(t, spec), faultSequence(t, spec)
	if a != b {
		t.Fatalf("same seed, different faults:\n%s\n%s", a, b)
	}
	if c := faultSequence(t, strings.Replace(spec, "seed=42", "seed=43", 1)); c == a {
		t.Fatalf("another seed gave the same faults: %s", c)
	}
	for _, want := range []string{"S", "a", "D", "."} {
		if !strings.Contains(a, want) {
			t.Fatalf("sequence %s lacks %q", a, want)
		}
	}
	if got := faultSequence(t, "fault=internal every=4 op=insert"); strings.Count(got, "I") == 0 {
		t.Fatalf("every=4: %s", got)
	}
}

// table=, queue= and container= name a container exactly, or by prefix with a trailing '*'.
func TestFaultContainerPrefix(t *testing.T) {
	fs, err := ParseFaults("fault=busy every=1 queue=Hot*; fault=timeout every=1 container=logs")
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]int{"hotq": 0, "HOT": 0, "ho": -1, "coldhot": -1, "logs": 1, "logs2": -1} {
		got := -1
		for i, r := range fs.rules {
			if r.matches(&Op{Service: Queue, Container: name, Key: name, Kind: KindInsert}) {
				got = i
				break
			}
		}
		if got != want {
			t.Errorf("%q matched rule %d, want %d", name, got, want)
		}
	}
}

// A refused spec names the rule at fault, counting from one, so that the user of --faults or
// PUT /faults can find it in a long spec.
func TestParseFaultsErrorNamesRule(t *testing.T) {
	for spec, want := range map[string]string{
		"seed=1; fault=busy p=1; fault=busy p=1 colour":          "rule 3: \"colour\" is not name=value",
		"fault=busy p=1; fault=busy p=1 when=later":              "rule 2: when",
		"fault=busy p=1; fault=busy p=1; p=1":                    "rule 3: fault= is missing",
		"fault=busy p=1; fault=busy":                             "rule 2: p= or every= is missing",
		"fault=busy p=1; fault=busy p=1; fault=busy p=1 every=2": "rule 3: p= and every= exclude each other",
	} {
		_, err := ParseFaults(spec)
		if err == nil || !strings.Contains(err.Error(), "faults: "+want) {
			t.Errorf("%q: error %v, want one with %q", spec, err, want)
		}
	}
}

// fault=latency without latency= waits 100 ms; latency= takes 0 to 1m, and only latency
// faults wait.
func TestFaultLatency(t *testing.T) {
	delay := func(spec string) time.Duration {
		t.Helper()
		fs, err := ParseFaults(spec)
		if err != nil {
			t.Fatalf("%q: %v", spec, err)
		}
		l := New(Options{})
		l.SetFaults(fs)
		op := Op{Service: Table, Account: "a", Container: "t", Key: "k", Kind: KindInsert, Entities: 1}
		tk := l.Admit(&op, t0)
		if tk.Err != nil || tk.Drop {
			t.Fatalf("%q: ticket %+v", spec, tk)
		}
		return tk.Delay
	}
	if d := delay("fault=latency every=1"); d != 100*time.Millisecond {
		t.Errorf("default latency %v, want 100ms", d)
	}
	if d := delay("fault=latency latency=1m every=1"); d != time.Minute {
		t.Errorf("latency=1m: %v", d)
	}
	if d := delay("fault=latency latency=7ms every=1"); d != 7*time.Millisecond {
		t.Errorf("latency=7ms: %v", d)
	}
	if d := delay("fault=drop latency=7ms every=1 when=after"); d != 0 {
		t.Errorf("an after-fault delayed the request by %v", d)
	}
	fs, err := ParseFaults("fault=busy every=1")
	if err != nil || fs.rules[0].latency != 0 {
		t.Fatalf("a busy fault carries latency %v (%v)", fs.rules[0].latency, err)
	}
	for _, ok := range []string{"0s", "1m", "59.999s"} {
		if _, err := ParseFaults("fault=latency every=1 latency=" + ok); err != nil {
			t.Errorf("latency=%s refused: %v", ok, err)
		}
	}
	for _, bad := range []string{"-1ns", "1m0.000000001s", "soon"} {
		if _, err := ParseFaults("fault=latency every=1 latency=" + bad); err == nil {
			t.Errorf("latency=%s accepted", bad)
		}
	}
}

// p= is a probability in (0, 1]: p=1 fires on every request, p=0 is refused even beside
// every= (which would otherwise make the rule valid).
func TestFaultProbabilityEdges(t *testing.T) {
	if got := faultSequence(t, "fault=busy p=1"); got != strings.Repeat("S", 200) {
		t.Fatalf("p=1: %s", got)
	}
	for _, bad := range []string{"fault=busy every=2 p=0", "fault=busy p=1.0000001", "fault=busy p=-0.5"} {
		if _, err := ParseFaults(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// service= and op= with a kind name restrict a rule to that service and that kind.
func TestFaultServiceAndKind(t *testing.T) {
	fs, err := ParseFaults("fault=busy every=1 service=queue; fault=timeout every=1 op=point-read; fault=internal every=1 service=blob op=insert")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		svc  Service
		kind Kind
		want int
	}{
		{Queue, KindInsert, 0}, {Queue, KindPointRead, 0}, {Table, KindPointRead, 1}, {Blob, KindPointRead, 1},
		{Blob, KindInsert, 2}, {Table, KindInsert, -1}, {Blob, KindDelete, -1}, {Table, KindPartition, -1},
	} {
		got := -1
		for i, r := range fs.rules {
			if r.matches(&Op{Service: c.svc, Container: "c", Key: "k", Kind: c.kind}) {
				got = i
				break
			}
		}
		if got != c.want {
			t.Errorf("%v %v matched rule %d, want %d", c.svc, c.kind, got, c.want)
		}
	}
}

// op=read matches every kind that reads (point reads, queries, Get Messages) and neither
// writes nor account- and container-level requests.
func TestFaultReadMatchesReadsOnly(t *testing.T) {
	fs, err := ParseFaults("fault=busy every=1 op=read")
	if err != nil {
		t.Fatal(err)
	}
	for k := KindOther; k < numKinds; k++ {
		want := k != KindOther && !k.Write()
		if got := fs.rules[0].matches(&Op{Service: Table, Container: "c", Key: "k", Kind: k}); got != want {
			t.Errorf("op=read matches %v: %v, want %v", k, got, want)
		}
	}
}
