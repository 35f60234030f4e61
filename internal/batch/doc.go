// Package batch is the wire codec for Azure Table entity group transactions ($batch): it
// parses a multipart/mixed request into HTTP sub-requests and renders the multipart response.
// It never touches storage; the server routes each sub-request with its own resource parser,
// runs them in one atomic store update and hands the results back here for rendering.
//
// # Request
//
// Parse accepts what the Go, Python and JS SDKs send (spec/batch.md §2): one batch part that is
// either a changeset (multipart/mixed, nested) of application/http sub-requests, or a single
// bare application/http GET (legacy "retrieve" batch). It tolerates CRLF or LF line endings,
// preamble and epilogue, transport padding after delimiters, any header case, extra blank
// lines, Content-ID at the MIME or HTTP level, and a missing close delimiter.
//
// Invariants of a successful Parse:
//   - every Operation has a non-empty Method (an HTTP token) and a non-empty URL free of
//     control characters;
//   - a changeset holds at most Limits.MaxOperations operations and no GET;
//   - a retrieve batch holds exactly one GET;
//   - Operation.Body aliases the input slice (no copy) and has surrounding whitespace trimmed;
//     Operation.BodyText holds the same bytes as a string.
//   - Each part is copied once, as a string: an operation's Method, URL, header values and
//     BodyText are substrings of its part's copy (or, for a header block byte-identical to the
//     previous part's, of that part's copy, whose parsed Header map is then shared and must be
//     treated as read-only). Nothing an operation holds keeps the whole request alive.
//
// Work is linear in the input: the number of parts is capped before any per-part work or
// allocation, header blocks are bounded, and nesting is limited to batch → changeset. A
// typical changeset costs a few allocations per operation: its part copy, and a Header map
// unless the block repeats the previous one.
//
// Errors are *azerr.Error values (possibly wrapped with %w). A failure that belongs to one
// operation is an *OpError carrying its 0-based index; the server reports it inside a 202
// response (see Failed). Any other error is a whole-request error: answer it with its own
// status and a normal JSON odata.error body, not with a multipart response.
//
// # Response
//
// The server answers a parsed batch with:
//
//	HTTP/1.1 202 Accepted
//	Content-Type: multipart/mixed; boundary=batchresponse_<uuid>   (ResponseContentType)
//	Cache-Control: no-cache
//	X-Content-Type-Options: nosniff
//	x-ms-request-id, x-ms-version, Date (RFC 1123 GMT), x-ms-client-request-id if sent
//	Content-Length: <n> (or chunked)
//
// and a body written by WriteResponse or AppendResponse (or their Retrieve forms; the Append
// forms render into a caller's reusable buffer), or one sub-response at a time by a
// ChangesetWriter (byte for byte what AppendResponse writes), with fresh boundaries from
// NewBoundary(BatchResponsePrefix) and NewBoundary(ChangesetResponsePrefix). On success there
// is one SubResponse per operation in request order; on failure exactly one, built by Failed,
// and nothing may have been applied. The body starts with the first delimiter (no preamble);
// each sub-response's header block ends with its own empty line even without a body, which is
// what Go aztables' http.ReadResponse needs (spec/batch.md §3).
package batch
