package edge

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/tablo/tablo/internal/azerr"
	"github.com/tablo/tablo/internal/httpserve"
)

// The HTTP layer is fasthttp rather than net/http: measured side by side with the same SDK
// client, a do-nothing handler costs about two thirds of net/http's CPU per request on
// fasthttp (net/http starts a goroutine and re-arms read deadlines per request to watch
// the connection while the handler runs), and point operations spend most of their CPU in
// the HTTP layer (docs/benchmarks.md). Package httpserve adds what net/http did for us.

// readBufferSize bounds a request's line and headers. A URL naming two 1 KiB keys of
// three-byte characters, percent-encoded, is about 18 KiB.
const readBufferSize = 32 << 10

// NewHTTPServer returns the HTTP server running handler: bodies are read whole up to
// maxBody (the largest the service accepts), and a larger one gets Azure's error.
func (p *Pipeline) NewHTTPServer(handler fasthttp.RequestHandler, maxBody int) *httpserve.Server {
	return &httpserve.Server{HTTP: &fasthttp.Server{
		Handler:              handler,
		ErrorHandler:         p.handleRequestError,
		Name:                 "Tablo",
		NoDefaultContentType: true, // a reply without a body has no Content-Type
		MaxRequestBodySize:   maxBody,
		ReadBufferSize:       readBufferSize,
		ReadTimeout:          5 * time.Minute,
		WriteTimeout:         5 * time.Minute,
		IdleTimeout:          2 * time.Minute,
		CloseOnShutdown:      true,
		Logger:               fasthttpLogger{p.log},
	}}
}

// handleRequestError answers a request fasthttp could not read. A body over the server's
// limit gets Azure's RequestBodyTooLarge; other malformed requests get fasthttp's plain
// answers (400, 408, 431), as net/http would give. The client is likely still sending, so
// the connection lingers before it closes.
func (p *Pipeline) handleRequestError(fc *fasthttp.RequestCtx, err error) {
	httpserve.Linger(fc)
	if !errors.Is(err, fasthttp.ErrBodyTooLarge) {
		var small *fasthttp.ErrSmallBuffer
		var ne net.Error
		switch {
		case errors.As(err, &small):
			fc.Error("Request header too large", fasthttp.StatusRequestHeaderFieldsTooLarge)
		case errors.As(err, &ne) && ne.Timeout():
			fc.Error("Request timeout", fasthttp.StatusRequestTimeout)
		default:
			fc.Error("Bad request", fasthttp.StatusBadRequest)
		}
		return
	}
	var c Call
	p.Begin(&c, fc)
	p.WriteError(&c, azerr.New(azerr.RequestBodyTooLarge))
	p.LogRequest(&c, nil)
}

// fasthttpLogger sends fasthttp's own messages to the log. They are connection-level
// errors a client causes (resets, oversized bodies, timeouts), hence Info, not Warn.
type fasthttpLogger struct{ log *slog.Logger }

func (l fasthttpLogger) Printf(format string, args ...any) {
	l.log.Info("http", "msg", fmt.Sprintf(format, args...))
}
