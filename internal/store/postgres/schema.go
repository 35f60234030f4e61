package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// migrations are the schema's versions: migrations[i] takes the schema from version i to
// i+1. Append only; never edit a released step. Every statement is portable (PostgreSQL 15+,
// CockroachDB, YugabyteDB) and idempotent, so a step interrupted before its version was
// recorded can run again.
var migrations = [][]string{
	{
		// The whole key space: keys compare byte-wise (bytea/BYTES order is memcmp, then
		// length), exactly the order of package keys.
		`CREATE TABLE IF NOT EXISTS tablo_kv (k BYTEA PRIMARY KEY, v BYTEA NOT NULL)`,
	},
	{
		// Extents (bulk bytes, extents.go): ids from a sequence (unique across front ends,
		// never reused), one catalog row per extent saying whether it is being written,
		// committed or being deleted, and its bytes as chunk rows.
		`CREATE SEQUENCE IF NOT EXISTS tablo_extent_ids`,
		`CREATE TABLE IF NOT EXISTS tablo_extents (id BIGINT PRIMARY KEY, state SMALLINT NOT NULL, size BIGINT NOT NULL, touched TIMESTAMPTZ NOT NULL)`,
		// The reclaimer's work list: only unfinished rows are indexed, and touching a
		// writer's row (not an indexed column) stays a cheap in-place update.
		`CREATE INDEX IF NOT EXISTS tablo_extents_unfinished ON tablo_extents (state) WHERE state <> 1`,
		`CREATE TABLE IF NOT EXISTS tablo_extent_chunks (id BIGINT NOT NULL, n INT NOT NULL, data BYTEA NOT NULL, PRIMARY KEY (id, n))`,
	},
}

// SchemaVersion is the version this build creates and understands.
var SchemaVersion = len(migrations)

// migrate brings the schema to SchemaVersion. Several front ends may start at once: each
// runs the steps in one transaction that first locks the version row (SELECT … FOR UPDATE),
// so they queue behind each other and the later ones find nothing to do. Creating the
// version table itself can race (PostgreSQL reports a duplicate type or relation when two
// sessions create the same table at once): such errors, serialization failures and deadlocks
// are retried.
func migrate(ctx context.Context, pool *pgxpool.Pool) error {
	var last error
	for attempt := range 20 {
		err := migrateOnce(ctx, pool)
		if err == nil {
			return nil
		}
		if !retryableMigration(err) {
			return err
		}
		last = err
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Duration(attempt+1) * 20 * time.Millisecond):
		}
	}
	return fmt.Errorf("postgres: schema migration kept conflicting: %w", last)
}

func migrateOnce(ctx context.Context, pool *pgxpool.Pool) error {
	return pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		// Schema steps may wait for another front end's migration or run long: not bound by
		// the request-sized statement timeout.
		if _, err := tx.Exec(ctx, `SET LOCAL statement_timeout = '5min'`); err != nil {
			return fmt.Errorf("postgres: migration timeout: %w", err)
		}
		if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS tablo_schema (id INT PRIMARY KEY, version INT NOT NULL)`); err != nil {
			return fmt.Errorf("postgres: create schema table: %w", err)
		}
		if _, err := tx.Exec(ctx, `INSERT INTO tablo_schema (id, version) VALUES (1, 0) ON CONFLICT (id) DO NOTHING`); err != nil {
			return fmt.Errorf("postgres: init schema version: %w", err)
		}
		var version int
		if err := tx.QueryRow(ctx, `SELECT version FROM tablo_schema WHERE id = 1 FOR UPDATE`).Scan(&version); err != nil {
			return fmt.Errorf("postgres: read schema version: %w", err)
		}
		if version > SchemaVersion {
			return fmt.Errorf("postgres: the database's schema is version %d, newer than this Tablo's %d: upgrade Tablo", version, SchemaVersion)
		}
		for v := version; v < SchemaVersion; v++ {
			for _, stmt := range migrations[v] {
				if _, err := tx.Exec(ctx, stmt); err != nil {
					return fmt.Errorf("postgres: schema step %d: %w", v+1, err)
				}
			}
		}
		if version < SchemaVersion {
			if _, err := tx.Exec(ctx, `UPDATE tablo_schema SET version = $1 WHERE id = 1`, SchemaVersion); err != nil {
				return fmt.Errorf("postgres: record schema version: %w", err)
			}
		}
		return nil
	})
}

func retryableMigration(err error) bool {
	switch sqlState(err) {
	case "40001", "40P01", "23505", "42P07", "42710":
		return true
	}
	return false
}
