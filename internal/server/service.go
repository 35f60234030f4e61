package server

import (
	"net/http"

	"github.com/tablo/tablo/internal/azerr"
)

// Service properties, stats and CORS preflight. These answer from stored settings.

func (s *Server) getServiceProperties(c *call) (*reply, error) {
	return nil, azerr.New(azerr.NotImplemented)
}

func (s *Server) setServiceProperties(c *call) (*reply, error) {
	return nil, azerr.New(azerr.NotImplemented)
}

func (s *Server) getServiceStats(c *call) (*reply, error) {
	return nil, azerr.New(azerr.NotImplemented)
}

func (s *Server) preflight(c *call) (*reply, error) {
	_ = http.MethodOptions
	return nil, azerr.New(azerr.CorsPreflightFailure)
}
