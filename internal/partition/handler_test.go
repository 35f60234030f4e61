package partition

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestHandler(t *testing.T) {
	l := New(Options{})
	op := Op{Service: Table, Account: "acct", Container: "Orders", Key: "k1", Kind: KindInsert, Entities: 1}
	tk := l.Admit(&op, time.Now())
	l.Finish(&tk, Result{Status: 204, Now: time.Now()})
	srv := httptest.NewServer(l.Handler())
	defer srv.Close()

	resp, err := http.Get(srv.URL + "/partitions?top=3")
	if err != nil {
		t.Fatal(err)
	}
	var s Snapshot
	err = json.NewDecoder(resp.Body).Decode(&s)
	resp.Body.Close()
	if err != nil || len(s.Tables) != 1 || s.Tables[0].Name != "Orders" || len(s.Tables[0].Ranges) != 1 ||
		len(s.Hottest) != 1 || s.Hottest[0].Key != "k1" || !s.Hottest[0].Exact {
		t.Fatalf("snapshot %+v (%v)", s, err)
	}

	put := func(spec string) (int, string) {
		req, _ := http.NewRequest(http.MethodPut, srv.URL+"/faults", strings.NewReader(spec))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var b strings.Builder
		buf := make([]byte, 4096)
		n, _ := resp.Body.Read(buf)
		b.Write(buf[:n])
		return resp.StatusCode, b.String()
	}
	if code, body := put("seed=3; fault=busy every=1 table=orders"); code != 200 || !strings.Contains(body, "fault=busy") {
		t.Fatalf("PUT /faults: %d %s", code, body)
	}
	if tk := l.Admit(&op, time.Now()); tk.Err == nil {
		t.Fatal("fault set at run time not applied")
	}
	if code, _ := put("fault=nope"); code != 400 {
		t.Fatalf("bad spec: %d", code)
	}
	if code, _ := put(""); code != 200 || l.Faults() != nil {
		t.Fatalf("clearing faults: %d %v", code, l.Faults())
	}
}
