package auth

import (
	"bytes"
	"encoding/xml"
	"errors"
	"io"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/tablo/tablo/internal/azerr"
)

// maxIdentifiers is the number of stored access policies a table may have.
const maxIdentifiers = 5

// AccessPolicy is the policy part of a stored access policy. Nil times and an empty
// Permission mean "not set by the policy" (a SAS naming the policy must then supply them).
type AccessPolicy struct {
	Start, Expiry *time.Time
	// Permission holds the service's permission letters in canonical order (table: a
	// subset of "raud", queue "raup").
	Permission string
}

// SignedIdentifier is one entry of a table ACL: a policy id and its (possibly empty) policy.
type SignedIdentifier struct {
	ID     string
	Policy AccessPolicy
}

// ParseSignedIdentifiers parses a Set Table ACL body. Elements are matched by name in any
// order (Go puts AccessPolicy before Id), unknown elements are skipped, a leading UTF-8 BOM is
// allowed. An empty body or an empty <SignedIdentifiers/> returns no identifiers (clear the
// ACL). Limits: at most 5 identifiers; Id non-empty, at most 64 characters, unique;
// Permission letters from r, a, u, d (returned in that order); Start/Expiry ISO 8601.
// Every error is 400 InvalidXmlDocument.
func ParseSignedIdentifiers(body []byte) ([]SignedIdentifier, error) {
	return ParseSignedIdentifiersFor(ServiceTable, body)
}

