package server

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"

	"github.com/tablo/tablo/internal/azerr"
	"github.com/tablo/tablo/internal/batch"
	"github.com/tablo/tablo/internal/entity"
	"github.com/tablo/tablo/internal/partition"
	"github.com/tablo/tablo/internal/query"
	"github.com/tablo/tablo/internal/table"
)

// Body limits: an entity is at most 1 MiB by Azure's formula, but its JSON can be larger
// (escapes, annotations); a batch is at most 4 MiB, framing included (batch.Parse's limit).
const (
	maxEntityBody = 4 << 20
	maxBatchBody  = batch.DefaultMaxBodyBytes
	// maxPageBytes ends a query page early (with a continuation) once this much JSON is
	// buffered, bounding memory for pages of very large entities.
	maxPageBytes = 32 << 20
)

func (s *Server) dispatch(c *call, op operation, method string) error {
	var (
		rp  *reply
		err error
	)
	switch op { // requests that touch no partition; the others are admitted by their handlers
	case opQueryTables, opCreateTable, opGetServiceProperties, opSetServiceProperties, opGetServiceStats:
		err = s.admit(c, partition.Op{Kind: partition.KindOther})
	case opGetTable, opDeleteTable, opGetACL, opSetACL:
		err = s.admit(c, partition.Op{Container: c.res.table, Kind: partition.KindOther, DeleteContainer: op == opDeleteTable})
	}
	if err != nil {
		return err
	}
	switch op {
	case opQueryTables:
		rp, err = s.queryTables(c)
	case opCreateTable:
		rp, err = s.createTable(c)
	case opGetTable:
		rp, err = s.getTable(c)
	case opDeleteTable:
		rp, err = s.deleteTable(c)
	case opQueryEntities:
		rp, err = s.queryEntities(c)
	case opGetEntity:
		rp, err = s.getEntity(c)
	case opInsertEntity:
		rp, err = s.insertEntity(c)
	case opPutEntity, opMergeEntity, opDeleteEntity:
		rp, err = s.writeEntity(c, op)
	case opBatch:
		rp, err = s.batch(c)
	case opGetACL:
		rp, err = s.getACL(c)
	case opSetACL:
		rp, err = s.setACL(c)
	case opGetServiceProperties:
		rp, err = s.getServiceProperties(c)
	case opSetServiceProperties:
		rp, err = s.setServiceProperties(c)
	case opGetServiceStats:
		rp, err = s.getServiceStats(c)
	case opPreflight:
		rp, err = s.preflight(c)
	default:
		err = azerr.New(azerr.NotImplemented)
	}
	if err != nil {
		return err
	}
	s.write(c, rp)
	return nil
}

// jsonReply returns a reply with the headers of a JSON answer (Content-Type at the call's
// metadata level, Cache-Control: no-cache, X-Content-Type-Options: nosniff).
func jsonReply(c *call, status int) *reply {
	return &reply{Status: status, ContentType: jsonContentType(c.level), NoCache: true}
}

// ---- tables ----

func (s *Server) queryTables(c *call) (*reply, error) {
	var tq table.TableQuery
	var err error
	if c.query.filter != "" {
		if tq.Filter, err = query.Parse(c.query.filter); err != nil {
			return nil, err
		}
	}
	emptyPage := false
	if c.query.hasTop {
		if emptyPage, err = parseTop(c.query.top, &tq.Top); err != nil {
			return nil, err
		}
	}
	if c.query.hasSelect {
		if _, err := query.ParseSelect(c.query.selectList); err != nil {
			return nil, err
		}
	}
	if c.query.nextTable != "" {
		if tq.Next, err = query.DecodeToken(c.query.nextTable); err != nil {
			return nil, err
		}
	}
	var page table.TablePage
	if !emptyPage {
		if page, err = s.svc.ListTables(c.Ctx, c.Account, tq); err != nil {
			return nil, err
		}
	}
	base := c.baseURL()
	b := []byte("{")
	if c.level != entity.NoMetadata {
		b = append(b, `"odata.metadata":`...)
		b = appendJSONString(b, base+"/$metadata#Tables")
		b = append(b, ',')
	}
	b = append(b, `"value":[`...)
	for i, t := range page.Tables {
		if i > 0 {
			b = append(b, ',')
		}
		b = s.appendTable(b, c, t.Name, false)
	}
	b = append(b, "]}"...)
	rp := jsonReply(c, http.StatusOK)
	if page.Next != "" {
		rp.Header = http.Header{}
		rp.Header.Set("x-ms-continuation-NextTableName", query.EncodeToken(page.Next))
	}
	rp.Body = b
	return rp, nil
}

