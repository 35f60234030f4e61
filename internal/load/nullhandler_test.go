package load

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/valyala/fasthttp"
)

func TestAppendJSONStringMatchesMarshal(t *testing.T) {
	for _, s := range []string{
		"", "pk00001", "a b/c'd", `q"uote`, `back\slash`, "<&>", "tab\there", "nl\n", "\x00\x1f\x7f",
		"é", "日本", "\u2028\u2029", "bad\xffutf8", "~!@#$%^*()_+-=[]{}|;:,.?",
	} {
		want, _ := json.Marshal(s)
		if got := appendJSONString([]byte("x"), s); string(got) != "x"+string(want) {
			t.Errorf("appendJSONString(%q) = %s, want x%s", s, got, want)
		}
	}
}

// FuzzAppendJSONString checks that the fast path renders every string as json.Marshal does.
func FuzzAppendJSONString(f *testing.F) {
	f.Add("pk1")
	f.Add("<\u2028\xff")
	f.Fuzz(func(t *testing.T, s string) {
		want, _ := json.Marshal(s)
		if got := appendJSONString(nil, s); string(got) != string(want) {
			t.Fatalf("appendJSONString(%q) = %s, want %s", s, got, want)
		}
	})
}

func TestSplitTarget(t *testing.T) {
	tests := []struct{ target, path, query string }{
		{"/acct/t1()?$top=2&x=y", "/acct/t1()", "$top=2&x=y"},
		{"/acct/t(PartitionKey='a%2F%2Fb',RowKey='..')", "/acct/t(PartitionKey='a%2F%2Fb',RowKey='..')", ""},
		{"/a//b/../c?", "/a//b/../c", ""},
		{"http://127.0.0.1:10002/acct/Tables?comp=x", "/acct/Tables", "comp=x"},
		{"http://host?q", "", "q"},
		{"http://host", "", ""},
		{"*", "*", ""},
		{"", "", ""},
	}
	for _, tc := range tests {
		path, query := splitTarget([]byte(tc.target))
		if string(path) != tc.path || string(query) != tc.query {
			t.Errorf("splitTarget(%q) = %q, %q; want %q, %q", tc.target, path, query, tc.path, tc.query)
		}
	}
}

func TestContainsFold(t *testing.T) {
	tests := []struct {
		s    string
		want bool
	}{
		{"return-no-content", true},
		{"odata.include-annotations=*, Return-No-Content", true},
		{"RETURN-NO-CONTENT", true},
		{"return-content", false},
		{"return-no-conten", false},
		{"", false},
	}
	for _, tc := range tests {
		if got := containsFold([]byte(tc.s), "return-no-content"); got != tc.want {
			t.Errorf("containsFold(%q) = %v, want %v", tc.s, got, tc.want)
		}
	}
}

// TestNullRequestError checks the answers to requests fasthttp refused before the handler.
func TestNullRequestError(t *testing.T) {
	h := newNullHandler(NullConfig{})
	tests := []struct {
		err      error
		want     int
		wantCode string
	}{
		{fasthttp.ErrBodyTooLarge, fasthttp.StatusRequestEntityTooLarge, "RequestBodyTooLarge"},
		{&fasthttp.ErrSmallBuffer{}, fasthttp.StatusRequestHeaderFieldsTooLarge, ""},
		{errors.New("cannot parse request line"), fasthttp.StatusBadRequest, ""},
	}
	for _, tc := range tests {
		var ctx fasthttp.RequestCtx
		ctx.Init(&fasthttp.Request{}, nil, nil)
		h.requestError(&ctx, tc.err)
		if got := ctx.Response.StatusCode(); got != tc.want {
			t.Errorf("%v: status %d, want %d", tc.err, got, tc.want)
		}
		if got := string(ctx.Response.Header.Peek("x-ms-error-code")); got != tc.wantCode {
			t.Errorf("%v: error code %q, want %q", tc.err, got, tc.wantCode)
		}
		if tc.wantCode != "" && !strings.Contains(string(ctx.Response.Body()), tc.wantCode) {
			t.Errorf("%v: body %s lacks the code", tc.err, ctx.Response.Body())
		}
	}
}