// ParseSignedIdentifiersFor is ParseSignedIdentifiers for a service's ACL (Set Table ACL,
// Set Queue ACL, Set Container ACL): the permission letters allowed, and their canonical
// order, are the service's (table raud, queue raup, container racwdxltfmeopi).
func ParseSignedIdentifiersFor(svc Service, body []byte) ([]SignedIdentifier, error) {
	letters := svc.policyLetters()
	body = bytes.TrimPrefix(body, []byte("\xef\xbb\xbf"))
	if len(bytes.TrimSpace(body)) == 0 {
		return nil, nil
	}
	d := xml.NewDecoder(bytes.NewReader(body))
	root, err := firstElement(d)
	if err != nil {
		return nil, err
	}
	if root.Name.Local != "SignedIdentifiers" {
		return nil, badXML("root element must be SignedIdentifiers")
	}
	var ids []SignedIdentifier
	err = eachChild(d, func(el xml.StartElement) error {
		if el.Name.Local != "SignedIdentifier" {
			return d.Skip()
		}
		if len(ids) == maxIdentifiers {
			return badXML("more than 5 signed identifiers")
		}
		id, err := parseIdentifier(d, letters)
		if err != nil {
			return err
		}
		for _, prev := range ids {
			if prev.ID == id.ID {
				return badXML("signed identifier " + id.ID + " appears twice")
			}
		}
		ids = append(ids, id)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if err := expectEOF(d); err != nil {
		return nil, err
	}
	return ids, nil
}

func parseIdentifier(d *xml.Decoder, letters string) (SignedIdentifier, error) {
	var id SignedIdentifier
	var seenID, seenPolicy bool
	err := eachChild(d, func(el xml.StartElement) error {
		switch el.Name.Local {
		case "Id":
			if seenID {
				return badXML("Id appears twice")
			}
			seenID = true
			text, err := elementText(d)
			if err != nil {
				return err
			}
			if text == "" || utf8.RuneCountInString(text) > maxIdentifierLen {
				return badXML("Id must have 1 to 64 characters")
			}
			id.ID = text
			return nil
		case "AccessPolicy":
			if seenPolicy {
				return badXML("AccessPolicy appears twice")
			}
			seenPolicy = true
			p, err := parsePolicy(d, letters)
			id.Policy = p
			return err
		}
		return d.Skip()
	})
	if err == nil && !seenID {
		err = badXML("SignedIdentifier without Id")
	}
	return id, err
}

func parsePolicy(d *xml.Decoder, letters string) (AccessPolicy, error) {
	var p AccessPolicy
	seen := map[string]bool{}
	err := eachChild(d, func(el xml.StartElement) error {
		name := el.Name.Local
		if name != "Start" && name != "Expiry" && name != "Permission" {
			return d.Skip()
		}
		if seen[name] {
			return badXML(name + " appears twice")
		}
		seen[name] = true
		text, err := elementText(d)
		if err != nil || text == "" {
			return err
		}
		text = strings.TrimSpace(text)
		switch name {
		case "Permission":
			perm, ok := canonicalPerms(text, letters)
			if !ok {
				return badXML("Permission must use only the letters " + letters)
			}
			p.Permission = perm
		default:
			t, err := parseISOTime(text)
			if err != nil {
				return badXML(name + " is not an ISO 8601 time")
			}
			if name == "Start" {
				p.Start = &t
			} else {
				p.Expiry = &t
			}
		}
		return nil
	})
	return p, err
}

// firstElement skips the prolog (declaration, comments, whitespace) up to the root element.
func firstElement(d *xml.Decoder) (xml.StartElement, error) {
	for {
		tok, err := d.Token()
		if err != nil {
			return xml.StartElement{}, xmlErr(err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			return t, nil
		case xml.CharData:
			if len(bytes.TrimSpace(t)) != 0 {
				return xml.StartElement{}, badXML("text before the root element")
			}
		}
	}
}

// eachChild calls fn for every child element of the element just opened, which must consume
// the child up to and including its end tag, and stops after the parent's end tag.
func eachChild(d *xml.Decoder, fn func(xml.StartElement) error) error {
	for {
		tok, err := d.Token()
		if err != nil {
			return xmlErr(err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			if err := fn(t); err != nil {
				return xmlErr(err)
			}
		case xml.EndElement:
			return nil
		}
	}
}

// elementText reads the text of the element just opened, up to its end tag; child elements
// are an error.
func elementText(d *xml.Decoder) (string, error) {
	var b strings.Builder
	for {
		tok, err := d.Token()
		if err != nil {
			return "", xmlErr(err)
		}
		switch t := tok.(type) {
		case xml.CharData:
			b.Write(t)
		case xml.StartElement:
			return "", badXML("unexpected element " + t.Name.Local)
		case xml.EndElement:
			return b.String(), nil
		}
	}
}

// expectEOF allows only whitespace, comments and processing instructions after the root.
func expectEOF(d *xml.Decoder) error {
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return xmlErr(err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			return badXML("content after the root element")
		case xml.CharData:
			if len(bytes.TrimSpace(t)) != 0 {
				return badXML("text after the root element")
			}
		}
	}
}

func badXML(detail string) error { return fail(azerr.InvalidXMLDocument, detail) }

// xmlErr keeps our own errors and turns decoder errors (syntax, unexpected EOF) into
// InvalidXmlDocument.
func xmlErr(err error) error {
	var ae *authError
	if errors.As(err, &ae) {
		return err
	}
	return badXML(err.Error())
}

// AppendSignedIdentifiersXML appends the Get Table ACL body for ids (table-api.md §8.1): times
// as UTC with 7 fraction digits, no AccessPolicy element for an empty policy, unset fields
// omitted.
func AppendSignedIdentifiersXML(dst []byte, ids []SignedIdentifier) []byte {
	dst = append(dst, `<?xml version="1.0" encoding="utf-8"?>`...)
	if len(ids) == 0 {
		return append(dst, "<SignedIdentifiers />"...)
	}
	dst = append(dst, "<SignedIdentifiers>"...)
	for _, id := range ids {
		dst = append(dst, "<SignedIdentifier><Id>"...)
		dst = appendEscaped(dst, id.ID)
		dst = append(dst, "</Id>"...)
		if p := id.Policy; p.Start != nil || p.Expiry != nil || p.Permission != "" {
			dst = append(dst, "<AccessPolicy>"...)
			if p.Start != nil {
				dst = append(dst, "<Start>"+formatISOTime(*p.Start)+"</Start>"...)
			}
			if p.Expiry != nil {
				dst = append(dst, "<Expiry>"+formatISOTime(*p.Expiry)+"</Expiry>"...)
			}
			if p.Permission != "" {
				dst = append(dst, "<Permission>"...)
				dst = appendEscaped(dst, p.Permission)
				dst = append(dst, "</Permission>"...)
			}
			dst = append(dst, "</AccessPolicy>"...)
		}
		dst = append(dst, "</SignedIdentifier>"...)
	}
	return append(dst, "</SignedIdentifiers>"...)
}

func appendEscaped(dst []byte, s string) []byte {
	var b bytes.Buffer
	_ = xml.EscapeText(&b, []byte(s)) // writing to a bytes.Buffer cannot fail
	return append(dst, b.Bytes()...)
}
