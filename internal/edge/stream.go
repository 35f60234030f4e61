package edge

import (
	"github.com/valyala/fasthttp"

	"github.com/tablo/tablo/internal/httpserve"
)

// NewStreamingHTTPServer is NewHTTPServer for a service whose request bodies stream (Blob):
// the handler runs once the headers and at most 8 KiB of body are read, and reads the rest
// from fc.RequestBodyStream(), so memory does not grow with the body. The handler enforces
// its own size limits. A chunked body it leaves unread closes the connection after the answer.
func (p *Pipeline) NewStreamingHTTPServer(handler fasthttp.RequestHandler) *httpserve.Server {
	s := p.NewHTTPServer(func(fc *fasthttp.RequestCtx) {
		handler(fc)
		if fc.Request.Header.ContentLength() == -1 && fc.RequestBodyStream() != nil && !fc.Response.ConnectionClose() {
			// A chunked body the handler did not read to its end would be parsed as the
			// next request on this connection: close it after the answer instead.
			fc.SetConnectionClose()
		}
	}, 64<<10)
	s.HTTP.StreamRequestBody = true
	s.HTTP.DisableHeaderNamesNormalizing = p.keepCase
	return s
}
