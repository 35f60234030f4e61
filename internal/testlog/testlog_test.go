package testlog

import (
	"log/slog"
	"testing"
)

func TestRecordsReadBackEveryLine(t *testing.T) {
	var b Buffer
	log := slog.New(slog.NewJSONHandler(&b, nil))
	log.Info("first", "n", 1)
	log.Error("second")
	recs := b.Records(t)
	if len(recs) != 2 || recs[0]["msg"] != "first" || recs[0]["n"] != float64(1) || recs[1]["level"] != "ERROR" {
		t.Fatalf("records = %v", recs)
	}
	var empty Buffer
	if recs := empty.Records(t); len(recs) != 0 {
		t.Fatalf("records of an empty log = %v", recs)
	}
}

func TestFailOnErrorsReportsOnlyErrors(t *testing.T) {
	var b Buffer
	log := slog.New(slog.NewJSONHandler(&b, nil))
	log.Warn("not an error")
	ft := &failRecorder{}
	b.FailOnErrors(ft)
	if ft.errors != 0 {
		t.Fatal("a warning failed the test")
	}
	log.Error("boom")
	b.FailOnErrors(ft)
	if ft.errors != 1 {
		t.Fatalf("an Error record reported %d times, want once", ft.errors)
	}
}

// failRecorder counts Errorf calls instead of failing.
type failRecorder struct {
	testing.TB
	errors int
}

func (f *failRecorder) Helper()                        {}
func (f *failRecorder) Errorf(string, ...any)          { f.errors++ }
func (f *failRecorder) Fatalf(format string, a ...any) { panic("unexpected Fatalf") }
