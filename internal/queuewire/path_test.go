package queuewire

import (
	"strings"
	"testing"

	"github.com/tablo/tablo/internal/azerr"
	"github.com/tablo/tablo/internal/queue"
)

// parsePathReference is the path grammar spelled out with strings.Split.
func parsePathReference(raw string) (kind resourceKind, q, msg string, err error) {
	p := strings.TrimPrefix(raw, "/")
	if p == "" {
		return resService, "", "", nil
	}
	parts := strings.Split(p, "/")
	if len(parts) > 1 && parts[len(parts)-1] == "" {
		parts = parts[:len(parts)-1]
	}
	switch {
	case len(parts) == 1:
		kind = resQueue
	case len(parts) == 2 && parts[1] == "messages":
		kind = resMessages
	case len(parts) == 3 && parts[1] == "messages" && parts[2] != "":
		kind, msg = resMessage, parts[2]
	default:
		return 0, "", "", azerr.New(azerr.InvalidURI)
	}
	return kind, parts[0], msg, queue.ValidateName(parts[0])
}

func FuzzParsePath(f *testing.F) {
	for _, p := range []string{"", "/", "//", "/q1q", "/q1q/", "/q1q//", "/q1q/messages", "/q1q/messages/", "/q1q/messages/id",
		"/q1q/messages/id/", "/q1q/messages/id/x", "/q1q/other", "/q1q/messages//", "/a/b/c/d/e", "/q1q/messages/id//"} {
		f.Add(p)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		c := &call{}
		c.RawPath = raw
		err := parsePath(c)
		kind, q, msg, werr := parsePathReference(raw)
		if strings.Contains(raw, "%") {
			return // the reference does not decode
		}
		if (err == nil) != (werr == nil) || err != nil && azerr.From(err).Code != azerr.From(werr).Code {
			t.Fatalf("%q: error %v, want %v", raw, err, werr)
		}
		if err == nil && (c.kind != kind || c.queue != q || c.message != msg) {
			t.Fatalf("%q: %v %q %q, want %v %q %q", raw, c.kind, c.queue, c.message, kind, q, msg)
		}
	})
}
