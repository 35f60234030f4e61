// Package auth authenticates and authorizes Table service requests: Shared Key and Shared Key
// Lite (Table flavour), service and account shared access signatures, and the stored access
// policies (table ACL XML) that service SAS tokens may refer to.
//
// The package is pure: it never does I/O, never reads the clock and never touches storage.
// The server passes in what it knows about the request (RequestInfo, SASRequest) and, for
// stored access policies, a lookup function.
//
// Invariants:
//   - Every error a client can cause is an *azerr.Error carrying Azure's exact code (possibly
//     wrapped with %w); nothing panics on any input.
//   - Signatures are compared in constant time (crypto/hmac.Equal) against every key of the
//     account, so a request signed with either of the two keys verifies.
//   - A Verifier answers exactly as VerifySharedKey; it only reuses HMAC state (keyed pads)
//     and scratch buffers between requests.
//   - The Shared Key canonical resource is built from the raw request path exactly as it was
//     sent (never decoded or re-encoded) plus only the comp query parameter.
//   - A SAS is usable for authorization only after Verify has succeeded; Authorize and
//     CheckKey fail closed on an unverified token.
//   - Key ranges compare keys with keys.CompareOrdinal (UTF-16 code-unit order).
package auth
