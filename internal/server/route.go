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

// writes reports whether op changes anything (refused on the read-only secondary). A $batch
// counts as a write even if it only retrieves: it is a POST, which the secondary refuses.
func (op operation) writes() bool {
	switch op {
	case opCreateTable, opDeleteTable, opInsertEntity, opPutEntity, opMergeEntity, opDeleteEntity,
		opBatch, opSetACL, opSetServiceProperties:
		return true
	}
	return false
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

// preferValue returns return-no-content or return-content from the values of a Prefer
// header, or "".
func preferValue(values []string) string {
	for _, v := range values {
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
