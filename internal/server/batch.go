package server

import (
	"bytes"
	"errors"
	"net/http"
	"strings"

	"github.com/tablo/tablo/internal/auth"
	"github.com/tablo/tablo/internal/azerr"
	"github.com/tablo/tablo/internal/batch"
	"github.com/tablo/tablo/internal/entity"
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
	body, err := readBody(c, maxBatchBody)
	if err != nil {
		return nil, err
	}
	req, err := batch.Parse(c.r.Header.Get("Content-Type"), body, batch.Limits{})
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
	var opErr error // the first operation that cannot be decoded, at index len(ops)
	for i := range req.Operations {
		bo, err := s.decodeBatchOp(c, &req.Operations[i])
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
	subs := make([]batch.SubResponse, len(ops))
	if len(ops) > 0 {
		results, err := s.svc.Batch(c.r.Context(), c.account, tableName, tops)
		if err != nil {
			var be *table.BatchError
			if errors.As(err, &be) {
				return s.batchFailure(c, be.Index, be.Err), nil
			}
			if azerr.Is(err, azerr.TableNotFound) {
				return s.batchFailure(c, 0, err), nil
			}
			return nil, err
		}
		for i := range ops {
			subs[i] = s.batchSuccess(c, &ops[i], results[i])
		}
	}
	return s.batchReply(c, func(w *bytes.Buffer, outer string) error {
		return batch.WriteResponse(w, outer, batch.NewBoundary(batch.ChangesetResponsePrefix), subs)
	})
}

// batchAccountPrefix is the path-style account segment the outer request used, which
// absolute sub-request URLs repeat: "/{account}" or "/{account}-secondary"; "" in host style.
func batchAccountPrefix(c *call) string {
	if !c.pathStyle {
		return ""
	}
	if c.secondary {
		return "/" + c.account + "-secondary"
	}
	return "/" + c.account
}

// decodeBatchOp routes, authorizes and decodes one sub-request through the same code as the
// stand-alone operations.
func (s *Server) decodeBatchOp(c *call, bop *batch.Operation) (batchOp, error) {
	rawPath, rawQuery, err := bop.PathAndQuery(batchAccountPrefix(c))
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
	q, err := parseQuery(rawQuery)
	if err != nil {
		return batchOp{}, err
	}
	level, err := negotiateLevel(q.format, bop.Header.Get("Accept"))
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
	bo := batchOp{res: res, level: level, prefer: preferValue(bop.Header)}
	var in *entity.Entity
	switch op {
	case opInsertEntity:
		in, err = decodeEntityBody(bop.Body, nil)
	case opDeleteEntity:
		in = &entity.Entity{PartitionKey: res.pk, RowKey: res.rk}
	default:
		in, err = decodeEntityBody(bop.Body, &res)
	}
	if err != nil {
		return batchOp{}, err
	}
	if bo.op, err = entityOp(op, bop.Header.Values("If-Match"), in); err != nil {
		return batchOp{}, err
	}
	if c.sas != nil {
		sub := &call{r: &http.Request{Header: bop.Header}}
		if err := c.sas.Authorize(authOperation(op, sub), res.table); err != nil {
			return batchOp{}, err
		}
		if err := c.sas.CheckKey(in.PartitionKey, in.RowKey); err != nil {
			return batchOp{}, err
		}
	}
	return bo, nil
}

func (s *Server) batchSuccess(c *call, bo *batchOp, r table.Result) batch.SubResponse {
	switch bo.op.Kind {
	case table.Delete:
		return batch.Deleted()
	case table.Insert:
		e := r.Entity
		loc := c.baseURL() + "/" + entity.EntityPath(bo.res.table, e.PartitionKey, e.RowKey)
		etag := entity.ETag(e.Timestamp)
		if bo.prefer == "return-no-content" {
			return batch.InsertedNoContent(loc, etag)
		}
		sc := &call{r: c.r, account: c.account, pathStyle: c.pathStyle, level: bo.level, res: bo.res}
		o := s.encodeOptions(sc, bo.res.table, nil)
		if bo.level != entity.NoMetadata {
			o.Metadata = c.baseURL() + "/$metadata#" + bo.res.table + "/@Element"
		}
		return batch.Inserted(loc, etag, jsonContentType(bo.level), entity.AppendJSON(nil, e, o), bo.prefer == "return-content")
	}
	return batch.Updated(entity.ETag(r.Entity.Timestamp))
}

func (s *Server) batchFailure(c *call, index int, err error) *reply {
	sub := batch.Failed(index, err, c.requestID, s.now())
	rp, werr := s.batchReply(c, func(w *bytes.Buffer, outer string) error {
		return batch.WriteResponse(w, outer, batch.NewBoundary(batch.ChangesetResponsePrefix), []batch.SubResponse{sub})
	})
	if werr != nil {
		s.log.Error("batch failure response", "request_id", c.requestID, "err", werr)
		return &reply{status: http.StatusInternalServerError, header: http.Header{}}
	}
	return rp
}

func (s *Server) batchReply(c *call, write func(w *bytes.Buffer, outer string) error) (*reply, error) {
	outer := batch.NewBoundary(batch.BatchResponsePrefix)
	var buf bytes.Buffer
	if err := write(&buf, outer); err != nil {
		return nil, err
	}
	h := http.Header{}
	h.Set("Content-Type", batch.ResponseContentType(outer))
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Content-Type-Options", "nosniff")
	return &reply{status: http.StatusAccepted, header: h, body: buf.Bytes()}, nil
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
		e, err := s.svc.GetEntity(c.r.Context(), c.account, res.table, res.pk, res.rk)
		if err != nil {
			return batch.SubResponse{}, err
		}
		sc := &call{r: c.r, account: c.account, pathStyle: c.pathStyle, level: level, res: res}
		o := s.encodeOptions(sc, res.table, nil)
		if level != entity.NoMetadata {
			o.Metadata = c.baseURL() + "/$metadata#" + res.table + "/@Element"
		}
		return batch.Retrieved(entity.ETag(e.Timestamp), jsonContentType(level), entity.AppendJSON(nil, e, o)), nil
	}()
	if err != nil {
		sub = batch.Failed(0, err, c.requestID, s.now())
	}
	return s.batchReply(c, func(w *bytes.Buffer, outer string) error {
		return batch.WriteRetrieveResponse(w, outer, sub)
	})
}
