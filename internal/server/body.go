package server

import (
	"io"

	"github.com/tablo/tablo/internal/azerr"
)

// readBody reads the request body up to limit bytes; more is RequestBodyTooLarge.
func readBody(c *call, limit int64) ([]byte, error) {
	return readBodyInto(nil, c, limit)
}

// readBodyInto is readBody reading into dst's storage when it is large enough (the result
// then aliases dst), so that a pooled buffer spares the allocation.
func readBodyInto(dst []byte, c *call, limit int64) ([]byte, error) {
	if c.r.ContentLength > limit {
		return nil, azerr.New(azerr.RequestBodyTooLarge)
	}
	b := dst[:0]
	var err error
	if n := int(c.r.ContentLength); n > 0 {
		// The common case: read exactly the announced body, sized once.
		if cap(b) < n {
			b = make([]byte, n)
		}
		b = b[:n]
		_, err = io.ReadFull(c.r.Body, b)
	} else {
		// No length announced (chunked): rare enough to allocate.
		b, err = io.ReadAll(io.LimitReader(c.r.Body, limit+1))
	}
	if err != nil {
		return nil, azerr.Newf(azerr.InvalidInput, "The request body could not be read.")
	}
	if int64(len(b)) > limit {
		return nil, azerr.New(azerr.RequestBodyTooLarge)
	}
	return b, nil
}

// readEntityBody reads a single-entity request body as a string: it is read into a pooled
// buffer, so the string is its only copy.
func (s *Server) readEntityBody(c *call) (string, error) {
	buf := s.reqBodies.get()
	defer s.reqBodies.put(buf)
	b, err := readBodyInto(buf.b, c, maxEntityBody)
	if err != nil {
		return "", err
	}
	buf.b = b[:0] // keep a grown buffer
	return string(b), nil
}
