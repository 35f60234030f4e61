package partition

import "testing"

// Services and kinds print their names; values out of range print a placeholder and are
// neither writes nor queries.
func TestServiceAndKindNames(t *testing.T) {
	for s, want := range map[Service]string{0: "service?", Table: "table", Queue: "queue", Blob: "blob", numServices: "service?", 255: "service?"} {
		if got := s.String(); got != want {
			t.Errorf("Service(%d) = %q, want %q", s, got, want)
		}
	}
	for k, want := range map[Kind]string{KindOther: "other", KindDequeue: "dequeue", KindBatch: "batch", numKinds: "kind?", 255: "kind?"} {
		if got := k.String(); got != want {
			t.Errorf("Kind(%d) = %q, want %q", k, got, want)
		}
	}
	for k := range Kind(255) {
		write := k >= KindInsert && k <= KindBatch
		query := k >= KindRowRange && k <= KindTableScan
		if k.Write() != write || k.query() != query {
			t.Errorf("%v: write %v query %v, want %v %v", k, k.Write(), k.query(), write, query)
		}
	}
}
