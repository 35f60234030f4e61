package e2e

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
)

func wantCode(t *testing.T, err error, status int, code string) {
	t.Helper()
	var re *azcore.ResponseError
	if !errors.As(err, &re) {
		t.Fatalf("want %d %s, got %v", status, code, err)
	}
	if re.StatusCode != status || re.ErrorCode != code {
		t.Fatalf("want %d %s, got %d %s", status, code, re.StatusCode, re.ErrorCode)
	}
}

func TestTableLifecycle(t *testing.T) {
	ts := startServer(t)
	svc := ts.service(t)
	if _, err := svc.CreateTable(ctx, "MixedCase", nil); err != nil {
		t.Fatal(err)
	}
	_, err := svc.CreateTable(ctx, "mixedcase", nil)
	wantCode(t, err, 409, "TableAlreadyExists")

	// Names keep their creation case.
	pager := svc.NewListTablesPager(nil)
	var names []string
	for pager.More() {
		p, err := pager.NextPage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, tb := range p.Tables {
			names = append(names, *tb.Name)
		}
	}
	if fmt.Sprint(names) != "[MixedCase]" {
		t.Fatalf("tables %v", names)
	}

	// Entities vanish with the table; a re-created table is new and empty.
	tc := svc.NewClient("MIXEDCASE")
	if _, err := tc.AddEntity(ctx, []byte(`{"PartitionKey":"p","RowKey":"r"}`), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.DeleteTable(ctx, "mixedCASE", nil); err != nil {
		t.Fatal(err)
	}
	_, err = svc.DeleteTable(ctx, "MixedCase", nil)
	wantCode(t, err, 404, "ResourceNotFound")
	_, err = tc.GetEntity(ctx, "p", "r", nil)
	wantCode(t, err, 404, "TableNotFound")
	if _, err := svc.CreateTable(ctx, "MixedCase", nil); err != nil {
		t.Fatal(err)
	}
	_, err = tc.GetEntity(ctx, "p", "r", nil)
	wantCode(t, err, 404, "ResourceNotFound")
}

func TestTableNameValidation(t *testing.T) {
	ts := startServer(t)
	svc := ts.service(t)
	cases := []struct {
		name   string
		status int
		code   string
	}{
		{"ab", 400, "OutOfRangeInput"},
		{strings.Repeat("a", 64), 400, "OutOfRangeInput"},
		{"1abc", 400, "InvalidResourceName"},
		{"ab-cd", 400, "InvalidResourceName"},
		{"tables", 400, "InvalidInput"},
		{"TABLES", 400, "InvalidInput"},
	}
	for _, c := range cases {
		_, err := svc.CreateTable(ctx, c.name, nil)
		wantCode(t, err, c.status, c.code)
	}
	for _, ok := range []string{"abc", strings.Repeat("a", 63), "A1b2"} {
		if _, err := svc.CreateTable(ctx, ok, nil); err != nil {
			t.Errorf("create %q: %v", ok, err)
		}
	}
}

func TestListTablesFilterTopAndPaging(t *testing.T) {
	ts := startServer(t)
	svc := ts.service(t)
	for i := range 25 {
		if _, err := svc.CreateTable(ctx, fmt.Sprintf("tab%02d", i), nil); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := svc.CreateTable(ctx, "other", nil); err != nil {
		t.Fatal(err)
	}
	pager := svc.NewListTablesPager(&aztables.ListTablesOptions{
		Filter: to.Ptr("TableName ge 'tab' and TableName lt 'tac'"),
		Top:    to.Ptr(int32(10)),
	})
	var names []string
	pages := 0
	for pager.More() {
		p, err := pager.NextPage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		pages++
		if len(p.Tables) > 10 {
			t.Fatalf("page of %d > $top", len(p.Tables))
		}
		for _, tb := range p.Tables {
			names = append(names, *tb.Name)
		}
	}
	if len(names) != 25 || pages != 3 || names[0] != "tab00" || names[24] != "tab24" {
		t.Fatalf("pages=%d names=%v", pages, names)
	}
}

func TestCreateTablePreferAndMetadata(t *testing.T) {
	ts := startServer(t)
	status, h, body := ts.do(t, "POST", "/Tables", map[string]string{
		"Content-Type": "application/json", "Accept": "application/json;odata=fullmetadata",
	}, `{"TableName":"full1"}`)
	want := `{"odata.metadata":"` + ts.endpoint + `/$metadata#Tables/@Element","odata.type":"devstoreaccount1.Tables","odata.id":"` + ts.endpoint + `/Tables('full1')","odata.editLink":"Tables('full1')","TableName":"full1"}`
	if status != 201 || body != want || h.Get("Location") != ts.endpoint+"/Tables('full1')" {
		t.Fatalf("201: %d %s\n%s", status, h, body)
	}
	status, h, body = ts.do(t, "POST", "/Tables", map[string]string{
		"Content-Type": "application/json", "Prefer": "return-no-content",
	}, `{"TableName":"nocontent"}`)
	if status != 204 || body != "" || h.Get("Preference-Applied") != "return-no-content" {
		t.Fatalf("204: %d %s %q", status, h, body)
	}
	status, _, body = ts.do(t, "POST", "/Tables", map[string]string{
		"Content-Type": "application/json", "Accept": "application/json;odata=nometadata",
	}, `{"TableName":"nometa"}`)
	if status != 201 || body != `{"TableName":"nometa"}` {
		t.Fatalf("nometadata: %d %s", status, body)
	}
	// Legacy exists check.
	status, _, body = ts.do(t, "GET", "/Tables('nometa')", map[string]string{"Accept": "application/json;odata=nometadata"}, "")
	if status != 200 || body != `{"TableName":"nometa"}` {
		t.Fatalf("get table: %d %s", status, body)
	}
	status, _, body = ts.do(t, "GET", "/Tables('missing')", nil, "")
	if status != 404 || !strings.Contains(body, `"code":"ResourceNotFound"`) {
		t.Fatalf("get missing table: %d %s", status, body)
	}
	status, _, body = ts.do(t, "POST", "/Tables", map[string]string{"Content-Type": "application/json"}, `not json`)
	if status != 400 || !strings.Contains(body, `"code":"InvalidInput"`) {
		t.Fatalf("bad body: %d %s", status, body)
	}
}

func TestCommonHeadersAndErrors(t *testing.T) {
	ts := startServer(t)
	status, h, body := ts.do(t, "GET", "/nosuchtable()", map[string]string{"x-ms-client-request-id": "abc-123"}, "")
	if status != 404 || h.Get("x-ms-error-code") != "TableNotFound" {
		t.Fatalf("%d %s", status, h)
	}
	if h.Get("x-ms-request-id") == "" || h.Get("x-ms-version") != "2019-02-02" || h.Get("x-ms-client-request-id") != "abc-123" {
		t.Fatalf("common headers: %v", h)
	}
	if _, err := http.ParseTime(h.Get("Date")); err != nil || !strings.HasSuffix(h.Get("Date"), "GMT") {
		t.Fatalf("Date %q", h.Get("Date"))
	}
	if !strings.HasPrefix(body, `{"odata.error":{"code":"TableNotFound","message":{"lang":"en-US","value":"The table specified does not exist.\nRequestId:`+h.Get("x-ms-request-id")+`\nTime:`) {
		t.Fatalf("error body %s", body)
	}
	// Unknown and future versions are accepted; garbage is not.
	if status, _, _ := ts.do(t, "GET", "/Tables", map[string]string{"x-ms-version": "2099-01-01"}, ""); status != 200 {
		t.Fatalf("future version: %d", status)
	}
	if status, h, _ := ts.do(t, "GET", "/Tables", map[string]string{"x-ms-version": "banana"}, ""); status != 400 || h.Get("x-ms-error-code") != "InvalidHeaderValue" {
		t.Fatalf("garbage version: %d %s", status, h.Get("x-ms-error-code"))
	}
	// Wrong verbs.
	if status, h, _ := ts.do(t, "PUT", "/Tables", nil, ""); status != 405 || h.Get("x-ms-error-code") != "MethodNotAllowed" {
		t.Fatalf("PUT /Tables: %d %s", status, h.Get("x-ms-error-code"))
	}
	// Authentication.
	if status, h, _ := ts.do(t, "GET", "/Tables", map[string]string{"Authorization": ""}, ""); status != 403 || h.Get("x-ms-error-code") != "AuthenticationFailed" {
		t.Fatalf("no auth: %d %s", status, h.Get("x-ms-error-code"))
	}
	if status, h, _ := ts.do(t, "GET", "/Tables", map[string]string{"Authorization": "SharedKeyLite devstoreaccount1:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="}, ""); status != 403 || h.Get("x-ms-error-code") != "AuthenticationFailed" {
		t.Fatalf("bad signature: %d %s", status, h.Get("x-ms-error-code"))
	}
}
