package serviceprops

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/tablo/tablo/internal/azerr"
)

// invalidDoc is a structural error, invalidValue a bad or out-of-range node value. Azure
// answers both with 400 InvalidXmlDocument (its Reason names the node), not
// InvalidXmlNodeValue. The detail is for logs and tests; clients see Azure's message.
func invalidDoc(format string, args ...any) error {
	return fmt.Errorf("serviceprops: %s: %w", fmt.Sprintf(format, args...), azerr.New(azerr.InvalidXMLDocument))
}

func invalidValue(format string, args ...any) error {
	return invalidDoc(format, args...)
}

// reader walks an XML document element by element, turning decoder failures into
// InvalidXmlDocument.
type reader struct{ d *xml.Decoder }

func newReader(body []byte) *reader {
	return &reader{d: xml.NewDecoder(bytes.NewReader(body))}
}

func (r *reader) token() (xml.Token, error) {
	tok, err := r.d.Token()
	if err != nil {
		if errors.Is(err, io.EOF) {
			return nil, invalidDoc("unexpected end of document")
		}
		return nil, invalidDoc("%v", err)
	}
	return tok, nil
}

// root skips the prolog and returns the root element's name.
func (r *reader) root() (string, error) {
	for {
		tok, err := r.token()
		if err != nil {
			return "", err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			return t.Name.Local, nil
		case xml.CharData:
			if len(bytes.TrimSpace(t)) != 0 {
				return "", invalidDoc("text before the root element")
			}
		}
	}
}

// children calls fn for each child element of the element just opened; fn must consume the
// child through its end tag (by reading it or calling skip). Text between children is
// ignored (indentation). Returns after the parent's end tag.
func (r *reader) children(fn func(name string) error) error {
	for {
		tok, err := r.token()
		if err != nil {
			return err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			if err := fn(t.Name.Local); err != nil {
				return err
			}
		case xml.EndElement:
			return nil
		}
	}
}

// skip consumes the element just opened.
func (r *reader) skip() error {
	if err := r.d.Skip(); err != nil {
		return invalidDoc("%v", err)
	}
	return nil
}

// text reads the trimmed text of the element just opened; child elements are an error.
func (r *reader) text() (string, error) {
	var b strings.Builder
	for {
		tok, err := r.token()
		if err != nil {
			return "", err
		}
		switch t := tok.(type) {
		case xml.CharData:
			b.Write(t)
		case xml.StartElement:
			return "", invalidDoc("unexpected element %s", t.Name.Local)
		case xml.EndElement:
			return strings.TrimSpace(b.String()), nil
		}
	}
}

// end allows only whitespace, comments and processing instructions after the root.
func (r *reader) end() error {
	for {
		tok, err := r.d.Token()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return invalidDoc("%v", err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			return invalidDoc("content after the root element")
		case xml.CharData:
			if len(bytes.TrimSpace(t)) != 0 {
				return invalidDoc("text after the root element")
			}
		}
	}
}

// once records that element name was seen in its parent; a repeat is InvalidXmlDocument.
type once map[string]bool

func (o once) see(parent, name string) error {
	if o[name] {
		return invalidDoc("%s appears twice in %s", name, parent)
	}
	o[name] = true
	return nil
}

func (r *reader) boolText(name string) (bool, error) {
	s, err := r.text()
	if err != nil {
		return false, err
	}
	switch strings.ToLower(s) {
	case "true", "1":
		return true, nil
	case "false", "0":
		return false, nil
	}
	return false, invalidValue("%s is not a boolean: %q", name, s)
}

// intText reads a non-negative decimal integer no greater than max.
func (r *reader) intText(name string, max int) (int, error) {
	s, err := r.text()
	if err != nil {
		return 0, err
	}
	if s == "" || len(s) > 10 {
		return 0, invalidValue("%s is not an integer: %q", name, s)
	}
	n := 0
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, invalidValue("%s is not an integer: %q", name, s)
		}
		n = n*10 + int(s[i]-'0')
	}
	if n > max {
		return 0, invalidValue("%s is out of range: %d", name, n)
	}
	return n, nil
}
