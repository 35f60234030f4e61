package e2e

// Every hard Azure limit of the specification's limits table, through the server, exactly at
// the limit (accepted) and one past it (refused with Azure's status and code).

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// edgeCase is one request body at or past a limit; code "" means accepted.
type edgeCase struct {
	what, body string
	code       string
}

// strProp is a JSON string property member.
func strProp(name string, n int) string { return fmt.Sprintf(`,%q:%q`, name, strings.Repeat("x", n)) }

// entityEdges are the per-entity limits (rows 7-17), as single inserts.
func entityEdges() []edgeCase {
	emoji := "\U0001F600" // two UTF-16 code units
	props := func(n int) string {
		var b strings.Builder
		for i := range n {
			fmt.Fprintf(&b, `,"P%03d":%d`, i, i)
		}
		return b.String()
	}
	// Entity size by Azure's formula: 4 + 2×(|PK|+|RK|) + Σ(8 + 2×|name| + value), a string
	// value being 4 + 2×length, a Boolean 1. Keys "p","r" (8) + 15 strings of 32,768 under
	// 3-letter names (15 × 65,554) = 983,318; one more of 32,620 makes 1,048,576 exactly;
	// one of 32,615 and a Boolean "B" (11) make 1,048,577.
	var full strings.Builder
	for i := range 15 {
		full.WriteString(strProp(fmt.Sprintf("S%02d", i), 32768))
	}
	return []edgeCase{
		{"PartitionKey of 1,024 characters", `{"PartitionKey":"` + strings.Repeat("k", 1024) + `","RowKey":"r"}`, ""},
		{"PartitionKey of 1,025 characters", `{"PartitionKey":"` + strings.Repeat("k", 1025) + `","RowKey":"r"}`, "PropertyValueTooLarge"},
		{"RowKey of 1,024 characters", `{"PartitionKey":"p","RowKey":"` + strings.Repeat("k", 1024) + `"}`, ""},
		{"RowKey of 1,025 characters", `{"PartitionKey":"p","RowKey":"` + strings.Repeat("k", 1025) + `"}`, "PropertyValueTooLarge"},
		{"RowKey of 1,024 UTF-16 units (surrogate pairs)", `{"PartitionKey":"p","RowKey":"` + strings.Repeat(emoji, 512) + `"}`, ""},
		{"RowKey of 1,025 UTF-16 units", `{"PartitionKey":"p","RowKey":"a` + strings.Repeat(emoji, 512) + `"}`, "PropertyValueTooLarge"},
		{"key with U+0020 (after the control range)", `{"PartitionKey":"p","RowKey":"a b"}`, ""},
		{"key with U+001F", `{"PartitionKey":"p","RowKey":"a\u001f"}`, "OutOfRangeInput"},
		{"key with U+007E", `{"PartitionKey":"p","RowKey":"a~"}`, ""},
		{"key with U+007F", `{"PartitionKey":"p","RowKey":"a\u007f"}`, "OutOfRangeInput"},
		{"key with U+009F", `{"PartitionKey":"p","RowKey":"a\u009f"}`, "OutOfRangeInput"},
		{"key with U+00A0", `{"PartitionKey":"p","RowKey":"a\u00a0"}`, ""},
		{"key with /", `{"PartitionKey":"p/","RowKey":"r"}`, "OutOfRangeInput"},
		{"key with \\", `{"PartitionKey":"p","RowKey":"r\\"}`, "OutOfRangeInput"},
		{"key with #", `{"PartitionKey":"p","RowKey":"r#"}`, "OutOfRangeInput"},
		{"key with ?", `{"PartitionKey":"p","RowKey":"r?"}`, "OutOfRangeInput"},
		{"252 custom properties", `{"PartitionKey":"p","RowKey":"r"` + props(252) + `}`, ""},
		{"253 custom properties", `{"PartitionKey":"p","RowKey":"r"` + props(253) + `}`, "TooManyProperties"},
		{"property name of 255 characters", `{"PartitionKey":"p","RowKey":"r","` + strings.Repeat("n", 255) + `":1}`, ""},
		{"property name of 256 characters", `{"PartitionKey":"p","RowKey":"r","` + strings.Repeat("n", 256) + `":1}`, "PropertyNameTooLong"},
		{"string of 32,768 characters", `{"PartitionKey":"p","RowKey":"r"` + strProp("S", 32768) + `}`, ""},
		{"string of 32,769 characters", `{"PartitionKey":"p","RowKey":"r"` + strProp("S", 32769) + `}`, "PropertyValueTooLarge"},
		{"string of 32,768 UTF-16 units (surrogate pairs)", `{"PartitionKey":"p","RowKey":"r","S":"` + strings.Repeat(emoji, 16384) + `"}`, ""},
		{"string of 32,769 UTF-16 units", `{"PartitionKey":"p","RowKey":"r","S":"a` + strings.Repeat(emoji, 16384) + `"}`, "PropertyValueTooLarge"},
		{"binary of 65,536 bytes", `{"PartitionKey":"p","RowKey":"r","B@odata.type":"Edm.Binary","B":"` + base64.StdEncoding.EncodeToString(make([]byte, 65536)) + `"}`, ""},
		{"binary of 65,537 bytes", `{"PartitionKey":"p","RowKey":"r","B@odata.type":"Edm.Binary","B":"` + base64.StdEncoding.EncodeToString(make([]byte, 65537)) + `"}`, "PropertyValueTooLarge"},
		{"entity of 1,048,576 bytes", `{"PartitionKey":"p","RowKey":"r"` + full.String() + strProp("S15", 32620) + `}`, ""},
		{"entity of 1,048,577 bytes", `{"PartitionKey":"p","RowKey":"r"` + full.String() + strProp("S15", 32615) + `,"B":true}`, "EntityTooLarge"},
		{"Int32 maximum", `{"PartitionKey":"p","RowKey":"r","I":2147483647}`, ""},
		{"Int32 maximum + 1", `{"PartitionKey":"p","RowKey":"r","I":2147483648}`, "InvalidInput"},
		{"Int32 minimum", `{"PartitionKey":"p","RowKey":"r","I":-2147483648}`, ""},
		{"Int32 minimum - 1", `{"PartitionKey":"p","RowKey":"r","I":-2147483649}`, "InvalidInput"},
		{"Int64 maximum", `{"PartitionKey":"p","RowKey":"r","L@odata.type":"Edm.Int64","L":"9223372036854775807"}`, ""},
		{"Int64 maximum + 1", `{"PartitionKey":"p","RowKey":"r","L@odata.type":"Edm.Int64","L":"9223372036854775808"}`, "InvalidInput"},
		{"Int64 minimum", `{"PartitionKey":"p","RowKey":"r","L@odata.type":"Edm.Int64","L":"-9223372036854775808"}`, ""},
		{"Int64 minimum - 1", `{"PartitionKey":"p","RowKey":"r","L@odata.type":"Edm.Int64","L":"-9223372036854775809"}`, "InvalidInput"},
		{"DateTime minimum", `{"PartitionKey":"p","RowKey":"r","D@odata.type":"Edm.DateTime","D":"1601-01-01T00:00:00Z"}`, ""},
		{"DateTime minimum - 100 ns", `{"PartitionKey":"p","RowKey":"r","D@odata.type":"Edm.DateTime","D":"1600-12-31T23:59:59.9999999Z"}`, "OutOfRangeInput"},
		{"DateTime maximum", `{"PartitionKey":"p","RowKey":"r","D@odata.type":"Edm.DateTime","D":"9999-12-31T23:59:59.9999999Z"}`, ""},
	}
}

