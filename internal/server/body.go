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
		b, err = readAllInto(b, c.r.Body, limit+1)
	}
	if err != nil {
		return nil, azerr.Newf(azerr.InvalidInput, "The request body could not be read.")
	}
	if int64(len(b)) > limit {
		return nil, azerr.New(azerr.RequestBodyTooLarge)
	}
	return b, nil
}

// readAllInto is io.ReadAll(io.LimitReader(r, max)) appending to b.
func readAllInto(b []byte, r io.Reader, max int64) ([]byte, error) {
	for int64(len(b)) < max {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)] // let append pick the growth
		}
		room := b[len(b):cap(b)]
		if left := max - int64(len(b)); int64(len(room)) > left {
			room = room[:left]
		}
		n, err := r.Read(room)
		b = b[:len(b)+n]
		if err == io.EOF {
			return b, nil
		}
		if err != nil {
			return b, err
		}
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
