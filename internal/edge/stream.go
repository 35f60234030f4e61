package edge

import (
	"github.com/valyala/fasthttp"

	"github.com/tablo/tablo/internal/httpserve"
)

// NewStreamingHTTPServer is NewHTTPServer for a service whose request bodies stream (Blob):
// the handler runs once the headers and at most 8 KiB of body are read, and reads the rest
// from fc.RequestBodyStream(), so memory does not grow with the body. The handler enforces
// its own size limits.
func (p *Pipeline) NewStreamingHTTPServer(handler fasthttp.RequestHandler) *httpserve.Server {
	s := p.NewHTTPServer(handler, 64<<10)
	s.HTTP.StreamRequestBody = true
	s.HTTP.DisableHeaderNamesNormalizing = p.keepCase
	return s
}
