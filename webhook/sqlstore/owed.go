package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/escrowkit/escrow-go/webhook"
)

// Ids owed a look (webhook.Store.Owe) are rows of escrow_webhook_owed, one a range (lo,
// hi): disjoint, never adjacent. An operation reads the rows it can change with indexed
// probes (by lo, the primary key), applies webhook.OwedSet's rules to them, and writes the
// rows that differ; the one row of escrow_webhook_owed_count counts the rows, so that the
// bound is kept without counting them, and its lock serializes the writers on PostgreSQL
// (SQLite's immediate transactions hold the database's write lock).

// probeRuns bounds the runs of ids one probe statement reads the rows of: two SELECTs a
// run, within SQLite's 500 terms of a compound SELECT.
const probeRuns = 100

// rowChunk bounds the rows one INSERT or DELETE of ranges writes.
const rowChunk = 400

// Owe records ids as owed a look in one database transaction, dropping the ranges farthest
// from near past webhook.MaxOwedRanges.
func (s *Store) Owe(ctx context.Context, ids []int64, near int64) (dropped int64, err error) {
	return s.changeOwed(ctx, ids, near, (*webhook.OwedSet).Owe)
}

// Settle removes ids from those owed a look in one database transaction, dropping the
// ranges farthest from near past webhook.MaxOwedRanges.
func (s *Store) Settle(ctx context.Context, ids []int64, near int64) (dropped int64, err error) {
	return s.changeOwed(ctx, ids, near, (*webhook.OwedSet).Settle)
}

