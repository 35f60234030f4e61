package main

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestHealthcheck(t *testing.T) {
	status := http.StatusOK
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/healthz" {
			http.NotFound(w, r)
			return
		}
		w.WriteHeader(status)
	}))
	defer srv.Close()
	env := func(string) string { return "" }
	var out bytes.Buffer
	if err := healthcheck(context.Background(), []string{"--url", srv.URL + "/healthz"}, env, &out, &out); err != nil {
		t.Fatalf("healthy: %v", err)
	}
	status = http.StatusServiceUnavailable
	if err := healthcheck(context.Background(), []string{"--url", srv.URL + "/healthz"}, env, &out, &out); err == nil || !strings.Contains(err.Error(), "503") {
		t.Fatalf("unhealthy: %v", err)
	}
	bad := func(string) string { return "port" }
	if err := healthcheck(context.Background(), nil, bad, &out, &out); err == nil || !strings.Contains(err.Error(), "TABLO_ADMIN_PORT") {
		t.Fatalf("bad TABLO_ADMIN_PORT: %v", err)
	}
}
