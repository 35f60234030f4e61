package server

import (
	"net/http"

	"github.com/tablo/tablo/internal/auth"
	"github.com/tablo/tablo/internal/edge"
)

func xmlHeader() http.Header { return edge.XMLHeader() }

func (s *Server) getACL(c *call) (*reply, error) {
	doc, err := s.svc.TableMeta(c.Ctx, c.Account, c.res.table, aclDoc)
	if err != nil {
		return nil, err
	}
	ids, err := auth.ParseSignedIdentifiers(doc)
	if err != nil {
		return nil, err
	}
	return &reply{Status: http.StatusOK, Header: xmlHeader(), Body: auth.AppendSignedIdentifiersXML(nil, ids)}, nil
}

func (s *Server) setACL(c *call) (*reply, error) {
	body, err := readBody(c, 64<<10)
	if err != nil {
		return nil, err
	}
	ids, err := auth.ParseSignedIdentifiers(body)
	if err != nil {
		return nil, err
	}
	var doc []byte
	if len(ids) > 0 {
		doc = auth.AppendSignedIdentifiersXML(nil, ids)
	}
	if err := s.svc.SetTableMeta(c.Ctx, c.Account, c.res.table, aclDoc, doc); err != nil {
		return nil, err
	}
	return &reply{Status: http.StatusNoContent, Header: http.Header{}}, nil
}
