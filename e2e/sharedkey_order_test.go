package e2e

import (
	"context"
	"net/http"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
)

// addHeaders sets extra request headers before the SDK signs the request.
type addHeaders map[string]string

func (a addHeaders) Do(req *policy.Request) (*http.Response, error) {
	for k, v := range a {
		req.Raw().Header.Set(k, v)
	}
	return req.Next()
}

// x-ms-* headers whose names hold punctuation, signed by azblob, which sorts them in the
// service's order: '~' before letters, "x-ms-ab" before "x-ms-a'b" before "x-ms-a-b" (code-point
// order differs in both). The server accepts the signature.
func TestBlobSharedKeyHeadersWithPunctuation(t *testing.T) {
	ts := startServer(t)
	cred, err := azblob.NewSharedKeyCredential(devAccount, devKey)
	if err != nil {
		t.Fatal(err)
	}
	extra := addHeaders{"x-ms-tablo-a~": "1", "x-ms-tablo-ab": "2", "x-ms-tablo-a'b": "3", "x-ms-tablo-a-b": "4",
		"x-ms-tablo-a.": "5", "x-ms-tablo-a_": "6", "x-ms-tablo-a0": "7"}
	c, err := azblob.NewClientWithSharedKeyCredential(ts.blobEndpoint()+"/", cred, &azblob.ClientOptions{ClientOptions: azcore.ClientOptions{
		Retry:           policy.RetryOptions{MaxRetries: -1},
		PerCallPolicies: []policy.Policy{extra},
	}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := c.CreateContainer(ctx, "punctuation", nil); err != nil {
		t.Fatalf("create container signed with punctuated x-ms-* headers: %v", err)
	}
	if _, err := c.ServiceClient().NewContainerClient("punctuation").GetProperties(ctx, nil); err != nil {
		t.Fatalf("get properties signed with punctuated x-ms-* headers: %v", err)
	}
}
