package auth

import (
	"encoding/base64"
	"net/netip"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"
)

// SASKind tells a service (table) SAS from an account SAS.
type SASKind int

// The kinds of shared access signature.
const (
	ServiceSAS SASKind = iota + 1
	AccountSAS
)

// Versions that change what a SAS means or how it is signed.
const (
	minServiceSASVersion = "2013-08-15" // oldest table SAS format we verify
	sipSprVersion        = "2015-04-05" // service SAS gains sip/spr and the /table/ prefix
	minAccountSASVersion = "2015-04-05" // account SAS introduced
	sesVersion           = "2020-12-06" // account SAS gains signedEncryptionScope
	blobSrVersion        = "2018-11-09" // blob service SAS signs sr and the snapshot time
	maxIdentifierLen     = 64
)

// SAS is a parsed shared access signature. The exported fields are the query values as sent
// (percent-decoded); an empty string means the parameter was absent (or empty, which Azure
// treats the same way).
type SAS struct {
	Kind        SASKind
	Version     string // sv
	Permissions string // sp
	Start       string // st
	Expiry      string // se
	IP          string // sip
	Protocol    string // spr
	Signature   string // sig (base64)

	// Service SAS only.
	TableName  string // tn
	Identifier string // si
	StartPK    string // spk
	StartRK    string // srk
	EndPK      string // epk
	EndRK      string // erk

	// Blob service SAS only.
	Resource           string // sr: b, c, bs, bv
	CacheControl       string // rscc
	ContentDisposition string // rscd
	ContentEncoding    string // rsce
	ContentLanguage    string // rscl
	ContentType        string // rsct
	// SnapshotTime is the snapshot or version id of a bs/bv SAS (from the URL, not the SAS).
	SnapshotTime string

	// Service is the service the SAS was parsed for (ParseSASFor).
	Service Service
	// ResourceName names a Queue or Blob service SAS's resource as its canonical resource
	// does: "queue", "container" or "container/blob" (decoded). A queue or blob SAS does not
	// name its resource; the URL does, so Verify takes it from SASRequest.Resource.
	ResourceName string

	// Account SAS only.
	Services        string // ss
	ResourceTypes   string // srt
	EncryptionScope string // ses

	start, expiry time.Time // parsed st/se when set
	ipLo, ipHi    netip.Addr

	// Set by Verify: the effective grant after merging a stored access policy.
	verified bool
	perm     perms
}

// sasParams are the query parameters that belong to a SAS.
var sasParams = []string{"sv", "sp", "st", "se", "sip", "spr", "sig", "tn", "si", "spk", "srk", "epk", "erk", "ss", "srt", "ses",
	"sr", "rscc", "rscd", "rsce", "rscl", "rsct"}

// ParseSAS extracts a SAS from the request's query. It reports false (and no error) when the
// request carries no SAS, i.e. no sig parameter. A malformed SAS is 403 AuthenticationFailed.
//
// ParseSAS checks form only: required fields, letters, times, sip and spr. Signature, time
// window, protocol and IP are checked by Verify; table and permissions by Authorize.
func ParseSAS(query url.Values) (*SAS, bool, error) {
	return ParseSASFor(ServiceTable, query)
}

// ParseSASFor is ParseSAS for a request to svc: a service SAS is then that service's
// (table: tn; queue: the URL's queue; blob: sr=b|c|bs|bv), with its permission letters.
func ParseSASFor(svc Service, query url.Values) (*SAS, bool, error) {
	if _, ok := query["sig"]; !ok {
		return nil, false, nil
	}
	for _, name := range sasParams {
		if len(query[name]) > 1 {
			return nil, true, authFailed("SAS parameter " + name + " given more than once")
		}
	}
	s := &SAS{
		Version:         query.Get("sv"),
		Permissions:     query.Get("sp"),
		Start:           query.Get("st"),
		Expiry:          query.Get("se"),
		IP:              query.Get("sip"),
		Protocol:        query.Get("spr"),
		Signature:       strings.ReplaceAll(query.Get("sig"), " ", "+"), // an unencoded '+' arrives as ' '
		TableName:       query.Get("tn"),
		Identifier:      query.Get("si"),
		StartPK:         query.Get("spk"),
		StartRK:         query.Get("srk"),
		EndPK:           query.Get("epk"),
		EndRK:           query.Get("erk"),
		Services:        query.Get("ss"),
		ResourceTypes:   query.Get("srt"),
		EncryptionScope: query.Get("ses"),

		Resource:           query.Get("sr"),
		CacheControl:       query.Get("rscc"),
		ContentDisposition: query.Get("rscd"),
		ContentEncoding:    query.Get("rsce"),
		ContentLanguage:    query.Get("rscl"),
		ContentType:        query.Get("rsct"),
		Service:            svc,
	}
	s.Kind = ServiceSAS
	if s.Services != "" || s.ResourceTypes != "" {
		s.Kind = AccountSAS
	}
	if err := s.validate(); err != nil {
		return nil, true, err
	}
	return s, true, nil
}

func (s *SAS) validate() error {
	if s.Signature == "" {
		return authFailed("sig is empty")
	}
	if _, err := base64.StdEncoding.DecodeString(s.Signature); err != nil {
		return authFailed("sig is not base64")
	}
	if !isVersion(s.Version) {
		return authFailed("sv is missing or malformed")
	}
	if err := s.parseTimes(); err != nil {
		return err
	}
	if err := s.parseIP(); err != nil {
		return err
	}
	switch s.Protocol {
	case "", "https", "https,http", "http,https":
	default:
		return authFailed("spr must be https or https,http")
	}
	if s.Kind == AccountSAS {
		return s.validateAccount()
	}
	return s.validateService()
}

