package load

import (
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
)

// Development storage constants, as published for Azurite and the storage emulator.
const (
	devAccount  = "devstoreaccount1"
	devKey      = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
	devEndpoint = "http://127.0.0.1:10002/devstoreaccount1"
)

// maxConnStringLen bounds what ParseConnString reads; real strings are a few hundred bytes.
const maxConnStringLen = 8192

// ConnInfo is a parsed storage connection string, reduced to what a Table client needs.
type ConnInfo struct {
	Endpoint string // table service URL without a trailing slash, e.g. http://127.0.0.1:10002/devstoreaccount1
	Account  string // account name (may be empty with a SAS)
	Key      string // base64 account key; empty when SAS is set
	SAS      string // shared access signature without the leading '?'
	// QueueEndpoint is the Queue service URL when the connection string names one
	// (QueueURL derives it otherwise).
	QueueEndpoint string
	// BlobEndpoint is the Blob service URL when the connection string names one (BlobURL
	// derives it otherwise).
	BlobEndpoint string
}

// QueueURL is the Queue service URL: QueueEndpoint, or the table endpoint's sibling (host
// style: ".table." becomes ".queue."; path style: the port 10002 becomes 10001).
func (c ConnInfo) QueueURL() string {
	if c.QueueEndpoint != "" {
		return c.QueueEndpoint
	}
	u, err := url.Parse(c.Endpoint)
	if err != nil {
		return ""
	}
	if strings.Contains(u.Host, ".table.") {
		u.Host = strings.Replace(u.Host, ".table.", ".queue.", 1)
	} else if u.Port() == "10002" {
		u.Host = u.Hostname() + ":10001"
	}
	return strings.TrimRight(u.String(), "/")
}

// BlobURL is the Blob service URL: BlobEndpoint, or the table endpoint's sibling (host
// style: ".table." becomes ".blob."; path style: the port 10002 becomes 10000).
func (c ConnInfo) BlobURL() string {
	if c.BlobEndpoint != "" {
		return c.BlobEndpoint
	}
	u, err := url.Parse(c.Endpoint)
	if err != nil {
		return ""
	}
	if strings.Contains(u.Host, ".table.") {
		u.Host = strings.Replace(u.Host, ".table.", ".blob.", 1)
	} else if u.Port() == "10002" {
		u.Host = u.Hostname() + ":10000"
	}
	return strings.TrimRight(u.String(), "/")
}

