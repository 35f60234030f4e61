package main

import (
	"bytes"
	"context"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/tablo/tablo/internal/partition"
)

func TestPartitionsCommand(t *testing.T) {
	l := partition.New(partition.Options{})
	for _, op := range []partition.Op{
		{Service: partition.Table, Account: "acct", Container: "Orders", Key: "p1", Kind: partition.KindInsert, Entities: 1},
		{Service: partition.Queue, Account: "acct", Container: "jobs", Key: "jobs", Kind: partition.KindInsert, Entities: 1},
		{Service: partition.Blob, Account: "acct", Container: "logs", Key: "2024/01/a.log", Kind: partition.KindInsert, Entities: 1},
	} {
		tk := l.Admit(&op, time.Now())
		l.Finish(&tk, partition.Result{Status: 201, Now: time.Now()})
	}
	srv := httptest.NewServer(l.Handler())
	defer srv.Close()
	var out, errOut bytes.Buffer
	addr := strings.TrimPrefix(srv.URL, "http://")
	if err := run(context.Background(), []string{"partitions", "--addr", addr}, func(string) string { return "" }, &out, &errOut); err != nil {
		t.Fatalf("%v: %s", err, errOut.String())
	}
	for _, want := range []string{"acct/Orders", "r0@s", `"p1"`, "queue:acct/jobs", "blob:acct/logs", `"2024/01/a.log"`, "queue 2000 messages/s"} {
		if !strings.Contains(out.String(), want) {
			t.Fatalf("output lacks %q:\n%s", want, out.String())
		}
	}
}
