// Package blob is the Blob service's rules, without HTTP: containers (metadata, public
// access, stored access policies, leases), block blobs (Put Blob, staged blocks, block
// lists), append blobs, snapshots, copies, blob leases, conditional requests, listings and
// the reclamation of unreferenced bytes.
//
// Records (containers, blobs, uncommitted blocks) are ordinary keys of the engine (layout in
// package keys); the bytes of blocks are engine extents (store.Extents) that the records
// name. An extent is durable before the record naming it commits, so a committed block list
// never names a missing extent. Extents no record names are found and removed by the sweep
// (gc.go) in the background.
package blob
