package server

import (
	"bytes"

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
	if err := refuseAtom(c); err != nil {
		return "", err
	}
	b, err := readBody(c, maxEntityBody)
	return string(b), err
}

// refuseAtom answers an Atom (XML) entity or table payload as Azure has since version
// 2015-12-11: 415 AtomFormatNotSupported, rather than a JSON syntax error.
func refuseAtom(c *call) error {
	ct := c.FC.Request.Header.ContentType()
	if i := bytes.IndexByte(ct, ';'); i >= 0 {
		ct = ct[:i]
	}
	ct = bytes.TrimSpace(ct)
	if bytes.EqualFold(ct, []byte("application/atom+xml")) || bytes.EqualFold(ct, []byte("application/xml")) {
		return azerr.New(azerr.AtomFormatNotSupported)
	}
	return nil
}