// TestEntityLimitsAtEdge: each per-entity limit as a stand-alone insert and inside a batch
// (where the refusal names the operation's index), at the limit and one past it. Accepted
// entities read back equal to what was sent.
func TestEntityLimitsAtEdge(t *testing.T) {
	ts := startServer(t)
	for _, c := range entityEdges() {
		t.Run(c.what, func(t *testing.T) {
			single := tableNameOf(t, ts.newTable(t))
			status, h, body := ts.do(t, http.MethodPost, "/"+single, map[string]string{"Content-Type": "application/json", "Prefer": "return-no-content"}, c.body)
			if c.code == "" {
				if status != http.StatusNoContent {
					t.Fatalf("insert: %d %.300s", status, body)
				}
			} else if status != 400 || h.Get("x-ms-error-code") != c.code {
				t.Fatalf("insert: %d %s, want 400 %s", status, h.Get("x-ms-error-code"), c.code)
			}
			// In a batch: second after a valid insert into the same partition, or alone when
			// the keys are what is tested.
			var keys struct{ PartitionKey string }
			if err := json.Unmarshal([]byte(c.body), &keys); err != nil {
				t.Fatal(err)
			}
			ops := []changesetOp{}
			batched := tableNameOf(t, ts.newTable(t))
			if !strings.Contains(strings.ToLower(c.what), "key") {
				ops = append(ops, ts.insertOp(batched, fmt.Sprintf(`{"PartitionKey":%q,"RowKey":"first"}`, keys.PartitionKey)))
			}
			ops = append(ops, ts.insertOp(batched, c.body))
			r := ts.postBatch(t, batchBody(ops))
			if c.code == "" {
				if r.status != http.StatusAccepted || len(r.parts) != len(ops) || r.parts[len(ops)-1].status != http.StatusNoContent {
					t.Fatalf("batch: %d %.500s", r.status, r.raw)
				}
				return
			}
			wantBatchFailure(t, r, 400, c.code, len(ops)-1)
		})
	}
}

