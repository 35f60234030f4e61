// Package serviceprops is the Table service's account-level settings document,
// StorageServiceProperties (Logging, HourMetrics, MinuteMetrics, Cors), and the CORS rule
// matching that uses it (table-api.md §9 and §11).
//
// The package is pure: no I/O, no clock. The server stores the rendered XML of a Properties
// as an opaque account setting and parses it back with Decode.
//
// Invariants:
//   - Parse matches elements by name in any order and skips unknown ones; every error a
//     client can cause is an *azerr.Error with Azure's code, InvalidXmlDocument (for values
//     too), wrapped with %w; nothing panics on any input.
//   - A valid Properties renders (AppendXML) to a document that Parse accepts and that yields
//     the same Properties again: stored settings always decode.
//   - Set Table Service Properties is a partial update: Apply replaces only the top-level
//     elements present in the request; an empty <Cors/> clears the CORS rules.
//   - CORS matching is first rule wins; origins compare case-insensitively, methods exactly
//     (upper case), headers case-insensitively with "prefix*" wildcards.
package serviceprops
