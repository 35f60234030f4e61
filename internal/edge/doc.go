// Package edge is the request pipeline every service's HTTP edge shares: request ids,
// x-ms-version, account resolution (path style and host style, the -secondary endpoint),
// CORS (actual requests and preflights), authentication (Shared Key in the service's flavour,
// service and account SAS), service properties and stats, panic recovery, request logging,
// and the one reply writer with the service's error envelope (JSON for Table, XML for Blob
// and Queue).
//
// A service's wire package (internal/server for Table, internal/queuewire for Queue) owns a
// Pipeline, wraps each request in a Call, and only routes and decodes: it never writes to
// the connection itself, so a failing request never sends a partial response.
package edge