// appendTable appends one table object at the call's metadata level.
func (s *Server) appendTable(b []byte, c *call, name string, single bool) []byte {
	base := c.baseURL()
	b = append(b, '{')
	first := true
	member := func(k, v string) {
		if !first {
			b = append(b, ',')
		}
		first = false
		b = appendJSONString(b, k)
		b = append(b, ':')
		b = appendJSONString(b, v)
	}
	if single && c.level != entity.NoMetadata {
		member("odata.metadata", base+"/$metadata#Tables/@Element")
	}
	if c.level == entity.FullMetadata {
		member("odata.type", c.Account+".Tables")
		member("odata.id", base+"/Tables('"+name+"')")
		member("odata.editLink", "Tables('"+name+"')")
	}
	member("TableName", name)
	return append(b, '}')
}

func (s *Server) createTable(c *call) (*reply, error) {
	if err := refuseAtom(c); err != nil {
		return nil, err
	}
	body, err := readBody(c, maxEntityBody)
	if err != nil {
		return nil, err
	}
	var req map[string]any
	if err := json.Unmarshal(bytes.TrimPrefix(body, []byte("\xef\xbb\xbf")), &req); err != nil {
		return nil, azerr.New(azerr.InvalidInput)
	}
	name, ok := req["TableName"].(string)
	if !ok {
		return nil, azerr.New(azerr.InvalidInput)
	}
	t, err := s.svc.CreateTable(c.Ctx, c.Account, name)
	if err != nil {
		return nil, err
	}
	rp := jsonReply(c, http.StatusCreated)
	rp.Location = c.baseURL() + "/Tables('" + t.Name + "')"
	switch preferValue(c.Header.Values("Prefer")) {
	case "return-no-content":
		rp.Status, rp.ContentType = http.StatusNoContent, ""
		rp.PreferenceApplied = "return-no-content"
		rp.DataServiceID = rp.Location
		return rp, nil
	case "return-content":
		rp.PreferenceApplied = "return-content"
	}
	rp.Body = s.appendTable(nil, c, t.Name, true)
	return rp, nil
}

func (s *Server) getTable(c *call) (*reply, error) {
	t, err := s.svc.GetTable(c.Ctx, c.Account, c.res.table)
	if err != nil {
		return nil, err
	}
	rp := jsonReply(c, http.StatusOK)
	rp.Body = s.appendTable(nil, c, t.Name, true)
	return rp, nil
}

func (s *Server) deleteTable(c *call) (*reply, error) {
	if err := s.svc.DeleteTable(c.Ctx, c.Account, c.res.table); err != nil {
		return nil, err
	}
	return &reply{Status: http.StatusNoContent}, nil
}

// ---- entities ----

func (s *Server) encodeOptions(c *call, tableName string, sel []string) entity.EncodeOptions {
	o := entity.EncodeOptions{
		Level:   c.level,
		Account: c.Account,
		Table:   tableName,
		Select:  sel,
	}
	if c.level == entity.FullMetadata { // the only level that writes URLs built on it
		o.BaseURL = c.baseURL()
	}
	return o
}

