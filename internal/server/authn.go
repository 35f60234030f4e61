package server

import (
	"log/slog"
	"strings"

	"github.com/tablo/tablo/internal/auth"
	"github.com/tablo/tablo/internal/azerr"
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

// authenticate checks Shared Key / Shared Key Lite or a SAS. CORS preflights are never
// authenticated; a request with neither credential is 403 AuthenticationFailed.
func (s *Server) authenticate(c *call, op operation) error {
	if op == opPreflight {
		return nil
	}
	v := s.accounts[c.account]
	authz := c.header.Get("Authorization")
	if c.query.hasSig && authz == "" {
		params, err := c.query.form()
		if err != nil {
			return err
		}
		sas, _, err := auth.ParseSAS(params)
		if err != nil {
			return err
		}
		req := auth.SASRequest{
			Now:       s.now(),
			TLS:       c.fc.IsTLS(),
			ClientIP:  clientIP(c.fc),
			Policy:    s.policyLookup(c, sas.TableName),
			StartSkew: 0,
		}
		if err := sas.Verify(v.Account(), req); err != nil {
			return err
		}
		if err := sas.Authorize(authOperation(op, len(c.fc.Request.Header.PeekAll("If-Match")) > 0), c.res.table); err != nil {
			return err
		}
		c.sas = sas
		return nil
	}
	if authz == "" {
		return azerr.New(azerr.AuthenticationFailed)
	}
	// resolveAccount took the request-target apart already.
	req := auth.RequestInfo{
		Method:    c.method,
		RawPath:   c.targetPath,
		RawQuery:  c.targetQuery,
		Header:    c.header,
		Account:   c.account,
		PathStyle: c.pathStyle,
		Secondary: c.secondary,
		// Azure refuses requests dated too far from its clock.
		Now:          s.now(),
		MaxClockSkew: s.dateWindow,
	}
	err := v.VerifySharedKey(req)
	if err != nil && s.log.Enabled(c.ctx, slog.LevelDebug) {
		// What Azure's AuthenticationErrorDetail gives: the string the server signed (never a key).
		scheme := auth.SchemeSharedKey
		if strings.HasPrefix(authz, "SharedKeyLite ") {
			scheme = auth.SchemeSharedKeyLite
		}
		s.log.Debug("authentication failed", "request_id", c.requestID, "reason", auth.Detail(err),
			"string_to_sign", auth.StringToSign(scheme, req))
	}
	return err
}

// policyLookup resolves a SAS's si against the stored access policies of its table, read at
// verification time so that changing or removing a policy takes effect at once.
func (s *Server) policyLookup(c *call, tableName string) func(id string) (*auth.AccessPolicy, bool) {
	return func(id string) (*auth.AccessPolicy, bool) {
		if tableName == "" {
			return nil, false
		}
		doc, err := s.svc.TableMeta(c.ctx, c.account, tableName, aclDoc)
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
