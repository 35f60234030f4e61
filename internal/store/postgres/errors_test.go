package postgres

import (
	"context"
	"errors"
	"fmt"
	"io"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/tablo/tablo/internal/store"
)

// TestClassify: each failure maps to the store sentinel the layers above answer with: the
// statement timeout and deadlines to ErrTimeout; connection exceptions, shutdowns, a server
// not accepting connections and too many connections to ErrUnavailable (reads are retried on
// them); any other server error, with its SQLSTATE, to neither; a failure without a SQLSTATE
// to ErrUnavailable when it is the connection's.
func TestClassify(t *testing.T) {
	pg := func(code string) error { return fmt.Errorf("query: %w", &pgconn.PgError{Code: code}) }
	for _, c := range []struct {
		err  error
		want error
	}{
		{pg("57014"), store.ErrTimeout},
		{context.DeadlineExceeded, store.ErrTimeout},
		{pg("08006"), store.ErrUnavailable},
		{pg("08001"), store.ErrUnavailable},
		{pg("57P01"), store.ErrUnavailable},
		{pg("57P02"), store.ErrUnavailable},
		{pg("57P03"), store.ErrUnavailable},
		{pg("53300"), store.ErrUnavailable},
		{pg("40001"), nil},
		{pg("23505"), nil},
		{pg("54000"), nil},
		{pg("P0001"), nil},
		{io.ErrUnexpectedEOF, store.ErrUnavailable},
		{errors.New("some other failure"), nil},
	} {
		got := wrap("op", c.err)
		for _, s := range []error{store.ErrTimeout, store.ErrUnavailable} {
			if errors.Is(got, s) != (s == c.want) {
				t.Errorf("%v: %v, want sentinel %v", c.err, got, c.want)
			}
		}
		if !errors.Is(got, c.err) {
			t.Errorf("%v: %v does not wrap it", c.err, got)
		}
	}
	if classify(nil) != kindOther {
		t.Error("no error classified as a failure")
	}
}
