package server

import (
	"errors"
	"net/http"
	"slices"
	"strings"

	"github.com/tablo/tablo/internal/auth"
	"github.com/tablo/tablo/internal/azerr"
	"github.com/tablo/tablo/internal/batch"
	"github.com/tablo/tablo/internal/edge"
	"github.com/tablo/tablo/internal/entity"
	"github.com/tablo/tablo/internal/partition"
	"github.com/tablo/tablo/internal/table"
)

// batchOp is one decoded sub-request of a changeset.
type batchOp struct {
	op     table.Op
	res    resource
	level  entity.MetadataLevel
	prefer string
}

// batch executes an entity group transaction. Malformed outer requests get a plain error
// response; anything that concerns one operation is answered 202 with the single failing
// sub-response, as Azure does.
func (s *Server) batch(c *call) (*reply, error) {
	// The body is fasthttp's buffer: batch.Parse copies what the operations keep (each
	// part's text), and nothing below retains an Operation's Body, which aliases it.
	body, err := readBody(c, maxBatchBody)
	if err != nil {
		return nil, err
	}
	req, err := batch.Parse(c.Header.Get("Content-Type"), body, batch.Limits{})
	var parseErr *batch.OpError
	if errors.As(err, &parseErr) {
		return s.batchFailure(c, parseErr.Index, parseErr.Err), nil
	}
	if err != nil {
		return nil, err
	}
	if req.Retrieve {
		return s.batchRetrieve(c, req)
	}
	ops := make([]batchOp, 0, len(req.Operations))
	tops := make([]table.Op, 0, len(req.Operations))
	tableName := ""
	prefix := batchAccountPrefix(c)
	var opErr error // the first operation that cannot be decoded, at index len(ops)
	var dec changesetDecoder
	for i := range req.Operations {
		bo, err := s.decodeBatchOp(c, &req.Operations[i], prefix, &dec)
		if err == nil && tableName != "" && !strings.EqualFold(tableName, bo.res.table) {
			err = azerr.Newf(azerr.InvalidInput, "All operations in a batch must address the same table.")
		}
		if err != nil {
			opErr = err
			break
		}
		tableName = bo.res.table
		ops = append(ops, bo)
		tops = append(tops, bo.op)
	}
	// Report the lowest failing index: a partition or duplicate-row violation among the
	// operations before the undecodable one comes first.
	if len(tops) > 0 {
		if err := table.CheckBatchShape(tops); err != nil {
			var be *table.BatchError
			if errors.As(err, &be) {
				return s.batchFailure(c, be.Index, be.Err), nil
			}
			return nil, err
		}
	}
	if opErr != nil {
		return s.batchFailure(c, len(ops), opErr), nil
	}
	var results []table.Result
	if len(ops) > 0 {
		// The whole batch is admitted, or refused, before any of it runs: a fault or a
		// target never splits it.
		if err := s.admit(c, partition.Op{Container: tableName, Key: tops[0].Entity.PartitionKey, Kind: partition.KindBatch, Entities: len(tops)}); err != nil {
			return nil, err
		}
		results, err = s.svc.Batch(c.Ctx, c.Account, tableName, tops)
		if err != nil {
			if edge.EngineFailure(err) {
				return nil, err
			}
			var be *table.BatchError
			if errors.As(err, &be) {
				return s.batchFailure(c, be.Index, be.Err), nil
			}
			if azerr.Is(err, azerr.TableNotFound) {
				return s.batchFailure(c, 0, err), nil
			}
			return nil, err
		}
	}
	return s.batchReply(func(dst []byte, outer string) ([]byte, error) {
		w := batch.NewChangesetWriter(dst, outer, batch.NewBoundary(batch.ChangesetResponsePrefix))
		s.writeBatchSuccesses(&w, c, ops, results)
		return w.Finish()
	})
}

// batchAccountPrefix is the path-style account segment the outer request used, which
// absolute sub-request URLs repeat: "/{account}" or "/{account}-secondary"; "" in host style.
func batchAccountPrefix(c *call) string {
	if !c.PathStyle {
		return ""
	}
	if c.Secondary {
		return "/" + c.Account + "-secondary"
	}
	return "/" + c.Account
}

// changesetDecoder is decodeBatchOp's state across one changeset. It keeps the last decoded
// query string, metadata level and Prefer header: SDKs repeat the same ones on every
// operation, so each is decoded once per batch rather than once per operation (only
// successful decodings are kept).
type changesetDecoder struct {
	rawQuery string
	query    queryParams
	hasQuery bool

	format, accept string
	level          entity.MetadataLevel
	hasLevel       bool

	preferHeader []string
	prefer       string
	hasPrefer    bool
}