// TestNameAndRequestLimitsAtEdge: table names (rows 1-2), the query page size and $top
// (rows 21-22), the batch operation count and body size (rows 18-19) and the client request
// id (row 34), each at the limit and one past it.
func TestNameAndRequestLimitsAtEdge(t *testing.T) {
	ts := startServer(t)
	for _, c := range []struct {
		name   string
		status int
		code   string
	}{
		{"abc", 201, ""},
		{"ab", 400, "OutOfRangeInput"},
		{"a" + strings.Repeat("b", 62), 201, ""},
		{"a" + strings.Repeat("b", 63), 400, "OutOfRangeInput"},
		{"tables", 400, "InvalidInput"},
		{"Tables", 400, "InvalidInput"},
		{"tables1", 201, ""},
	} {
		status, h, body := ts.do(t, http.MethodPost, "/Tables", map[string]string{"Content-Type": "application/json", "Accept": "application/json;odata=nometadata"}, `{"TableName":"`+c.name+`"}`)
		if status != c.status || h.Get("x-ms-error-code") != c.code {
			t.Errorf("table %q: %d %s, want %d %s (%.200s)", c.name, status, h.Get("x-ms-error-code"), c.status, c.code, body)
		}
	}

	// A query page holds at most 1,000 entities: 1,001 make a page of 1,000 with a
	// continuation and a page of 1; $top=1000 is accepted, 1001 refused.
	tc := ts.newTable(t)
	name := tableNameOf(t, tc)
	fillTable(t, tc, 1001)
	status, h, body := ts.queryEntitiesRaw(t, name, url.Values{})
	npk, nrk := h.Get("x-ms-continuation-NextPartitionKey"), h.Get("x-ms-continuation-NextRowKey")
	if status != 200 || strings.Count(body, `"RowKey"`) != 1000 || npk == "" {
		t.Fatalf("first page: %d, %d entities, continuation %q", status, strings.Count(body, `"RowKey"`), npk)
	}
	status, h, body = ts.queryEntitiesRaw(t, name, url.Values{"NextPartitionKey": {npk}, "NextRowKey": {nrk}})
	if status != 200 || strings.Count(body, `"RowKey"`) != 1 || h.Get("x-ms-continuation-NextPartitionKey") != "" {
		t.Fatalf("second page: %d, %d entities", status, strings.Count(body, `"RowKey"`))
	}
	for top, want := range map[string]int{"1000": 200, "1001": 400} {
		status, h, _ := ts.queryEntitiesRaw(t, name, url.Values{"$top": {top}})
		if status != want || (want == 400) != (h.Get("x-ms-error-code") == "InvalidInput") {
			t.Errorf("$top=%s: %d %s", top, status, h.Get("x-ms-error-code"))
		}
	}

	// A batch body of exactly 4 MiB is read (the padding after the closing delimiter is an
	// epilogue); one byte more is 413 (TestBatchLimits: 100 operations accepted, 101 refused).
	body4 := batchBody([]changesetOp{ts.insertOp(name, `{"PartitionKey":"four","RowKey":"r"}`)})
	body4 += strings.Repeat("\r\n", (4<<20-len(body4))/2+1)
	if r := ts.postBatch(t, body4[:4<<20]); r.status != http.StatusAccepted || len(r.parts) != 1 || r.parts[0].status != 201 && r.parts[0].status != 204 {
		t.Errorf("4 MiB batch: %d %.300s", r.status, r.raw)
	}
	wantRequestError(t, ts.postBatch(t, body4[:4<<20+1]), http.StatusRequestEntityTooLarge, "RequestBodyTooLarge")

	// x-ms-client-request-id: 1,024 visible ASCII characters, not 1,025.
	for n, want := range map[int]int{1024: 200, 1025: 400} {
		status, h, _ := ts.do(t, http.MethodGet, "/Tables", map[string]string{"x-ms-client-request-id": strings.Repeat("i", n)}, "")
		if status != want || (want == 400) != (h.Get("x-ms-error-code") == "InvalidHeaderValue") {
			t.Errorf("client request id of %d: %d %s", n, status, h.Get("x-ms-error-code"))
		}
	}
}

