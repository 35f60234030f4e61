package server

import (
	"net/http"
)

// RequestCtxFor is requestCtxFor, for benchmarks that build requests before the timer.
var RequestCtxFor = requestCtxFor

// ServeHTTP lets the package's external tests drive a Server with net/http requests: each
// goes through fasthttp's parser and the response through its writer (see testctx_test.go).
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	fc := requestCtxFor(r, r.TLS != nil)
	s.Handle(fc)
	rec := recordResponse(fc)
	for k, vs := range rec.Header() {
		w.Header()[k] = vs
	}
	w.WriteHeader(rec.Code)
	_, _ = w.Write(rec.Body.Bytes())
}
