package server

import (
	"encoding/xml"
	"io"
	"net/http"

	"github.com/tablo/tablo/internal/auth"
)

func xmlEscape(w io.Writer, s string) error { return xml.EscapeText(w, []byte(s)) }

func xmlHeader() http.Header {
	h := http.Header{}
	h.Set("Content-Type", "application/xml")
	return h
}

func (s *Server) getACL(c *call) (*reply, error) {
	doc, err := s.svc.TableMeta(c.ctx, c.account, c.res.table, aclDoc)
	if err != nil {
		return nil, err
	}
	ids, err := auth.ParseSignedIdentifiers(doc)
	if err != nil {
		return nil, err
	}
	return &reply{status: http.StatusOK, header: xmlHeader(), body: auth.AppendSignedIdentifiersXML(nil, ids)}, nil
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
	if err := s.svc.SetTableMeta(c.ctx, c.account, c.res.table, aclDoc, doc); err != nil {
		return nil, err
	}
	return &reply{status: http.StatusNoContent, header: http.Header{}}, nil
}
