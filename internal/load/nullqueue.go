package load

import (
	"bytes"
	"strconv"
	"time"

	"github.com/valyala/fasthttp"
)

// The null server also answers the Queue requests the queue workloads send (create and
// delete queue, put, get, peek and delete message) with canned responses, so a Queue
// benchmark has a do-nothing endpoint to compare with. Queue shapes never collide with
// Table ones: a Table request never PUTs or DELETEs a bare name, and no table path has a
// "messages" segment after the table name, and queue names are lower case ("Tables" is not).

// queueShape reports whether a path (after the account) and method are a Queue request.
func queueShape(path []byte, method []byte) bool {
	path = bytes.TrimPrefix(path, []byte("/"))
	name, rest, _ := bytes.Cut(path, []byte("/"))
	for _, c := range name {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			return false // not a queue name (Tables, $batch, t(...) are the Table service's)
		}
	}
	if len(name) == 0 {
		return false
	}
	if bytes.Equal(rest, []byte("messages")) || bytes.HasPrefix(rest, []byte("messages/")) {
		return true
	}
	return len(rest) == 0 && (string(method) == fasthttp.MethodPut || string(method) == fasthttp.MethodDelete)
}

func (h *nullHandler) serveQueue(ctx *fasthttp.RequestCtx, path []byte) {
	path = bytes.TrimPrefix(path, []byte("/"))
	_, rest, _ := bytes.Cut(path, []byte("/"))
	switch {
	case len(rest) == 0 && ctx.IsPut():
		ctx.SetStatusCode(fasthttp.StatusCreated)
	case len(rest) == 0 && ctx.IsDelete():
		ctx.SetStatusCode(fasthttp.StatusNoContent)
	case bytes.Equal(rest, []byte("messages")) && ctx.IsPost():
		h.queueMessages(ctx, fasthttp.StatusCreated, true, false)
	case bytes.Equal(rest, []byte("messages")) && ctx.IsGet():
		peek := bytes.EqualFold(ctx.QueryArgs().Peek("peekonly"), []byte("true"))
		h.queueMessages(ctx, fasthttp.StatusOK, false, peek)
	case bytes.HasPrefix(rest, []byte("messages/")) && ctx.IsDelete():
		ctx.SetStatusCode(fasthttp.StatusNoContent)
	default:
		h.fail(ctx, fasthttp.StatusMethodNotAllowed, "UnsupportedHttpVerb", string(ctx.Method())+" is not supported on this resource")
	}
}

// queueMessages answers with one canned message (a fresh id and receipt each time).
func (h *nullHandler) queueMessages(ctx *fasthttp.RequestCtx, status int, put, peek bool) {
	n := h.reqID.Add(1)
	now := time.Now().UTC().Format(time.RFC1123)
	id := "00000000-0000-0000-0000-" + leftPad(strconv.FormatUint(n, 16), 12)
	b := make([]byte, 0, 512)
	b = append(b, `<?xml version="1.0" encoding="utf-8"?><QueueMessagesList><QueueMessage><MessageId>`...)
	b = append(b, id...)
	b = append(b, "</MessageId><InsertionTime>"...)
	b = append(b, now...)
	b = append(b, "</InsertionTime><ExpirationTime>"...)
	b = append(b, now...)
	b = append(b, "</ExpirationTime>"...)
	if !peek {
		b = append(b, "<PopReceipt>AAAAAAAAAAA=</PopReceipt><TimeNextVisible>"...)
		b = append(b, now...)
		b = append(b, "</TimeNextVisible>"...)
	}
	if !put {
		b = append(b, "<DequeueCount>1</DequeueCount><MessageText>"...)
		b = append(b, queueMessage...)
		b = append(b, "</MessageText>"...)
	}
	b = append(b, "</QueueMessage></QueueMessagesList>"...)
	ctx.Response.Header.SetContentType("application/xml")
	ctx.SetStatusCode(status)
	ctx.SetBody(b)
}

func leftPad(s string, n int) string {
	for len(s) < n {
		s = "0" + s
	}
	return s
}