// corsDoc is a service properties document whose Cors element holds rules.
func corsDoc(rules ...string) string {
	return strings.Replace(defaultServiceProperties, "<Cors />", "<Cors>"+strings.Join(rules, "")+"</Cors>", 1)
}

func corsRule(origins, methods, headers string) string {
	return "<CorsRule><AllowedOrigins>" + origins + "</AllowedOrigins><AllowedMethods>" + methods +
		"</AllowedMethods><AllowedHeaders>" + headers + "</AllowedHeaders><ExposedHeaders></ExposedHeaders><MaxAgeInSeconds>10</MaxAgeInSeconds></CorsRule>"
}

func list(prefix string, n int, suffix string) string {
	items := make([]string, n)
	for i := range items {
		items[i] = fmt.Sprintf("%s%02d%s", prefix, i, suffix)
	}
	return strings.Join(items, ",")
}

func retentionDoc(days int) string {
	return strings.Replace(defaultServiceProperties,
		"<HourMetrics><Version>1.0</Version><Enabled>false</Enabled><RetentionPolicy><Enabled>false</Enabled></RetentionPolicy>",
		fmt.Sprintf("<HourMetrics><Version>1.0</Version><Enabled>false</Enabled><RetentionPolicy><Enabled>true</Enabled><Days>%d</Days></RetentionPolicy>", days), 1)
}

func aclDoc(ids ...string) string {
	var b strings.Builder
	b.WriteString(`<?xml version="1.0" encoding="utf-8"?><SignedIdentifiers>`)
	for _, id := range ids {
		b.WriteString("<SignedIdentifier><Id>" + id + "</Id><AccessPolicy><Start>2024-01-01T00:00:00Z</Start><Expiry>2099-01-01T00:00:00Z</Expiry><Permission>r</Permission></AccessPolicy></SignedIdentifier>")
	}
	b.WriteString("</SignedIdentifiers>")
	return b.String()
}

