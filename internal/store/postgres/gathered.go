package postgres

import (
	"bytes"
	"context"
	"slices"
)

// Gathered single-key writes (InsertIf, WriteIf of an absent or an existing key): while the
// database is busy with such writes, concurrent ones of one kind share one statement in one
// transaction (coalesce.go says when). That saves, per write, a transaction with its commit
// record and WAL flush, a round trip, and the lock of the table's catalog record that every
// insert takes (one per statement instead, and no multixact naming many lockers). Each write
// keeps its own condition and its own outcome: a row lands only if its own key and guard hold
// what it expects, and a row that does not land leaves the others alone (a gathered insert
// of a key that a racing writer inserted first is skipped by ON CONFLICT DO NOTHING, where a
// single insert reports the unique violation). The statement commits all landed rows or none:
// an error (a timeout, a lost connection) is every gathered write's error, as it would be for
// each alone. Rows are sent in key order, so two gathered statements wait for each other's
// keys in one order; a deadlock with another transaction is retried like a single write's.
const (
	// stmtInsertIfMany is stmtInsertIf for many rows; RETURNING names those that landed.
	stmtInsertIfMany = `INSERT INTO tablo_kv (k, v) SELECT u.k, u.v FROM unnest($1::BYTEA[], $2::BYTEA[], $3::BYTEA[], $4::BYTEA[]) AS u (k, v, gk, gv) WHERE NOT EXISTS (SELECT 1 FROM tablo_kv t WHERE t.k = u.k) AND EXISTS (SELECT 1 FROM tablo_kv g WHERE g.k = u.gk AND g.v = u.gv FOR SHARE) ON CONFLICT (k) DO NOTHING RETURNING k`
	// stmtUpdateIfMany is stmtUpdateIf for many rows.
	stmtUpdateIfMany = `UPDATE tablo_kv t SET v = u.v FROM unnest($1::BYTEA[], $2::BYTEA[], $3::BYTEA[], $4::BYTEA[], $5::BYTEA[]) AS u (k, v, old, gk, gv) WHERE t.k = u.k AND t.v = u.old AND EXISTS (SELECT 1 FROM tablo_kv g WHERE g.k = u.gk AND g.v = u.gv) RETURNING t.k`
)

// A gathered write statement carries at most maxBatchWrites rows of at most maxBatchBytes
// together (a larger write runs alone).
const (
	maxBatchWrites = 32
	maxBatchBytes  = 1 << 20
)

// condRow is one guarded write: key = value if key holds old (an update) or is absent (an
// insert: old nil), and guardKey holds guardValue.
type condRow struct{ key, value, old, guardKey, guardValue []byte }

func (r condRow) size() int {
	return len(r.key) + len(r.value) + len(r.old) + len(r.guardKey) + len(r.guardValue)
}

// writeBatch is the work of a gathered write statement: rows of distinct keys, and once it
// ran, which of them landed.
type writeBatch struct {
	rows   []condRow
	bytes  int
	keys   map[string]bool // the rows' keys; after the statement, whether each landed
	landed int
	err    error
}

// join adds r if it fits (and no row of the batch writes its key).
func (b *writeBatch) join(r condRow) bool {
	if len(b.rows) == maxBatchWrites || b.bytes+r.size() > maxBatchBytes {
		return false
	}
	if _, dup := b.keys[string(r.key)]; dup {
		return false
	}
	if b.keys == nil {
		b.keys = map[string]bool{}
	}
	b.rows = append(b.rows, r)
	b.bytes += r.size()
	b.keys[string(r.key)] = false
	return true
}

// gatherWrite runs r as part of a gathered statement of g's kind when the database is busy
// (update: r.old is the value the key must hold); grp nil means it runs alone (the caller
// then sends its own statement and calls g.finish).
func (d *DB) gatherWrite(ctx context.Context, g *gatherer[writeBatch], op string, update bool, r condRow) (grp *group[writeBatch], written bool, err error) {
	grp, leader := g.enter(func(b *writeBatch, _ bool) bool { return b.join(r) })
	if grp == nil {
		return nil, false, nil
	}
	if leader {
		g.lead(ctx, grp, func(ctx context.Context, b *writeBatch) { d.runWrites(ctx, op, update, b) })
	} else {
		// Not abandoned on ctx: the write may still land, and its caller must learn whether
		// it did. The leader's statement is bounded by the engine's timeout.
		<-grp.done
	}
	return grp, grp.b.keys[string(r.key)], grp.b.err
}

// runWrites sends a gathered write statement.
func (d *DB) runWrites(ctx context.Context, op string, update bool, b *writeBatch) {
	slices.SortFunc(b.rows, func(x, y condRow) int { return bytes.Compare(x.key, y.key) })
	cols := make([][][]byte, 5)
	for _, r := range b.rows {
		cols[0] = append(cols[0], r.key)
		cols[1] = append(cols[1], r.value)
		cols[2] = append(cols[2], r.old)
		cols[3] = append(cols[3], r.guardKey)
		cols[4] = append(cols[4], r.guardValue)
	}
	sql, args := stmtInsertIfMany, []any{cols[0], cols[1], cols[3], cols[4]}
	if update {
		sql, args = stmtUpdateIfMany, []any{cols[0], cols[1], cols[2], cols[3], cols[4]}
	}
	b.err = d.retryGuarded(ctx, op, func() error {
		for k := range b.keys {
			b.keys[k] = false
		}
		rows, err := d.pool.Query(ctx, sql, args...)
		if err != nil {
			return err
		}
		for rows.Next() {
			if k := rows.RawValues()[0]; k != nil {
				if _, ok := b.keys[string(k)]; ok {
					b.keys[string(k)] = true
				}
			}
		}
		return rows.Err()
	})
}
