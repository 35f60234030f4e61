package server

import (
	"github.com/tablo/tablo/internal/auth"
	"github.com/tablo/tablo/internal/edge"
	"github.com/tablo/tablo/internal/table"
)

// aclDoc is the name of the table metadata document that holds the stored access policies
// (kept as the XML Set Table ACL accepted, re-rendered on Get).
const aclDoc = "acl"

// authOperation maps a routed operation to what authorization checks.
func authOperation(op operation, hasIfMatch bool) auth.Operation {
	switch op {
	case opQueryTables:
		return auth.QueryTables
	case opCreateTable:
		return auth.CreateTable
	case opGetTable:
		return auth.GetTable
	case opDeleteTable:
		return auth.DeleteTable
	case opQueryEntities:
		return auth.QueryEntities
	case opGetEntity:
		return auth.GetEntity
	case opInsertEntity:
		return auth.InsertEntity
	case opPutEntity:
		if hasIfMatch {
			return auth.UpdateEntity
		}
		return auth.InsertOrReplace
	case opMergeEntity:
		if hasIfMatch {
			return auth.MergeEntity
		}
		return auth.InsertOrMerge
	case opDeleteEntity:
		return auth.DeleteEntity
	case opBatch:
		return auth.Batch
	case opGetACL:
		return auth.GetACL
	case opSetACL:
		return auth.SetACL
	case opGetServiceProperties:
		return auth.GetServiceProperties
	case opSetServiceProperties:
		return auth.SetServiceProperties
	case opGetServiceStats:
		return auth.GetServiceStats
	}
	return auth.Preflight
}

// authenticate checks Shared Key / Shared Key Lite or a SAS (the shared pipeline's). CORS
// preflights are never authenticated; a request with neither credential is 403
// AuthenticationFailed.
func (s *Server) authenticate(c *call, op operation) error {
	sas, err := s.p.Authenticate(&c.Call, edge.AuthTarget{
		Preflight: op == opPreflight,
		Op:        authOperation(op, len(c.FC.Request.Header.PeekAll("If-Match")) > 0),
		Resource:  c.res.table,
		Policy: func(id string) (*auth.AccessPolicy, bool) {
			return s.policyLookup(c, s.sasTable(c))(id)
		},
		Form: c.query.form,
	})
	c.sas = sas
	return err
}

// sasTable is the table whose stored access policies a SAS's si names: its tn.
func (s *Server) sasTable(c *call) string {
	if c.query.hasSig {
		if f, err := c.query.form(); err == nil {
			return f.Get("tn")
		}
	}
	return ""
}

// policyLookup resolves a SAS's si against the stored access policies of its table, read at
// verification time so that changing or removing a policy takes effect at once.
func (s *Server) policyLookup(c *call, tableName string) func(id string) (*auth.AccessPolicy, bool) {
	return func(id string) (*auth.AccessPolicy, bool) {
		if tableName == "" {
			return nil, false
		}
		doc, err := s.svc.TableMeta(c.Ctx, c.Account, tableName, aclDoc)
		if err != nil || doc == nil {
			return nil, false
		}
		ids, err := auth.ParseSignedIdentifiers(doc)
		if err != nil {
			return nil, false
		}
		for i := range ids {
			if ids[i].ID == id {
				return &ids[i].Policy, true
			}
		}
		return nil, false
	}
}

// checkSASRange refuses an entity outside a service SAS's key range.
func (s *Server) checkSASRange(c *call, pk, rk string) error {
	if c.sas == nil {
		return nil
	}
	return c.sas.CheckKey(pk, rk)
}

// sasBounds converts a SAS key range into query bounds (nil without a SAS range).
func sasBounds(c *call) *table.KeyBounds {
	if c.sas == nil {
		return nil
	}
	start, end := c.sas.KeyRange()
	if start == nil && end == nil {
		return nil
	}
	b := &table.KeyBounds{}
	if start != nil {
		b.Start = &table.Bound{PartitionKey: start.PartitionKey, RowKey: start.RowKey, HasRowKey: start.HasRowKey}
	}
	if end != nil {
		b.End = &table.Bound{PartitionKey: end.PartitionKey, RowKey: end.RowKey, HasRowKey: end.HasRowKey}
	}
	return b
}
