package query

import (
	"fmt"
	"testing"
)

func TestProperties(t *testing.T) {
	for _, c := range []struct{ filter, want string }{
		{"Cat eq 7", "[Cat]"},
		{"not (B and Cat gt 1) or A eq 'x' and Cat lt 9", "[A B Cat]"},
		{"PartitionKey eq 'p' and Timestamp lt datetime'2020-01-01T00:00:00Z'", "[PartitionKey Timestamp]"},
		{"true", "[]"},
	} {
		f, err := Parse(c.filter)
		if err != nil {
			t.Fatalf("%s: %v", c.filter, err)
		}
		if got := fmt.Sprint(f.Properties()); got != c.want {
			t.Errorf("%s: Properties() = %s, want %s", c.filter, got, c.want)
		}
	}
	if (*Filter)(nil).Properties() != nil {
		t.Error("nil filter reads properties")
	}
}