func (m *changesetDecoder) parseQuery(raw string) (queryParams, error) {
	if m.hasQuery && raw == m.rawQuery {
		return m.query, nil
	}
	q, err := parseQuery(raw)
	if err == nil {
		m.rawQuery, m.query, m.hasQuery = raw, q, true
	}
	return q, err
}

func (m *changesetDecoder) negotiateLevel(format, accept string) (entity.MetadataLevel, error) {
	if m.hasLevel && format == m.format && accept == m.accept {
		return m.level, nil
	}
	l, err := negotiateLevel(format, accept)
	if err == nil {
		m.format, m.accept, m.level, m.hasLevel = format, accept, l, true
	}
	return l, err
}

func (m *changesetDecoder) preferValue(h http.Header) string {
	vs := h["Prefer"] // h.Values("Prefer"): batch.Parse stores canonical keys
	if m.hasPrefer && slices.Equal(vs, m.preferHeader) {
		return m.prefer
	}
	m.preferHeader, m.prefer, m.hasPrefer = vs, preferValue(vs), true
	return m.prefer
}

// firstValue is http.Header.Get for a value list looked up by its canonical key: batch.Parse
// stores sub-request headers under canonical keys, so direct map lookups spare Get's
// canonicalization.
func firstValue(vs []string) string {
	if len(vs) == 0 {
		return ""
	}
	return vs[0]
}

// decodeBatchOp routes, authorizes and decodes one sub-request through the same code as the
// stand-alone operations. prefix is batchAccountPrefix(c).
func (s *Server) decodeBatchOp(c *call, bop *batch.Operation, prefix string, dec *changesetDecoder) (batchOp, error) {
	rawPath, rawQuery, err := bop.PathAndQuery(prefix)
	if err != nil {
		return batchOp{}, err
	}
	p, err := pathUnescape(rawPath)
	if err != nil {
		return batchOp{}, err
	}
	res, err := parseResource(strings.TrimPrefix(p, "/"))
	if err != nil {
		return batchOp{}, err
	}
	q, err := dec.parseQuery(rawQuery)
	if err != nil {
		return batchOp{}, err
	}
	level, err := dec.negotiateLevel(q.format, firstValue(bop.Header["Accept"]))
	if err != nil {
		return batchOp{}, err
	}
	method := strings.ToUpper(bop.Method)
	var op operation
	switch {
	case res.kind == resEntities && method == http.MethodPost:
		op = opInsertEntity
	case res.kind == resEntity && method == http.MethodPut:
		op = opPutEntity
	case res.kind == resEntity && (method == "MERGE" || method == http.MethodPatch):
		op = opMergeEntity
	case res.kind == resEntity && method == http.MethodDelete:
		op = opDeleteEntity
	default:
		return batchOp{}, azerr.Newf(azerr.InvalidInput, "The batch request contains an operation that is not supported in a change set.")
	}
	bo := batchOp{res: res, level: level, prefer: dec.preferValue(bop.Header)}
	var in *entity.Entity
	switch op {
	case opInsertEntity:
		in, err = decodeEntityBody(bop.BodyText, nil)
	case opDeleteEntity:
		in = &entity.Entity{PartitionKey: res.pk, RowKey: res.rk}
	default:
		in, err = decodeEntityBody(bop.BodyText, &res)
	}
	if err != nil {
		return batchOp{}, err
	}
	ifMatch := bop.Header["If-Match"]
	if bo.op, err = entityOp(op, ifMatch, in); err != nil {
		return batchOp{}, err
	}
	if c.sas != nil {
		if err := c.sas.Authorize(authOperation(op, len(ifMatch) > 0), res.table); err != nil {
			return batchOp{}, err
		}
		if err := c.sas.CheckKey(in.PartitionKey, in.RowKey); err != nil {
			return batchOp{}, err
		}
	}
	return bo, nil
}

// writeBatchSuccesses writes the sub-responses of an applied changeset straight into the
// response: each Location is rendered into one reused buffer, and the ETag once per distinct
// Timestamp (a batch usually has one).
func (s *Server) writeBatchSuccesses(w *batch.ChangesetWriter, c *call, ops []batchOp, results []table.Result) {
	var locBuf [256]byte
	loc := append(append(locBuf[:0], c.baseURL()...), '/')
	base := len(loc)
	etag, etagTicks := "", int64(0)
	for i := range ops {
		bo, e := &ops[i], results[i].Entity
		if bo.op.Kind == table.Delete {
			sub := batch.Deleted()
			w.Write(&sub)
			continue
		}
		if etag == "" || e.Timestamp != etagTicks {
			etag, etagTicks = entity.ETag(e.Timestamp), e.Timestamp
		}
		if bo.op.Kind != table.Insert {
			sub := batch.Updated(etag)
			w.Write(&sub)
			continue
		}
		loc = entity.AppendEntityPath(loc[:base], bo.res.table, e.PartitionKey, e.RowKey)
		if bo.prefer == "return-no-content" {
			w.WriteInsertedNoContent(loc, etag)
			continue
		}
		sub := s.inserted(c, bo, e, string(loc), etag)
		w.Write(&sub)
	}
}

