package server

import (
	"strings"
	"unicode/utf8"

	"github.com/tablo/tablo/internal/azerr"
	"github.com/tablo/tablo/internal/entity"
)

// resourceKind is what a request path (after the account) addresses.
type resourceKind uint8

const (
	resService  resourceKind = iota + 1 // "/" with restype=service
	resTables                           // Tables, Tables()
	resTable                            // Tables('name')
	resEntities                         // name, name()
	resEntity                           // name(PartitionKey='p',RowKey='r')
	resBatch                            // $batch
)

type resource struct {
	kind  resourceKind
	table string
	pk    string
	rk    string
}

var errQuerySyntax = azerr.Newf(azerr.InvalidInput, "Bad Request - Error in query syntax.")

// parseResource parses a percent-decoded path that follows the account segment, without
// its leading slash:
//
//	resource  = "" | "Tables" ["()"] | "Tables(" quoted ")" | "$batch"
//	          | table ["()"] | table "(" keyPair ")"
//	keyPair   = key ws "," ws key           (PartitionKey and RowKey, either order)
//	key       = ws ("PartitionKey" | "RowKey") ws "=" ws quoted ws
//	quoted    = "'" { char | "''" } "'"
func parseResource(p string) (resource, error) {
	p = strings.TrimSuffix(p, "/")
	if p == "" {
		return resource{kind: resService}, nil
	}
	if p == "$batch" {
		return resource{kind: resBatch}, nil
	}
	name, args, hasParens := strings.Cut(p, "(")
	if strings.ContainsAny(name, "/\\") || !utf8.ValidString(p) {
		return resource{}, azerr.New(azerr.InvalidURI)
	}
	if hasParens {
		if !strings.HasSuffix(args, ")") {
			return resource{}, errQuerySyntax
		}
		args = args[:len(args)-1]
	}
	if name == "Tables" {
		if strings.TrimSpace(args) == "" {
			return resource{kind: resTables}, nil
		}
		s := &argScanner{s: args}
		s.skipSpace()
		t, err := s.quoted()
		if err != nil {
			return resource{}, err
		}
		s.skipSpace()
		if !s.done() {
			return resource{}, errQuerySyntax
		}
		return resource{kind: resTable, table: t}, nil
	}
	if !validTableSegment(name) {
		return resource{}, azerr.New(azerr.InvalidResourceName)
	}
	if strings.TrimSpace(args) == "" {
		return resource{kind: resEntities, table: name}, nil
	}
	pk, rk, err := parseKeyPair(args)
	if err != nil {
		return resource{}, err
	}
	return resource{kind: resEntity, table: name, pk: pk, rk: rk}, nil
}

func validTableSegment(name string) bool {
	if name == "" {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

func parseKeyPair(args string) (pk, rk string, err error) {
	s := &argScanner{s: args}
	var havePK, haveRK bool
	for i := 0; i < 2; i++ {
		if i == 1 {
			s.skipSpace()
			if !s.consume(",") {
				return "", "", errQuerySyntax
			}
		}
		s.skipSpace()
		var which string
		switch {
		case s.consume("PartitionKey"):
			which = "PartitionKey"
		case s.consume("RowKey"):
			which = "RowKey"
		default:
			return "", "", errQuerySyntax
		}
		s.skipSpace()
		if !s.consume("=") {
			return "", "", errQuerySyntax
		}
		s.skipSpace()
		v, err := s.quoted()
		if err != nil {
			return "", "", err
		}
		if err := validateURLKey(which, v); err != nil {
			return "", "", err
		}
		if which == "PartitionKey" {
			if havePK {
				return "", "", errQuerySyntax
			}
			pk, havePK = v, true
		} else {
			if haveRK {
				return "", "", errQuerySyntax
			}
			rk, haveRK = v, true
		}
	}
	s.skipSpace()
	if !s.done() {
		return "", "", errQuerySyntax
	}
	return pk, rk, nil
}

// validateURLKey applies the key rules to a key taken from the URL: '/' and '\' are query
// syntax errors there; everything else follows the body rules.
func validateURLKey(which, v string) error {
	if strings.ContainsAny(v, "/\\") {
		return errQuerySyntax
	}
	return entity.ValidateKey(which, v)
}

type argScanner struct {
	s string
	i int
}

func (a *argScanner) done() bool { return a.i >= len(a.s) }

func (a *argScanner) skipSpace() {
	for a.i < len(a.s) && (a.s[a.i] == ' ' || a.s[a.i] == '\t') {
		a.i++
	}
}

func (a *argScanner) consume(tok string) bool {
	if strings.HasPrefix(a.s[a.i:], tok) {
		a.i += len(tok)
		return true
	}
	return false
}

// quoted reads a '…' literal with ” as an escaped quote.
func (a *argScanner) quoted() (string, error) {
	if !a.consume("'") {
		return "", errQuerySyntax
	}
	// Without a doubled quote the literal is a substring of the path: no copy.
	if n := strings.IndexByte(a.s[a.i:], '\''); n >= 0 && !strings.HasPrefix(a.s[a.i+n+1:], "'") {
		v := a.s[a.i : a.i+n]
		a.i += n + 1
		return v, nil
	}
	var b strings.Builder
	for a.i < len(a.s) {
		c := a.s[a.i]
		a.i++
		if c != '\'' {
			b.WriteByte(c)
			continue
		}
		if a.i < len(a.s) && a.s[a.i] == '\'' {
			b.WriteByte('\'')
			a.i++
			continue
		}
		return b.String(), nil
	}
	return "", azerr.Newf(azerr.InvalidInput, "There is an unterminated string literal at position %d in '%s'.", a.i, a.s)
}
