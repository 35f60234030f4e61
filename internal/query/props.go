package query

import "slices"

// Properties returns the distinct property names the filter reads, sorted. A nil filter
// reads none.
func (f *Filter) Properties() []string {
	if f == nil {
		return nil
	}
	var names []string
	var walk func(Expr)
	walk = func(x Expr) {
		switch x := x.(type) {
		case *Logical:
			for _, t := range x.Terms {
				walk(t)
			}
		case *Not:
			walk(x.X)
		case *Compare:
			names = append(names, x.Prop)
		case *BoolProp:
			names = append(names, x.Name)
		}
	}
	walk(f.Root)
	slices.Sort(names)
	return slices.Compact(names)
}