// elementMetadata is the odata.metadata URL of a single entity of tableName, built in one
// concatenation.
func (c *call) elementMetadata(tableName string) string {
	scheme := "http"
	if c.FC.IsTLS() {
		scheme = "https"
	}
	if c.PathStyle {
		return scheme + "://" + c.Host + "/" + c.Account + "/$metadata#" + tableName + "/@Element"
	}
	return scheme + "://" + c.Host + "/$metadata#" + tableName + "/@Element"
}

func (s *Server) getEntity(c *call) (*reply, error) {
	var sel []string
	var err error
	if c.query.hasSelect {
		if sel, err = query.ParseSelect(c.query.selectList); err != nil {
			return nil, err
		}
	}
	// Range check first: a 404 for a missing key outside the SAS range would leak existence.
	if err := s.checkSASRange(c, c.res.pk, c.res.rk); err != nil {
		return nil, err
	}
	if err := s.admit(c, partition.Op{Container: c.res.table, Key: c.res.pk, Kind: partition.KindPointRead}); err != nil {
		return nil, err
	}
	raw, err := s.svc.GetEntityRaw(c.Ctx, c.Account, c.res.table, c.res.pk, c.res.rk)
	if err != nil {
		return nil, err
	}
	c.Part.Entities = 1
	o := s.encodeOptions(c, c.res.table, sel)
	if c.level != entity.NoMetadata {
		o.Metadata = c.elementMetadata(c.res.table)
		if sel != nil {
			o.Metadata += "&$select=" + c.query.selectList
		}
	}
	buf := s.bodies.Get()
	body, err := entity.AppendJSONRaw(buf.B[:0], raw, o)
	buf.B = body
	if err != nil {
		s.bodies.Put(buf)
		return nil, err
	}
	rp := jsonReply(c, http.StatusOK)
	rp.ETag = entity.ETag(raw.Timestamp())
	rp.Body = body
	rp.Pooled, rp.Pool = buf, &s.bodies
	return rp, nil
}

// decodeEntityBody decodes and validates an entity body (a stand-alone request's or a batch
// sub-request's). URL keys, when given, are authoritative; otherwise the body must carry both
// keys. The entity's strings share body's memory.
func decodeEntityBody(body string, urlKeys *resource) (*entity.Entity, error) {
	if strings.TrimSpace(body) == "" {
		if urlKeys == nil {
			return nil, azerr.New(azerr.PropertiesNeedValue)
		}
		return nil, azerr.New(azerr.InvalidInput)
	}
	e, kp, err := entity.DecodeJSONString(body)
	if err != nil {
		return nil, err
	}
	if urlKeys != nil {
		e.PartitionKey, e.RowKey = urlKeys.pk, urlKeys.rk
		return e, nil
	}
	if !kp.PartitionKey || !kp.RowKey {
		return nil, azerr.New(azerr.PropertiesNeedValue)
	}
	return e, nil
}

func (s *Server) insertEntity(c *call) (*reply, error) {
	body, err := readEntityBody(c)
	if err != nil {
		return nil, err
	}
	in, err := decodeEntityBody(body, nil)
	if err != nil {
		return nil, err
	}
	if err := s.checkSASRange(c, in.PartitionKey, in.RowKey); err != nil {
		return nil, err
	}
	if err := s.admit(c, partition.Op{Container: c.res.table, Key: in.PartitionKey, Kind: partition.KindInsert, Entities: 1}); err != nil {
		return nil, err
	}
	res, err := s.svc.Write(c.Ctx, c.Account, c.res.table, table.Op{Kind: table.Insert, Entity: in})
	if err != nil {
		return nil, err
	}
	return s.insertReply(c, res.Entity, preferValue(c.Header.Values("Prefer"))), nil
}

