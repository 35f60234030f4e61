// Package entity holds the Table service's data model: EDM types and typed values, entities
// with their system properties, the limits Azure enforces on them, and their codecs (JSON on
// the wire, a compact binary form in the engine).
//
// Invariants: a Value keeps its EDM type end to end (an Int64 is never a float64); DateTime
// values are 100 ns ticks since the Unix epoch; Guid values are canonical lower-case text;
// strings are valid UTF-8 and compare by UTF-16 code unit (keys.CompareOrdinal). Lengths
// are counted in UTF-16 code units wherever Azure counts "characters".
//
// Codec contracts:
//   - DecodeJSON is how client JSON becomes an Entity. It enforces every rule one body can
//     break, fails only with *azerr.Error values, and what it returns passes CheckLimits.
//   - AppendJSON at minimal or full metadata writes what DecodeJSON reads back as the same
//     Entity, bit for bit (a body Timestamp is ignored, so only Timestamp is not carried).
//   - AppendJSONRaw writes a stored entity's JSON without decoding it, byte for byte what
//     AppendJSON writes for the decoded Entity, and fails exactly when DecodeBinary would.
//     A Raw may carry its JSON in ElementOptions' form (WithElementJSON, from a cache of
//     encoded matches); AppendJSONRaw copies it for options that write exactly that form.
//   - AppendBinary/DecodeBinary round-trip any Entity exactly (NaN payloads and -0 too).
//     DecodeBinary and Raw never panic on corrupt bytes; they report ErrCorrupt instead.
//   - The encoders do not allocate beyond growing dst; decoders allocate a few times per
//     entity, not per property (escaped strings and binaries excepted).
package entity