// changeOwed applies change (OwedSet's Owe or Settle) to the rows that hold or border ids,
// then trims the rows to the bound, in one database transaction.
func (s *Store) changeOwed(ctx context.Context, ids []int64, near int64, change func(*webhook.OwedSet, []int64)) (dropped int64, err error) {
	var runs webhook.OwedSet
	runs.Owe(ids)
	if runs.Len() == 0 {
		return 0, nil
	}
	err = s.inTx(ctx, func(tx *sql.Tx) error {
		before, err := s.lockOwed(ctx, tx)
		if err != nil {
			return err
		}
		count := before
		rows, err := s.owedAround(ctx, tx, runs.Ranges())
		if err != nil {
			return err
		}
		set := webhook.NewOwedSet(rows)
		change(set, ids)
		if count, err = s.saveOwed(ctx, tx, rows, set.Ranges(), count); err != nil {
			return err
		}
		if dropped, count, err = s.trimOwed(ctx, tx, near, count); err != nil {
			return err
		}
		if count != before {
			_, err = tx.ExecContext(ctx, s.q(`UPDATE escrow_webhook_owed_count SET ranges = ? WHERE id = 1`), count)
		}
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("sqlstore: ids owed a look: %w", err)
	}
	return dropped, nil
}

// lockOwed reads the count of owed rows, locking it on PostgreSQL until tx ends.
func (s *Store) lockOwed(ctx context.Context, tx *sql.Tx) (count int, err error) {
	err = tx.QueryRowContext(ctx, `SELECT ranges FROM escrow_webhook_owed_count WHERE id = 1`+s.forUpdate()).Scan(&count)
	return count, err
}

// owedAround reads the rows that hold or border the ids of runs (sorted): those starting
// between the first run and just after the last, when they are few (ids handed out in
// order: one statement); otherwise the rows around each run.
func (s *Store) owedAround(ctx context.Context, tx *sql.Tx, runs []webhook.IDRange) ([]webhook.IDRange, error) {
	first, last := runs[0], runs[len(runs)-1]
	// At most every other id of a run starts a row touching it, and one row starts
	// before each run: past that many rows between them, the runs are spread apart.
	enough := int64(16)
	for _, r := range runs {
		enough += (r.Hi-r.Lo)/2 + 2
	}
	rows, err := s.owedBetween(ctx, tx, []webhook.IDRange{{Lo: first.Lo, Hi: last.Hi}}, enough+1)
	if err != nil {
		return nil, err
	}
	if within := slices.DeleteFunc(slices.Clone(rows), func(r webhook.IDRange) bool { return r.Lo < first.Lo }); len(within) <= int(enough) {
		return rows, nil
	}
	return s.owedBetween(ctx, tx, runs, math.MaxInt64)
}

// owedBetween reads, for each of spans in one statement, up to limit rows starting within
// it or just after it, and the row starting last before it if it reaches it: every row
// holding or bordering its ids. It reads spans by probeRuns.
func (s *Store) owedBetween(ctx context.Context, tx *sql.Tx, spans []webhook.IDRange, limit int64) ([]webhook.IDRange, error) {
	var rows []webhook.IDRange
	for chunk := range slices.Chunk(spans, probeRuns) {
		terms := make([]string, 0, 2*len(chunk))
		args := make([]any, 0, 5*len(chunk))
		for i, r := range chunk {
			from, to := r.Lo-1, r.Hi // a row starting at from+1 or after, up to to+1
			if to < math.MaxInt64 {
				to++
			}
			terms = append(terms,
				fmt.Sprintf(`SELECT lo, hi FROM (SELECT lo, hi FROM escrow_webhook_owed WHERE lo > ? AND lo <= ? ORDER BY lo LIMIT ?) s%d`, i),
				fmt.Sprintf(`SELECT lo, hi FROM (SELECT lo, hi FROM escrow_webhook_owed WHERE lo <= ? ORDER BY lo DESC LIMIT 1) p%d WHERE hi >= ?`, i))
			args = append(args, from, to, limit, from, from)
		}
		got, err := s.queryRanges(ctx, tx, strings.Join(terms, " UNION ALL "), args...)
		if err != nil {
			return nil, err
		}
		rows = append(rows, got...)
	}
	return webhook.NewOwedSet(rows).Ranges(), nil // each row once
}

// queryRanges reads (lo, hi) rows.
func (s *Store) queryRanges(ctx context.Context, q querier, query string, args ...any) ([]webhook.IDRange, error) {
	rows, err := q.QueryContext(ctx, s.q(query), args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []webhook.IDRange
	for rows.Next() {
		var r webhook.IDRange
		if err := rows.Scan(&r.Lo, &r.Hi); err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// saveOwed replaces the rows before with the ranges after, writing only those that differ,
// and returns the count of rows updated.
func (s *Store) saveOwed(ctx context.Context, tx *sql.Tx, before, after []webhook.IDRange, count int) (int, error) {
	gone, added := differ(before, after)
	for chunk := range slices.Chunk(gone, rowChunk) {
		args := make([]any, len(chunk))
		for i, r := range chunk {
			args[i] = r.Lo
		}
		marks := strings.TrimSuffix(strings.Repeat("?, ", len(chunk)), ", ")
		if _, err := tx.ExecContext(ctx, s.q(`DELETE FROM escrow_webhook_owed WHERE lo IN (`+marks+`)`), args...); err != nil {
			return 0, err
		}
	}
	for chunk := range slices.Chunk(added, rowChunk) {
		args := make([]any, 0, 2*len(chunk))
		for _, r := range chunk {
			args = append(args, r.Lo, r.Hi)
		}
		values := strings.TrimSuffix(strings.Repeat("(?, ?), ", len(chunk)), ", ")
		if _, err := tx.ExecContext(ctx, s.q(`INSERT INTO escrow_webhook_owed (lo, hi) VALUES `+values), args...); err != nil {
			return 0, err
		}
	}
	return count - len(gone) + len(added), nil
}

// differ returns the ranges of before not in after, and of after not in before; both are
// sorted.
func differ(before, after []webhook.IDRange) (gone, added []webhook.IDRange) {
	for len(before) > 0 || len(after) > 0 {
		switch {
		case len(after) == 0 || len(before) > 0 && before[0].Lo < after[0].Lo:
			gone, before = append(gone, before[0]), before[1:]
		case len(before) == 0 || after[0].Lo < before[0].Lo:
			added, after = append(added, after[0]), after[1:]
		default: // the same start
			if before[0].Hi != after[0].Hi {
				gone, added = append(gone, before[0]), append(added, after[0])
			}
			before, after = before[1:], after[1:]
		}
	}
	return gone, added
}

// trimOwed drops the rows farthest from near past the bound: of the over rows to drop,
// each is among the over lowest or the over highest, which it reads. It returns how many
// ids it dropped, and the count of rows left.
func (s *Store) trimOwed(ctx context.Context, tx *sql.Tx, near int64, count int) (dropped int64, left int, err error) {
	over := count - s.maxOwedRanges()
	if over <= 0 {
		return 0, count, nil
	}
	rows, err := s.queryRanges(ctx, tx, `SELECT lo, hi FROM (SELECT lo, hi FROM escrow_webhook_owed ORDER BY lo LIMIT ?) low
		UNION ALL SELECT lo, hi FROM (SELECT lo, hi FROM escrow_webhook_owed ORDER BY lo DESC LIMIT ?) high`, over, over)
	if err != nil {
		return 0, 0, err
	}
	set := webhook.NewOwedSet(rows)
	before := set.Ranges()
	dropped = set.Trim(near, len(before)-over)
	left, err = s.saveOwed(ctx, tx, before, set.Ranges(), count)
	return dropped, left, err
}

// Owed returns up to n ids owed a look, the nearest to near first, reading n rows at most
// on either side of near: each holds an id at least.
func (s *Store) Owed(ctx context.Context, near int64, n int) ([]int64, error) {
	if n <= 0 {
		return nil, nil
	}
	rows, err := s.queryRanges(ctx, s.db, `SELECT lo, hi FROM (SELECT lo, hi FROM escrow_webhook_owed WHERE lo <= ? ORDER BY lo DESC LIMIT ?) below
		UNION ALL SELECT lo, hi FROM (SELECT lo, hi FROM escrow_webhook_owed WHERE lo > ? ORDER BY lo LIMIT ?) above`, near, n, near, n)
	if err != nil {
		return nil, fmt.Errorf("sqlstore: ids owed a look: %w", err)
	}
	return webhook.NewOwedSet(rows).Nearest(near, n), nil
}

func (s *Store) maxOwedRanges() int {
	if s.maxOwed > 0 {
		return s.maxOwed
	}
	return webhook.MaxOwedRanges
}
