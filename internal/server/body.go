package server

import (
	"github.com/tablo/tablo/internal/azerr"
)

// readBody returns the request body (fasthttp has read it whole, chunked or not, within the
// server's MaxRequestBodySize); more than limit bytes is RequestBodyTooLarge. The bytes are
// fasthttp's: valid only until the handler returns.
func readBody(c *call, limit int) ([]byte, error) {
	b := c.FC.Request.Body()
	if len(b) > limit {
		return nil, azerr.New(azerr.RequestBodyTooLarge)
	}
	return b, nil
}

// readEntityBody reads a single-entity request body as a string: a copy, since the decoded
// entity's strings alias it and may outlive the request.
func readEntityBody(c *call) (string, error) {
	b, err := readBody(c, maxEntityBody)
	return string(b), err
}
