package e2e

import (
	"bufio"
	"encoding/json"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/tablo/tablo/internal/auth"
)

// sasBatchRetrieve sends the legacy single-GET $batch for one entity with token as the only
// credential, and returns the sub-response's status, error code (empty on success) and body.
func sasBatchRetrieve(t *testing.T, ts *testServer, table, pk, rk, token string) (int, string, string) {
	t.Helper()
	get := "--" + testBatchBoundary + "\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\n" +
		"GET " + ts.entityURL(table, pk, rk) + " HTTP/1.1\r\nAccept: application/json;odata=nometadata\r\n\r\n" +
		"--" + testBatchBoundary + "--\r\n"
	status, h, raw := sasDo(t, ts, http.MethodPost, "/$batch", token, map[string]string{"Content-Type": "multipart/mixed; boundary=" + testBatchBoundary}, get)
	_, params, _ := mime.ParseMediaType(h.Get("Content-Type"))
	part, err := multipart.NewReader(strings.NewReader(raw), params["boundary"]).NextPart()
	if status != http.StatusAccepted || err != nil {
		t.Fatalf("retrieve batch: %d %v\n%s", status, err, raw)
	}
	resp, err := http.ReadResponse(bufio.NewReader(part), nil)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	var e odataError
	if resp.StatusCode >= 400 {
		if err := json.Unmarshal(body, &e); err != nil {
			t.Fatalf("failure body is not JSON: %v: %q", err, body)
		}
	}
	return resp.StatusCode, e.Error.Code, string(body)
}

// TestBatchRetrieveSAS: the retrieve sub-request of a $batch is held to the SAS like a point
// GET: a token without read permission, and one whose key range excludes the entity, are
// refused in the sub-response with Azure's codes, and the entity is not disclosed.
func TestBatchRetrieveSAS(t *testing.T) {
	ts := startServer(t)
	name, admin := acNewTable(t, ts)
	mustAdd(t, admin, "pk1", "rk1", 1)
	mustAdd(t, admin, "pk2", "rk1", 2)
	exp := time.Now().Add(time.Hour).UTC().Format("2006-01-02T15:04:05Z")
	token := func(perms, spk, epk string) string {
		return signedSAS(auth.SAS{Kind: auth.ServiceSAS, Version: "2019-02-02", Permissions: perms, TableName: name,
			Expiry: exp, StartPK: spk, EndPK: epk})
	}
	for _, tt := range []struct {
		what, token, pk string
		status          int
		code            string
	}{
		{"read, in range", token("r", "pk1", "pk1"), "pk1", 200, ""},
		{"read, no range", token("r", "", ""), "pk2", 200, ""},
		{"add only", token("a", "", ""), "pk1", 403, "AuthorizationPermissionMismatch"},
		{"add, update, delete", token("aud", "", ""), "pk1", 403, "AuthorizationPermissionMismatch"},
		{"range excludes the entity", token("raud", "pk1", "pk1"), "pk2", 403, "AuthorizationFailure"},
		{"range starts after the entity", token("r", "pk2", ""), "pk1", 403, "AuthorizationFailure"},
	} {
		status, code, body := sasBatchRetrieve(t, ts, name, tt.pk, "rk1", tt.token)
		if status != tt.status || code != tt.code {
			t.Errorf("%s: sub-response %d %q, want %d %q\n%s", tt.what, status, code, tt.status, tt.code, body)
		}
		if status == 403 && strings.Contains(body, "rk1") {
			t.Errorf("%s: refusal discloses the entity: %s", tt.what, body)
		}
	}
}
