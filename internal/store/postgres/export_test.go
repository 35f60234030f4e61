package postgres

// HasParam exposes hasParam to the tests of the URL handling.
var HasParam = hasParam
