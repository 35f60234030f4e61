// Package query implements the Table service's query language and options: the OData $filter
// subset (scanner → parser → type check → evaluator, plus a printer), the key-range planner,
// and the $select, $top and continuation-token helpers.
//
// Pipeline: Parse scans and parses a $filter into an AST whose nodes carry byte offsets,
// checks it (one side of every comparison is a property, the other a literal; literal-on-the-left
// is mirrored so the AST always reads "Property op literal"), and returns a *Filter.
// PlanQuery turns a *Filter into key ranges over (PartitionKey, RowKey) plus a residual filter;
// Plan.Spans maps the ranges into the encoded key space of package keys.
//
// Invariants:
//   - Every error a client can cause is an *Error that wraps an *azerr.Error with code
//     InvalidInput; its message names the 0-based byte position in the filter.
//   - Parsing is bounded: filter length, nesting depth (parentheses and "not") and node count
//     are capped (Limits), so no input can exhaust the stack or memory.
//   - Filter.Eval is total and two-valued: a missing property makes every comparison false
//     (even ne); a present property of an incompatible type gives eq=false, ne=true,
//     lt/le=true, gt/ge=false; NaN compares false except for ne. It does not allocate.
//   - A plan never changes results, only cost: the entities whose keys lie in the plan's spans
//     and satisfy the residual are exactly the entities satisfying the filter, in key order.
//   - String(Filter) is canonical: it parses back to the same AST.
//
// Decisions (see the package tests):
//   - Keywords (and or not eq ne gt ge lt le true false null) are lower case only, as the
//     docs say; Azurite's case-insensitivity is not copied. Literal prefixes (datetime, guid,
//     binary, X) are accepted in any case since they cannot be confused with anything else.
//   - The documented 15-comparison limit is not enforced by default (Limits.MaxComparisons
//     = 0): real users send long OR chains and the node limit already bounds the work.
//   - An Int32 literal matches an Int64 property (widened), following observed Azure
//     behaviour; Int32/Int64 literals against a Double property are compared exactly.
//   - An empty or all-blank $filter is no filter: Parse returns a nil *Filter, whose Eval is
//     always true and whose plan is a table scan.
package query
