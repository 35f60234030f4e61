// Package plans lets the pattern examples show what each query cost: an azcore per-call
// policy that prints (and records) the x-tablo-query-plan header Tablo sends with every query
// response. Against Azure the header is absent and nothing is printed.
package plans

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
)

// Header is the response header in which Tablo names a query's plan.
const Header = "x-tablo-query-plan"

// DevConn is the development account on a local Tablo, every service on its default port.
const DevConn = "DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;" +
	"AccountKey=Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==;" +
	"TableEndpoint=http://127.0.0.1:10002/devstoreaccount1;" +
	"QueueEndpoint=http://127.0.0.1:10001/devstoreaccount1;" +
	"BlobEndpoint=http://127.0.0.1:10000/devstoreaccount1;"

// Recorder is a per-call policy: it writes "  plan: <header>" to its writer after each
// response that carries the header and keeps the plans in order.
type Recorder struct {
	w     io.Writer
	mu    sync.Mutex
	plans []Plan
}

// NewRecorder returns a Recorder printing to w (nil: print nothing).
func NewRecorder(w io.Writer) *Recorder { return &Recorder{w: w} }

// Do implements policy.Policy.
func (r *Recorder) Do(req *policy.Request) (*http.Response, error) {
	resp, err := req.Next()
	if err != nil || resp == nil {
		return resp, err
	}
	if h := resp.Header.Get(Header); h != "" {
		r.mu.Lock()
		r.plans = append(r.plans, Parse(h))
		r.mu.Unlock()
		if r.w != nil {
			fmt.Fprintf(r.w, "  plan: %s\n", elide(h))
		}
	}
	return resp, nil
}

// elide shortens a long plan (a union of many points) to its start and its end.
func elide(h string) string {
	if len(h) <= 160 {
		return h
	}
	return h[:110] + " … " + h[len(h)-40:]
}

// Plans returns the plans recorded so far.
func (r *Recorder) Plans() []Plan {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Plan(nil), r.plans...)
}

// Reset forgets the recorded plans.
func (r *Recorder) Reset() {
	r.mu.Lock()
	r.plans = nil
	r.mu.Unlock()
}

// Plan is one parsed header: "partition pk='Sales' +residual; scanned=12; returned=1".
type Plan struct {
	Raw      string
	Kind     string // point, row-range, partition, partition-range, union, scan, empty, none
	Scanned  int
	Returned int
}

// Parse reads a header value; fields it cannot read stay zero.
func Parse(h string) Plan {
	p := Plan{Raw: h}
	parts := strings.Split(h, ";")
	if f := strings.Fields(parts[0]); len(f) > 0 {
		p.Kind = f[0]
	}
	for _, part := range parts[1:] {
		k, v, _ := strings.Cut(strings.TrimSpace(part), "=")
		n, _ := strconv.Atoi(v)
		switch k {
		case "scanned":
			p.Scanned = n
		case "returned":
			p.Returned = n
		}
	}
	return p
}

// Main is the main function of an example that needs only the Table service: it reads the
// -conn flag (default DevConn), builds a client whose query plans print to stdout, runs run
// and exits non-zero on an error.
func Main(run func(ctx context.Context, svc *aztables.ServiceClient, out io.Writer) error) {
	conn := flag.String("conn", DevConn, "storage account connection string")
	flag.Parse()
	svc, err := TableService(*conn, NewRecorder(os.Stdout), true)
	if err == nil {
		err = run(context.Background(), svc, os.Stdout)
	}
	if err != nil {
		log.Fatal(err)
	}
}

// TableService returns a Table service client for conn whose queries' plans go to rec.
// retry false turns the SDK's retries off, so that every refusal (ServerBusy) is seen.
func TableService(conn string, rec *Recorder, retry bool) (*aztables.ServiceClient, error) {
	o := azcore.ClientOptions{PerCallPolicies: []policy.Policy{rec}}
	if !retry {
		o.Retry.MaxRetries = -1
	}
	return aztables.NewServiceClientFromConnectionString(conn, &aztables.ClientOptions{ClientOptions: o})
}