// ParseConnString parses an Azure Storage connection string ("Key=Value;Key=Value;..."). Keys are
// matched case-insensitively, as the .NET parser does (the aztables parser is case-sensitive; we
// are more lenient so hand-typed strings work). It understands AccountName, AccountKey,
// SharedAccessSignature, DefaultEndpointsProtocol, EndpointSuffix, TableEndpoint and
// QueueEndpoint, BlobEndpoint and UseDevelopmentStorage=true; other endpoints are ignored.
func ParseConnString(s string) (ConnInfo, error) {
	if len(s) > maxConnStringLen {
		return ConnInfo{}, fmt.Errorf("connection string longer than %d bytes", maxConnStringLen)
	}
	kv := make(map[string]string)
	for seg := range strings.SplitSeq(s, ";") {
		seg = strings.TrimSpace(seg)
		if seg == "" {
			continue
		}
		k, v, ok := strings.Cut(seg, "=")
		k = strings.ToLower(strings.TrimSpace(k))
		if !ok || k == "" {
			return ConnInfo{}, fmt.Errorf("connection string segment %q is not Key=Value", redactSegment(seg))
		}
		if _, dup := kv[k]; dup {
			return ConnInfo{}, fmt.Errorf("connection string repeats key %q", k)
		}
		kv[k] = strings.TrimSpace(v)
	}
	if len(kv) == 0 {
		return ConnInfo{}, errors.New("empty connection string")
	}

	if dev, ok := kv["usedevelopmentstorage"]; ok {
		if !strings.EqualFold(dev, "true") {
			return ConnInfo{}, fmt.Errorf("UseDevelopmentStorage=%q: only true is supported", dev)
		}
		if _, ok := kv["developmentstorageproxyuri"]; ok {
			return ConnInfo{}, errors.New("DevelopmentStorageProxyUri is not supported")
		}
		return ConnInfo{Endpoint: devEndpoint, Account: devAccount, Key: devKey}, nil
	}

	info := ConnInfo{Account: kv["accountname"], Key: kv["accountkey"], SAS: strings.TrimPrefix(kv["sharedaccesssignature"], "?")}
	switch {
	case info.Key != "" && info.SAS != "":
		return ConnInfo{}, errors.New("connection string has both AccountKey and SharedAccessSignature")
	case info.Key == "" && info.SAS == "":
		return ConnInfo{}, errors.New("connection string needs AccountKey or SharedAccessSignature")
	case info.Key != "" && info.Account == "":
		return ConnInfo{}, errors.New("connection string has AccountKey but no AccountName")
	}
	if info.Key != "" {
		if _, err := base64.StdEncoding.DecodeString(info.Key); err != nil {
			return ConnInfo{}, fmt.Errorf("AccountKey is not valid base64: %w", err)
		}
	}

	endpoint := kv["tableendpoint"]
	if endpoint == "" {
		if info.Account == "" {
			return ConnInfo{}, errors.New("connection string needs TableEndpoint or AccountName")
		}
		proto := strings.ToLower(kv["defaultendpointsprotocol"])
		if proto == "" {
			proto = "https"
		}
		suffix := kv["endpointsuffix"]
		if suffix == "" {
			suffix = "core.windows.net"
		}
		endpoint = proto + "://" + info.Account + ".table." + suffix
	}
	u, err := url.Parse(endpoint)
	if err != nil {
		return ConnInfo{}, fmt.Errorf("table endpoint: %w", err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return ConnInfo{}, fmt.Errorf("table endpoint %q: scheme must be http or https", endpoint)
	}
	if u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" || u.Opaque != "" {
		return ConnInfo{}, fmt.Errorf("table endpoint %q: want scheme://host[:port][/path]", endpoint)
	}
	info.Endpoint = strings.TrimRight(u.String(), "/")
	if q := kv["queueendpoint"]; q != "" {
		qu, err := url.Parse(q)
		if err != nil || (qu.Scheme != "http" && qu.Scheme != "https") || qu.Host == "" {
			return ConnInfo{}, fmt.Errorf("queue endpoint %q: want scheme://host[:port][/path]", q)
		}
		info.QueueEndpoint = strings.TrimRight(qu.String(), "/")
	}
	if b := kv["blobendpoint"]; b != "" {
		bu, err := url.Parse(b)
		if err != nil || (bu.Scheme != "http" && bu.Scheme != "https") || bu.Host == "" {
			return ConnInfo{}, fmt.Errorf("blob endpoint %q: want scheme://host[:port][/path]", b)
		}
		info.BlobEndpoint = strings.TrimRight(bu.String(), "/")
	}
	return info, nil
}

// String renders the connection string in canonical form; ParseConnString(c.String()) == c.
func (c ConnInfo) String() string {
	var b strings.Builder
	if c.Account != "" {
		b.WriteString("AccountName=" + c.Account + ";")
	}
	if c.Key != "" {
		b.WriteString("AccountKey=" + c.Key + ";")
	}
	if c.SAS != "" {
		b.WriteString("SharedAccessSignature=" + c.SAS + ";")
	}
	b.WriteString("TableEndpoint=" + c.Endpoint + ";")
	if c.QueueEndpoint != "" {
		b.WriteString("QueueEndpoint=" + c.QueueEndpoint + ";")
	}
	if c.BlobEndpoint != "" {
		b.WriteString("BlobEndpoint=" + c.BlobEndpoint + ";")
	}
	return b.String()
}

// CheckLoopback returns an error unless every endpoint's host (Table, Queue and Blob) is a
// loopback address or "localhost": the bench must never send load anywhere but this machine.
func (c ConnInfo) CheckLoopback() error {
	for _, ep := range []struct{ name, url string }{{"table", c.Endpoint}, {"queue", c.QueueURL()}, {"blob", c.BlobURL()}} {
		u, err := url.Parse(ep.url)
		if err != nil {
			return fmt.Errorf("%s endpoint: %w", ep.name, err)
		}
		host := u.Hostname()
		if strings.EqualFold(host, "localhost") {
			continue
		}
		if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
			continue
		}
		return fmt.Errorf("%s endpoint %q is not a loopback address; bench only targets this machine", ep.name, ep.url)
	}
	return nil
}

// redactSegment keeps error messages from echoing secrets: it shows at most the key part.
func redactSegment(seg string) string {
	if len(seg) > 12 {
		return seg[:12] + "..."
	}
	return seg
}