// insertReply builds the 201 (echo) or 204 (Prefer: return-no-content) answer of an insert.
func (s *Server) insertReply(c *call, e *entity.Entity, prefer string) *reply {
	rp := jsonReply(c, http.StatusCreated)
	rp.ETag = entity.ETag(e.Timestamp)
	rp.Location = c.entityURL(c.res.table, e.PartitionKey, e.RowKey)
	if prefer == "return-no-content" {
		rp.Status, rp.ContentType = http.StatusNoContent, ""
		rp.PreferenceApplied = "return-no-content"
		rp.DataServiceID = rp.Location
		return rp
	}
	if prefer == "return-content" {
		rp.PreferenceApplied = "return-content"
	}
	o := s.encodeOptions(c, c.res.table, nil)
	if c.level != entity.NoMetadata {
		o.Metadata = c.elementMetadata(c.res.table)
	}
	buf := s.bodies.Get()
	buf.B = entity.AppendJSON(buf.B[:0], e, o)
	rp.Body, rp.Pooled, rp.Pool = buf.B, buf, &s.bodies
	return rp
}

// entityOp turns an entity write (a changeset POST, or a PUT/MERGE/DELETE on an entity URL)
// into a table.Op.
func entityOp(op operation, ifMatch []string, in *entity.Entity) (table.Op, error) {
	var cond *table.IfMatch
	if len(ifMatch) > 0 {
		if len(ifMatch) > 1 {
			return table.Op{}, azerr.Newf(azerr.InvalidInput, "The etag value '%s' specified in one of the request headers is not valid. Please make sure only one etag value is specified and is valid.", strings.Join(ifMatch, ","))
		}
		m, err := table.ParseIfMatch(ifMatch[0])
		if err != nil {
			return table.Op{}, err
		}
		cond = &m
	}
	o := table.Op{Entity: in}
	switch op {
	case opInsertEntity: // a changeset POST; If-Match has no meaning for an insert
		o.Kind = table.Insert
	case opPutEntity:
		o.Kind = table.InsertOrReplace
		if cond != nil {
			o.Kind, o.IfMatch = table.Replace, *cond
		}
	case opMergeEntity:
		o.Kind = table.InsertOrMerge
		if cond != nil {
			o.Kind, o.IfMatch = table.Merge, *cond
		}
	case opDeleteEntity:
		// Azure requires If-Match ("*" or an ETag) on a delete; the SDKs always send it.
		if cond == nil {
			return table.Op{}, azerr.New(azerr.MissingRequiredHeader)
		}
		o.Kind, o.IfMatch = table.Delete, *cond
	}
	return o, nil
}

func (s *Server) writeEntity(c *call, op operation) (*reply, error) {
	in := &entity.Entity{PartitionKey: c.res.pk, RowKey: c.res.rk}
	if op != opDeleteEntity {
		body, err := readEntityBody(c)
		if err != nil {
			return nil, err
		}
		if in, err = decodeEntityBody(body, &c.res); err != nil {
			return nil, err
		}
	}
	o, err := entityOp(op, c.Header.Values("If-Match"), in)
	if err != nil {
		return nil, err
	}
	if err := s.checkSASRange(c, in.PartitionKey, in.RowKey); err != nil {
		return nil, err
	}
	kind := partition.KindUpdate
	if op == opDeleteEntity {
		kind = partition.KindDelete
	}
	if err := s.admit(c, partition.Op{Container: c.res.table, Key: in.PartitionKey, Kind: kind, Entities: 1}); err != nil {
		return nil, err
	}
	res, err := s.svc.Write(c.Ctx, c.Account, c.res.table, o)
	if err != nil {
		return nil, err
	}
	rp := &reply{Status: http.StatusNoContent}
	if res.Entity != nil {
		rp.ETag = entity.ETag(res.Entity.Timestamp)
	}
	return rp, nil
}