// TestServiceLimitsAtEdge: the service properties limits (rows 31-33: CORS rules, origins,
// header lists, the 2 KiB of CORS values, retention days) and the stored access policy limits
// (rows 28-29), at the limit and one past it; a refused document changes nothing. Azure
// answers every one of these InvalidXmlDocument.
func TestServiceLimitsAtEdge(t *testing.T) {
	ts := startServer(t)
	name := tableNameOf(t, ts.newTable(t))
	rule := corsRule("https://example.com", "GET", "")
	// Values counted for the 2 KiB: origins, methods and headers with their commas.
	origin := func(n int) string { return "https://" + strings.Repeat("o", n-len("https://")) }
	for _, c := range []struct {
		what, path, doc string
		code            string
	}{
		{"5 CORS rules", servicePropsPath, corsDoc(rule, rule, rule, rule, rule), ""},
		{"6 CORS rules", servicePropsPath, corsDoc(rule, rule, rule, rule, rule, rule), "InvalidXmlDocument"},
		{"64 allowed origins", servicePropsPath, corsDoc(corsRule(list("https://o", 64, ".example"), "GET", "")), ""},
		{"65 allowed origins", servicePropsPath, corsDoc(corsRule(list("https://o", 65, ".example"), "GET", "")), "InvalidXmlDocument"},
		{"64 allowed headers", servicePropsPath, corsDoc(corsRule("https://example.com", "GET", list("h", 64, ""))), ""},
		{"65 allowed headers", servicePropsPath, corsDoc(corsRule("https://example.com", "GET", list("h", 65, ""))), "InvalidXmlDocument"},
		{"2 prefixed headers", servicePropsPath, corsDoc(corsRule("https://example.com", "GET", list("x-ms-meta-", 2, "*"))), ""},
		{"3 prefixed headers", servicePropsPath, corsDoc(corsRule("https://example.com", "GET", list("x-ms-meta-", 3, "*"))), "InvalidXmlDocument"},
		{"2,048 characters of CORS values", servicePropsPath, corsDoc(corsRule(origin(2045), "GET", "")), ""},
		{"2,049 characters of CORS values", servicePropsPath, corsDoc(corsRule(origin(2046), "GET", "")), "InvalidXmlDocument"},
		{"retention of 1 day", servicePropsPath, retentionDoc(1), ""},
		{"retention of 0 days", servicePropsPath, retentionDoc(0), "InvalidXmlDocument"},
		{"retention of 365 days", servicePropsPath, retentionDoc(365), ""},
		{"retention of 366 days", servicePropsPath, retentionDoc(366), "InvalidXmlDocument"},
		{"5 access policies", "/" + name + "?comp=acl", aclDoc("a", "b", "c", "d", "e"), ""},
		{"6 access policies", "/" + name + "?comp=acl", aclDoc("a", "b", "c", "d", "e", "f"), "InvalidXmlDocument"},
		{"access policy id of 64 characters", "/" + name + "?comp=acl", aclDoc(strings.Repeat("i", 64)), ""},
		{"access policy id of 65 characters", "/" + name + "?comp=acl", aclDoc(strings.Repeat("i", 65)), "InvalidXmlDocument"},
	} {
		getPath := servicePropsPath
		if strings.Contains(c.path, "comp=acl") {
			getPath = c.path
		}
		_, _, before := ts.do(t, http.MethodGet, getPath, nil, "")
		status, h, body := ts.do(t, http.MethodPut, c.path, map[string]string{"Content-Type": "application/xml"}, c.doc)
		want := http.StatusAccepted
		if c.path != servicePropsPath {
			want = http.StatusNoContent
		}
		if c.code != "" {
			want = 400
		}
		if status != want || h.Get("x-ms-error-code") != c.code {
			t.Errorf("%s: %d %s, want %d %s (%.300s)", c.what, status, h.Get("x-ms-error-code"), want, c.code, body)
			continue
		}
		if c.code != "" {
			if _, _, after := ts.do(t, http.MethodGet, getPath, nil, ""); after != before {
				t.Errorf("%s: refused, yet the stored document changed", c.what)
			}
		}
	}
}
