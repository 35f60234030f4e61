package entity

import "strings"

// MetadataLevel is the OData JSON flavour of a response (spec table-api.md §3.1). The zero
// value is MinimalMetadata, the default every SDK asks for.
type MetadataLevel uint8

// The three JSON metadata levels.
const (
	MinimalMetadata MetadataLevel = iota
	NoMetadata
	FullMetadata
)

// String returns the odata= parameter value, e.g. "minimalmetadata".
func (l MetadataLevel) String() string {
	switch l {
	case NoMetadata:
		return "nometadata"
	case FullMetadata:
		return "fullmetadata"
	}
	return "minimalmetadata"
}

// ContentType is the response Content-Type Azure sends for this level.
func (l MetadataLevel) ContentType() string {
	return "application/json;odata=" + l.String() + ";streaming=true;charset=utf-8"
}

// ParseMetadataLevel reads a $format value or an Accept header. Accept may list several
// media ranges; the first one that names a JSON level wins (q-values are ignored).
// "application/json" without odata=, "json", "*/*", "application/*" and an empty value mean
// MinimalMetadata. ok is false when nothing was recognised (e.g. application/atom+xml); the
// level is then MinimalMetadata and the caller decides whether to refuse.
func ParseMetadataLevel(s string) (level MetadataLevel, ok bool) {
	if strings.TrimSpace(s) == "" {
		return MinimalMetadata, true
	}
	for s != "" {
		var item string
		item, s, _ = strings.Cut(s, ",")
		if l, ok := parseMediaRange(item); ok {
			return l, true
		}
	}
	return MinimalMetadata, false
}

func parseMediaRange(item string) (MetadataLevel, bool) {
	mediaType, params, _ := strings.Cut(item, ";")
	mediaType = strings.TrimSpace(mediaType)
	switch {
	case strings.EqualFold(mediaType, "*/*"), strings.EqualFold(mediaType, "application/*"),
		strings.EqualFold(mediaType, "json"):
		return MinimalMetadata, true
	case !strings.EqualFold(mediaType, "application/json"):
		return 0, false
	}
	for params != "" {
		var p string
		p, params, _ = strings.Cut(params, ";")
		key, value, _ := strings.Cut(p, "=")
		if !strings.EqualFold(strings.TrimSpace(key), "odata") {
			continue
		}
		switch value = strings.TrimSpace(value); {
		case strings.EqualFold(value, "nometadata"):
			return NoMetadata, true
		case strings.EqualFold(value, "minimalmetadata"):
			return MinimalMetadata, true
		case strings.EqualFold(value, "fullmetadata"):
			return FullMetadata, true
		}
		return 0, false // odata=verbose and other unknown levels
	}
	return MinimalMetadata, true
}
