package postgres

// HasParam exposes hasParam to the tests of the URL handling.
var HasParam = hasParam

// PointReadLimit is how many point-read statements may be in flight before reads gather.
func PointReadLimit(d *DB) int { return d.reads.limit }
