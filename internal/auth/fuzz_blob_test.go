package auth

import (
	"net/url"
	"testing"
	"time"
)

// FuzzParseBlobSAS: blob service and account SAS tokens parse, verify and authorize every
// blob operation without panicking, and a verified token is exactly the signed one.
func FuzzParseBlobSAS(f *testing.F) {
	f.Add("sv=2021-12-02&sr=b&sp=r&st=2025-01-01T00:00:00Z&se=2025-01-02T00:00:00Z&spr=https,http&sig=YwqhBUSqMes7sDTkvASdSwYUCadpGJiTEpaoy7xk25I%3D", "mycontainer/dir1/hello.txt")
	f.Add("sv=2021-12-02&sr=c&sp=rl&se=2025-01-02T00:00:00Z&sig=%2FFVd4NiQNeRFquUA1AXViXCntbpkNOgrSJSiQjj%2Fp30%3D", "mycontainer")
	f.Add("sv=2021-12-02&ss=bq&srt=sco&sp=rl&se=2025-01-02T00:00:00Z&spr=https,http&sig=vMBsXWbMVhp6IMgK1EyOgYgANMcb1edtE3e9qt0p7Xs%3D", "c/b")
	f.Add("sv=2026-12-06&sr=bs&sp=racwd&se=2030-01-01&snapshot=2026-11-24T07:02:29.8040000Z&rscc=x&sig=AAAA", "c/b")
	now := time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, rawQuery, resource string) {
		q, _ := url.ParseQuery(rawQuery)
		s, ok, err := ParseSASFor(ServiceBlob, q)
		if !ok || err != nil {
			return
		}
		err = s.Verify(devAccount(), SASRequest{Now: now, Resource: resource})
		if err == nil {
			want := *s
			want.Sign(DevAccountName, devAccount().Keys[0])
			if want.Signature != canonicalSig(s.Signature) {
				t.Fatalf("verified with signature %q, want %q", s.Signature, want.Signature)
			}
		}
		for op := ListContainers; op <= blobOpsEnd; op++ {
			_ = s.Authorize(op, resource)
		}
	})
}
