package load

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
)

// newServiceClient builds an aztables service client for one endpoint.
//
// Two departures from the SDK defaults, both so the numbers measure the server: retries are off
// (a retried failure would hide as latency; errors are counted instead), and the transport keeps
// as many idle connections as there are workers (azcore's default keeps 10 per host, which at
// concurrency 16 would measure TCP connection setup).
func newServiceClient(ci ConnInfo, concurrency int, perCall ...policy.Policy) (*aztables.ServiceClient, error) {
	transport := &http.Transport{
		Proxy:                 nil, // loopback only: never route through an environment proxy
		DialContext:           (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:          concurrency + 16,
		MaxIdleConnsPerHost:   concurrency + 16,
		IdleConnTimeout:       3 * time.Second, // below Node's 5 s keep-alive, so Azurite never closes a conn we are about to reuse
		ResponseHeaderTimeout: 2 * time.Minute,
		ExpectContinueTimeout: time.Second,
	}
	opts := &aztables.ClientOptions{ClientOptions: azcore.ClientOptions{
		Retry:           policy.RetryOptions{MaxRetries: -1},
		Transport:       &http.Client{Transport: transport},
		PerCallPolicies: perCall,
	}}
	if ci.SAS != "" {
		svc, err := aztables.NewServiceClientWithNoCredential(ci.Endpoint+"/?"+ci.SAS, opts)
		if err != nil {
			return nil, fmt.Errorf("table client: %w", err)
		}
		return svc, nil
	}
	cred, err := aztables.NewSharedKeyCredential(ci.Account, ci.Key)
	if err != nil {
		return nil, fmt.Errorf("table credential: %w", err)
	}
	svc, err := aztables.NewServiceClientWithSharedKey(ci.Endpoint, cred, opts)
	if err != nil {
		return nil, fmt.Errorf("table client: %w", err)
	}
	return svc, nil
}

// NewServiceClient is newServiceClient for other load generators (`tablo stress`): SDK
// retries off, so the caller sees every failure; perCall policies see every response.
func NewServiceClient(ci ConnInfo, concurrency int, perCall ...policy.Policy) (*aztables.ServiceClient, error) {
	return newServiceClient(ci, concurrency, perCall...)
}

// IsTerminal reports whether w is a terminal (for a live progress line).
func IsTerminal(w io.Writer) bool { return isTerminal(w) }
