package server

import (
	"github.com/tablo/tablo/internal/httpserve"
)

// NewHTTPServer returns the HTTP server for s: bodies are read whole up to the largest the
// service accepts (a $batch), and a larger one gets Azure's error.
func (s *Server) NewHTTPServer() *httpserve.Server {
	return s.p.NewHTTPServer(s.Handle, maxBatchBody)
}
