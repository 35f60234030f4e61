package blob

import (
	"strings"
	"time"

	"github.com/tablo/tablo/internal/azerr"
	"github.com/tablo/tablo/internal/tagquery"
)

// Cond holds a request's conditional headers (blob.md §9.7). Zero times are absent.
type Cond struct {
	IfMatch, IfNoneMatch               string
	IfModifiedSince, IfUnmodifiedSince time.Time
	// LeaseID is x-ms-lease-id.
	LeaseID string
	// IfTags is x-ms-if-tags (nil: absent), checked against the blob's tags (tags.go).
	IfTags *tagquery.Expr
}

// NotModified is the error of a read whose If-None-Match / If-Modified-Since failed: the
// wire answers 304 without a body.
var NotModified = azerr.Newf(azerr.ConditionNotMet, "The condition specified using HTTP conditional header(s) is not met.")

// matchList reports whether etag is in a comma-separated list (or the list is *).
func matchList(list, etag string) bool {
	for _, e := range strings.Split(list, ",") {
		e = strings.TrimSpace(e)
		if e == "*" || e == etag {
			return true
		}
	}
	return false
}

// check evaluates the conditions against a resource (exists false: missing). read selects
// 304 for If-None-Match / If-Modified-Since; create selects 409 BlobAlreadyExists for
// If-None-Match: * on a write that creates.
func (c *Cond) check(exists bool, etag string, modified int64, read, create bool) error {
	mod := timeOf(modified).Truncate(time.Second)
	if c.IfMatch != "" && (!exists || !matchList(c.IfMatch, etag)) {
		return azerr.New(azerr.ConditionNotMet)
	}
	if !c.IfUnmodifiedSince.IsZero() && exists && mod.After(c.IfUnmodifiedSince) {
		return azerr.New(azerr.ConditionNotMet)
	}
	if c.IfNoneMatch != "" && exists && matchList(c.IfNoneMatch, etag) {
		switch {
		case read:
			return NotModified
		case create && strings.TrimSpace(c.IfNoneMatch) == "*":
			return azerr.New(azerr.BlobAlreadyExists)
		}
		return azerr.New(azerr.ConditionNotMet)
	}
	if !c.IfModifiedSince.IsZero() && exists && !mod.After(c.IfModifiedSince) {
		if read {
			return NotModified
		}
		return azerr.New(azerr.ConditionNotMet)
	}
	return nil
}
