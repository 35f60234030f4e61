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
