package query

// checkCompare type-checks one comparison: exactly one side is a property and the other a
// literal. A literal on the left is mirrored so the property always reads first. Whether
// the literal's type suits the property is decided per entity at evaluation time (the
// service is schemaless), so it is not an error here.
func checkCompare(src string, left token, op Op, right token) (*Compare, error) {
	switch {
	case left.kind == tIdent && right.kind == tLiteral:
		return &Compare{Op: op, Prop: left.text, PropPos: left.pos, Value: right.val, ValuePos: right.pos}, nil
	case left.kind == tLiteral && right.kind == tIdent:
		return &Compare{Op: op.mirror(), Prop: right.text, PropPos: right.pos, Value: left.val, ValuePos: left.pos}, nil
	case left.kind == tIdent:
		return nil, errAt(src, left.pos, "Comparing property '%s' with property '%s' is not supported", left.text, right.text)
	}
	return nil, errAt(src, left.pos, "Comparing two literals is not supported")
}