// serviceLetters are the permission letters of a service SAS.
func (s *SAS) serviceLetters() string {
	switch s.Service {
	case ServiceQueue:
		return queueLetters
	case ServiceBlob:
		if s.Resource == "c" {
			return containerLetters
		}
		return blobLetters
	}
	return tableLetters
}

func (s *SAS) validateService() error {
	switch s.Service {
	case ServiceTable:
		if s.Version < minServiceSASVersion {
			return authFailed("sv " + s.Version + " is not supported for a table SAS")
		}
		if s.TableName == "" {
			return authFailed("tn is required")
		}
	case ServiceQueue:
		if s.Version < minServiceSASVersion {
			return authFailed("sv " + s.Version + " is not supported for a queue SAS")
		}
	case ServiceBlob:
		switch s.Resource {
		case "b", "c", "bs", "bv":
		default:
			return authFailed("sr must be b, c, bs or bv")
		}
	}
	if s.Permissions != "" {
		if _, ok := parsePerms(s.Permissions, s.serviceLetters()); !ok {
			return authFailed("sp holds a letter other than " + s.serviceLetters())
		}
	}
	if utf8.RuneCountInString(s.Identifier) > maxIdentifierLen {
		return authFailed("si is longer than 64 characters")
	}
	if s.Identifier == "" && (s.Permissions == "" || s.Expiry == "") {
		return authFailed("sp and se are required without a stored access policy")
	}
	if s.StartRK != "" && s.StartPK == "" {
		return authFailed("srk requires spk")
	}
	if s.EndRK != "" && s.EndPK == "" {
		return authFailed("erk requires epk")
	}
	return nil
}

func (s *SAS) validateAccount() error {
	if s.Version < minAccountSASVersion {
		return authFailed("sv " + s.Version + " is not supported for an account SAS")
	}
	if s.Services == "" || s.ResourceTypes == "" || s.Permissions == "" || s.Expiry == "" {
		return authFailed("ss, srt, sp and se are required")
	}
	if !onlyLetters(s.Services, "bfqt") {
		return authFailed("ss holds an unknown service")
	}
	if !onlyLetters(s.ResourceTypes, "sco") {
		return authFailed("srt holds an unknown resource type")
	}
	if _, ok := parsePerms(s.Permissions, allLetters); !ok {
		return authFailed("sp holds an unknown permission")
	}
	return nil
}

func (s *SAS) parseTimes() error {
	var err error
	if s.Start != "" {
		if s.start, err = parseISOTime(s.Start); err != nil {
			return authFailed("st is not an ISO 8601 time")
		}
	}
	if s.Expiry != "" {
		if s.expiry, err = parseISOTime(s.Expiry); err != nil {
			return authFailed("se is not an ISO 8601 time")
		}
	}
	if s.Start != "" && s.Expiry != "" && !s.expiry.After(s.start) {
		return authFailed("signed expiry time must be after signed start time")
	}
	return nil
}

// parseIP accepts sip as one address or an inclusive range "lo-hi" of the same family.
func (s *SAS) parseIP() error {
	if s.IP == "" {
		return nil
	}
	lo, hi, isRange := strings.Cut(s.IP, "-")
	if !isRange {
		hi = lo
	}
	a, err1 := netip.ParseAddr(lo)
	b, err2 := netip.ParseAddr(hi)
	if err1 != nil || err2 != nil {
		return authFailed("sip is not an IP address or range")
	}
	a, b = a.Unmap().WithZone(""), b.Unmap().WithZone("")
	if a.BitLen() != b.BitLen() || a.Compare(b) > 0 {
		return authFailed("sip range is empty")
	}
	s.ipLo, s.ipHi = a, b
	return nil
}

// Query renders the SAS as query parameters (for tests and clients).
func (s *SAS) Query() url.Values {
	q := url.Values{}
	add := func(name, v string) {
		if v != "" {
			q.Set(name, v)
		}
	}
	add("sv", s.Version)
	add("ss", s.Services)
	add("srt", s.ResourceTypes)
	add("tn", s.TableName)
	add("sp", s.Permissions)
	add("st", s.Start)
	add("se", s.Expiry)
	add("sip", s.IP)
	add("spr", s.Protocol)
	add("si", s.Identifier)
	add("spk", s.StartPK)
	add("srk", s.StartRK)
	add("epk", s.EndPK)
	add("erk", s.EndRK)
	add("ses", s.EncryptionScope)
	add("sr", s.Resource)
	add("rscc", s.CacheControl)
	add("rscd", s.ContentDisposition)
	add("rsce", s.ContentEncoding)
	add("rscl", s.ContentLanguage)
	add("rsct", s.ContentType)
	add("sig", s.Signature)
	return q
}

// isVersion reports whether v looks like a storage service version, YYYY-MM-DD.
func isVersion(v string) bool {
	if len(v) != 10 || v[4] != '-' || v[7] != '-' {
		return false
	}
	for i := 0; i < len(v); i++ {
		if i != 4 && i != 7 && (v[i] < '0' || v[i] > '9') {
			return false
		}
	}
	return true
}

func onlyLetters(s, allowed string) bool {
	for i := 0; i < len(s); i++ {
		if strings.IndexByte(allowed, s[i]) < 0 {
			return false
		}
	}
	return true
}
