package postgres

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"syscall"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/tablo/tablo/internal/store"
)

// sqlState returns the SQLSTATE of a server error, or "".
func sqlState(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code
	}
	return ""
}

// serializationFailure reports the errors a serializable transaction is retried on.
func serializationFailure(err error) bool {
	switch sqlState(err) {
	case "40001", "40P01": // serialization_failure, deadlock_detected
		return true
	}
	return false
}

// kind classifies a failure for the layers above, which see only store sentinels.
type kind uint8

const (
	kindOther       kind = iota
	kindUnavailable      // the database is down, restarting, or refused the connection
	kindTimeout          // statement timeout or our own deadline
)

func classify(err error) kind {
	if err == nil {
		return kindOther
	}
	if errors.Is(err, context.DeadlineExceeded) || pgconn.Timeout(err) {
		return kindTimeout
	}
	st := sqlState(err)
	switch {
	case st == "57014": // query_canceled: statement_timeout
		return kindTimeout
	case strings.HasPrefix(st, "08"), // connection exceptions
		st == "57P01", st == "57P02", st == "57P03", // admin/crash shutdown, cannot connect now
		st == "53300": // too_many_connections
		return kindUnavailable
	case st != "":
		return kindOther
	}
	// No SQLSTATE: the failure is the connection's (refused, reset, closed mid-answer).
	var ne net.Error
	var ce *pgconn.ConnectError
	if errors.As(err, &ce) || errors.As(err, &ne) || pgconn.SafeToRetry(err) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, net.ErrClosed) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) || errors.Is(err, syscall.ECONNREFUSED) ||
		strings.Contains(err.Error(), "conn closed") {
		return kindUnavailable
	}
	return kindOther
}

// wrap turns an engine failure into an error carrying the store sentinel its kind maps to.
func wrap(op string, err error) error {
	switch classify(err) {
	case kindUnavailable:
		return fmt.Errorf("postgres: %s: %w: %w", op, store.ErrUnavailable, err)
	case kindTimeout:
		return fmt.Errorf("postgres: %s: %w: %w", op, store.ErrTimeout, err)
	}
	return fmt.Errorf("postgres: %s: %w", op, err)
}
