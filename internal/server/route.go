package server

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/tablo/tablo/internal/azerr"
	"github.com/tablo/tablo/internal/entity"
)

// operation is one Table service operation, chosen by route from the verb and resource.
type operation uint8

const (
	opQueryTables operation = iota + 1
	opCreateTable
	opGetTable
	opDeleteTable
	opQueryEntities
	opGetEntity
	opInsertEntity
	opPutEntity    // Update (with If-Match) or Insert Or Replace (without)
	opMergeEntity  // Merge (with If-Match) or Insert Or Merge (without)
	opDeleteEntity //
	opBatch
	opGetACL
	opSetACL
	opGetServiceProperties
	opSetServiceProperties
	opGetServiceStats
	opPreflight
)

// queryParams are the query-string parameters Tablo reads, decoded with form semantics
// (Go's SDK percent-encodes the '$' of names and writes spaces as '+').
type queryParams struct {
	format, filter, selectList, top string
	hasFilter, hasSelect, hasTop    bool
	nextPK, nextRK, nextTable       string
	hasNextPK, hasNextRK            bool
	comp, restype                   string
	values                          url.Values
}

func parseQuery(raw string) (queryParams, error) {
	if raw == "" {
		return queryParams{}, nil // most point operations: no map to build
	}
	v, err := parseForm(raw)
	if err != nil {
		return queryParams{}, err
	}
	q := queryParams{values: v}
	get := func(name string) (string, bool) {
		vs, ok := v[name]
		if !ok || len(vs) == 0 {
			return "", false
		}
		return vs[0], true
	}
	q.format, _ = get("$format")
	q.filter, q.hasFilter = get("$filter")
	q.selectList, q.hasSelect = get("$select")
	q.top, q.hasTop = get("$top")
	q.nextPK, q.hasNextPK = get("NextPartitionKey")
	q.nextRK, q.hasNextRK = get("NextRowKey")
	q.nextTable, _ = get("NextTableName")
	q.comp, _ = get("comp")
	q.restype, _ = get("restype")
	return q, nil
}

// parseForm decodes a query string like url.ParseQuery, except that ';' is an ordinary
// character: clients put $format=application/json;odata=… in URLs unencoded.
func parseForm(raw string) (url.Values, error) {
	v := url.Values{}
	for raw != "" {
		var pair string
		pair, raw, _ = strings.Cut(raw, "&")
		if pair == "" {
			continue
		}
		k, val, _ := strings.Cut(pair, "=")
		k, err1 := url.QueryUnescape(k)
		val, err2 := url.QueryUnescape(val)
		if err1 != nil || err2 != nil {
			return nil, azerr.New(azerr.InvalidQueryParameterValue)
		}
		v[k] = append(v[k], val)
	}
	return v, nil
}

// negotiateLevel picks the JSON metadata level: $format wins over Accept.
func negotiateLevel(format, accept string) (entity.MetadataLevel, error) {
	if format != "" {
		l, ok := entity.ParseMetadataLevel(format)
		if !ok {
			return 0, azerr.Newf(azerr.InvalidInput, "One of the request inputs is not valid.")
		}
		return l, nil
	}
	if l, ok := entity.ParseMetadataLevel(accept); ok {
		return l, nil
	}
	return entity.MinimalMetadata, nil
}

func pathUnescape(p string) (string, error) {
	s, err := url.PathUnescape(p)
	if err != nil {
		return "", azerr.New(azerr.InvalidURI)
	}
	return s, nil
}

// route maps the verb and resource to an operation, with Azure's errors for unknown verbs.
func route(method string, c *call) (operation, error) {
	if method == http.MethodOptions {
		return opPreflight, nil
	}
	q := &c.query
	switch c.res.kind {
	case resService:
		if q.restype != "service" {
			return 0, azerr.New(azerr.InvalidQueryParameterValue)
		}
		switch {
		case q.comp == "properties" && method == http.MethodGet:
			return opGetServiceProperties, nil
		case q.comp == "properties" && method == http.MethodPut:
			return opSetServiceProperties, nil
		case q.comp == "stats" && method == http.MethodGet:
			return opGetServiceStats, nil
		case q.comp != "properties" && q.comp != "stats":
			return 0, azerr.New(azerr.InvalidQueryParameterValue)
		}
		return 0, azerr.New(azerr.UnsupportedHTTPVerb)
	case resTables:
		switch method {
		case http.MethodGet:
			return opQueryTables, nil
		case http.MethodPost:
			return opCreateTable, nil
		}
		return 0, azerr.New(azerr.MethodNotAllowed)
	case resTable:
		switch method {
		case http.MethodGet:
			return opGetTable, nil
		case http.MethodDelete:
			return opDeleteTable, nil
		}
		return 0, azerr.New(azerr.MethodNotAllowed)
	case resBatch:
		if method == http.MethodPost {
			return opBatch, nil
		}
		return 0, azerr.New(azerr.MethodNotAllowed)
	case resEntities:
		if q.comp == "acl" {
			switch method {
			case http.MethodGet, http.MethodHead:
				return opGetACL, nil
			case http.MethodPut:
				return opSetACL, nil
			}
			return 0, azerr.New(azerr.UnsupportedHTTPVerb)
		}
		if q.comp != "" {
			return 0, azerr.New(azerr.InvalidQueryParameterValue)
		}
		switch method {
		case http.MethodGet:
			return opQueryEntities, nil
		case http.MethodPost:
			return opInsertEntity, nil
		}
		return 0, azerr.New(azerr.MethodNotAllowed)
	case resEntity:
		switch method {
		case http.MethodGet:
			return opGetEntity, nil
		case http.MethodPut:
			return opPutEntity, nil
		case "MERGE", http.MethodPatch:
			return opMergeEntity, nil
		case http.MethodDelete:
			return opDeleteEntity, nil
		}
		return 0, azerr.New(azerr.MethodNotAllowed)
	}
	return 0, azerr.New(azerr.InvalidURI)
}

// preferValue returns the Prefer header's return-no-content or return-content, or "".
func preferValue(h http.Header) string {
	for _, v := range h.Values("Prefer") {
		for v != "" {
			var p string
			p, v, _ = strings.Cut(v, ",")
			switch strings.TrimSpace(p) {
			case "return-no-content":
				return "return-no-content"
			case "return-content":
				return "return-content"
			}
		}
	}
	return ""
}
