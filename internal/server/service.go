package server

import "github.com/tablo/tablo/internal/edge"

// Service properties, stats and CORS preflights are the shared pipeline's (package edge);
// the Table service keeps its properties as an account setting of package table.

func (s *Server) getServiceProperties(c *call) (*reply, error) {
	return s.p.GetServiceProperties(&c.Call)
}

// setServiceProperties applies a partial update: elements the request omits keep their value.
func (s *Server) setServiceProperties(c *call) (*reply, error) {
	body, err := readBody(c, edge.MaxPropertiesBody)
	if err != nil {
		return nil, err
	}
	return s.p.SetServiceProperties(&c.Call, body)
}

func (s *Server) getServiceStats(c *call) (*reply, error) { return s.p.GetServiceStats(&c.Call) }

func (s *Server) preflight(c *call) (*reply, error) { return s.p.Preflight(&c.Call) }