// inserted is the sub-response of an insert answered with the stored entity e.
func (s *Server) inserted(c *call, bo *batchOp, e *entity.Entity, loc, etag string) batch.SubResponse {
	sc := &call{Call: edge.Call{FC: c.FC, Host: c.Host, Account: c.Account, PathStyle: c.PathStyle}, level: bo.level, res: bo.res}
	o := s.encodeOptions(sc, bo.res.table, nil)
	if bo.level != entity.NoMetadata {
		o.Metadata = c.baseURL() + "/$metadata#" + bo.res.table + "/@Element"
	}
	return batch.Inserted(loc, etag, jsonContentType(bo.level), entity.AppendJSON(nil, e, o), bo.prefer == "return-content")
}

func (s *Server) batchFailure(c *call, index int, err error) *reply {
	sub := batch.Failed(index, err, c.RequestID, s.now())
	rp, werr := s.batchReply(func(dst []byte, outer string) ([]byte, error) {
		return batch.AppendResponse(dst, outer, batch.NewBoundary(batch.ChangesetResponsePrefix), []batch.SubResponse{sub})
	})
	if werr != nil {
		s.log.Error("batch failure response", "request_id", c.RequestID, "err", werr)
		return &reply{Status: http.StatusInternalServerError, Header: http.Header{}}
	}
	return rp
}

// batchReply is the 202 response whose multipart body write appends to a pooled buffer,
// returned to the pool once the reply has been sent.
func (s *Server) batchReply(write func(dst []byte, outer string) ([]byte, error)) (*reply, error) {
	outer := batch.NewBoundary(batch.BatchResponsePrefix)
	buf := s.pages.Get()
	b, err := write(buf.B[:0], outer)
	buf.B = b
	if err != nil {
		s.pages.Put(buf)
		return nil, err
	}
	return &reply{
		Status:      http.StatusAccepted,
		ContentType: batch.ResponseContentType(outer),
		NoCache:     true,
		Body:        b,
		Pooled:      buf,
		Pool:        &s.pages,
	}, nil
}

// batchRetrieve answers the legacy single-GET batch.
func (s *Server) batchRetrieve(c *call, req *batch.Request) (*reply, error) {
	bop := &req.Operations[0]
	sub, err := func() (batch.SubResponse, error) {
		rawPath, rawQuery, err := bop.PathAndQuery(batchAccountPrefix(c))
		if err != nil {
			return batch.SubResponse{}, err
		}
		p, err := pathUnescape(rawPath)
		if err != nil {
			return batch.SubResponse{}, err
		}
		res, err := parseResource(strings.TrimPrefix(p, "/"))
		if err != nil {
			return batch.SubResponse{}, err
		}
		if res.kind != resEntity {
			return batch.SubResponse{}, azerr.New(azerr.InvalidInput)
		}
		q, err := parseQuery(rawQuery)
		if err != nil {
			return batch.SubResponse{}, err
		}
		level, err := negotiateLevel(q.format, bop.Header.Get("Accept"))
		if err != nil {
			return batch.SubResponse{}, err
		}
		if c.sas != nil {
			if err := c.sas.Authorize(auth.GetEntity, res.table); err != nil {
				return batch.SubResponse{}, err
			}
			if err := c.sas.CheckKey(res.pk, res.rk); err != nil {
				return batch.SubResponse{}, err
			}
		}
		e, err := s.svc.GetEntity(c.Ctx, c.Account, res.table, res.pk, res.rk)
		if err != nil {
			return batch.SubResponse{}, err
		}
		sc := &call{Call: edge.Call{FC: c.FC, Host: c.Host, Account: c.Account, PathStyle: c.PathStyle}, level: level, res: res}
		o := s.encodeOptions(sc, res.table, nil)
		if level != entity.NoMetadata {
			o.Metadata = c.baseURL() + "/$metadata#" + res.table + "/@Element"
		}
		return batch.Retrieved(entity.ETag(e.Timestamp), jsonContentType(level), entity.AppendJSON(nil, e, o)), nil
	}()
	if err != nil {
		sub = batch.Failed(0, err, c.RequestID, s.now())
	}
	return s.batchReply(func(dst []byte, outer string) ([]byte, error) {
		return batch.AppendRetrieveResponse(dst, outer, sub)
	})
}