func (s *Server) queryEntities(c *call) (*reply, error) {
	var (
		q   table.Query
		sel []string
		err error
	)
	if strings.TrimSpace(c.query.filter) != "" {
		if q.Filter, err = query.Parse(c.query.filter); err != nil {
			return nil, err
		}
	}
	emptyPage := false
	if c.query.hasTop {
		if emptyPage, err = parseTop(c.query.top, &q.Top); err != nil {
			return nil, err
		}
	}
	if c.query.hasSelect {
		if sel, err = query.ParseSelect(c.query.selectList); err != nil {
			return nil, err
		}
	}
	if c.query.hasNextPK && c.query.nextPK != "" {
		q.HasNext = true
		if q.NextPartitionKey, err = query.DecodeToken(c.query.nextPK); err != nil {
			return nil, err
		}
		if c.query.nextRK != "" {
			if q.NextRowKey, err = query.DecodeToken(c.query.nextRK); err != nil {
				return nil, err
			}
		}
	}
	q.Bounds = sasBounds(c)
	if err := s.admitQuery(c, &q); err != nil {
		return nil, err
	}
	counting := s.parts != nil
	o := s.encodeOptions(c, c.res.table, sel)
	// The page writes each entity in the default element form at minimal metadata without
	// $select: the column cache may keep and reuse that JSON.
	q.ElementJSON = c.level == entity.MinimalMetadata && sel == nil
	buf := s.pages.Get()
	b := append(buf.B[:0], '{')
	if c.level != entity.NoMetadata {
		md := c.baseURL() + "/$metadata#" + c.res.table
		if sel != nil {
			md += "&$select=" + c.query.selectList
		}
		b = append(b, `"odata.metadata":`...)
		b = appendJSONString(b, md)
		b = append(b, ',')
	}
	b = append(b, `"value":[`...)
	n := 0
	var info table.PageInfo
	if emptyPage {
		// $top=0: no entities and no continuation, but the table must exist.
		if _, err = s.svc.GetTable(c.Ctx, c.Account, c.res.table); azerr.Is(err, azerr.ResourceNotFound) {
			err = azerr.New(azerr.TableNotFound) // what a query of a missing table answers
		}
		info.Plan = "none"
	} else {
		// Each entity goes from its stored form straight into the page (r is valid only
		// during the call, which is all AppendJSONRaw needs).
		info, err = s.svc.QueryEntities(c.Ctx, c.Account, c.res.table, q, func(r entity.Raw) (bool, error) {
			if n > 0 {
				b = append(b, ',')
			}
			n++
			if counting {
				s.p.NoteEntity(&c.Call, r.PartitionKey())
			}
			var err error
			b, err = entity.AppendJSONRaw(b, r, o)
			return len(b) < maxPageBytes, err
		})
	}
	if err != nil {
		buf.B = b
		s.pages.Put(buf)
		return nil, err
	}
	b = append(b, "]}"...)
	rp := jsonReply(c, http.StatusOK)
	h := http.Header{}
	if info.Next != nil {
		h.Set("x-ms-continuation-NextPartitionKey", query.EncodeToken(info.Next.PartitionKey))
		h.Set("x-ms-continuation-NextRowKey", query.EncodeToken(info.Next.RowKey))
	}
	h.Set("x-tablo-query-plan", planHeader(info, rangesHeader(c)))
	s.log.Debug("query", "request_id", c.RequestID, "plan", info.Plan, "scanned", info.Scanned, "returned", info.Returned)
	buf.B = b
	rp.Header, rp.Body, rp.Pooled, rp.Pool = h, b, buf, &s.pages
	return rp, nil
}

// parseTop parses a $top that was sent: an empty value leaves *top unset (0, a full page);
// empty reports $top=0, which Azure answers with an empty page.
func parseTop(v string, top *int) (empty bool, err error) {
	n, err := query.ParseTop(v)
	if err != nil {
		return false, err
	}
	if n < 0 {
		return false, nil
	}
	*top = n
	return n == 0, nil
}

// planHeader names the plan, the range partitions it touched (when known) and the work done.
func planHeader(info table.PageInfo, ranges string) string {
	return info.Plan + ranges + "; scanned=" + strconv.Itoa(info.Scanned) + "; returned=" + strconv.Itoa(info.Returned)
}

// ---- wire helpers ----

func appendJSONString(b []byte, s string) []byte { return entity.AppendJSONString(b, s) }
