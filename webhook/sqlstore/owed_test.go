package sqlstore_test

import (
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/escrowkit/escrow-go/internal/pgtest"
	"github.com/escrowkit/escrow-go/webhook"
	"github.com/escrowkit/escrow-go/webhook/sqlstore"
	"github.com/escrowkit/escrow-go/webhook/storetest"
)

// TestOwedConformance: on both engines, replicas (stores opened on one database) share
// the ids owed a look, concurrent writers on both leave exactly their ids, a reopened
// store keeps them, and the rows stay within their bound (10 here).
func TestOwedConformance(t *testing.T) {
	for name, mk := range engines(t) {
		t.Run(name, func(t *testing.T) {
			var mu sync.Mutex
			dsns := map[webhook.Store]string{}
			dsnOf := func(s webhook.Store) string {
				mu.Lock()
				defer mu.Unlock()
				return dsns[s]
			}
			openOn := func(t *testing.T, dsn string) webhook.Store {
				s := open(t, dsn)
				mu.Lock()
				defer mu.Unlock()
				dsns[s] = dsn
				return s
			}
			storetest.RunOwed(t, storetest.OwedStores{
				Fresh:   func(t *testing.T) webhook.Store { return openOn(t, mk(t)) },
				Replica: func(t *testing.T, s webhook.Store) webhook.Store { return openOn(t, dsnOf(s)) },
				Reopen: func(t *testing.T, s webhook.Store) webhook.Store {
					if err := s.(*sqlstore.Store).Close(); err != nil {
						t.Fatal(err)
					}
					return openOn(t, dsnOf(s))
				},
				Bound: func(s webhook.Store, n int) { sqlstore.SetMaxOwed(s.(*sqlstore.Store), n) },
			})
		})
	}
}

// TestOwedRowsStayRanges: after concurrent writers on two stores, and trims past the bound,
// the rows are disjoint, never adjacent ranges, as many as the count the stores keep.
func TestOwedRowsStayRanges(t *testing.T) {
	for name, mk := range engines(t) {
		t.Run(name, func(t *testing.T) {
			dsn := mk(t)
			stores := []*sqlstore.Store{open(t, dsn), open(t, dsn)}
			for _, s := range stores {
				sqlstore.SetMaxOwed(s, 50)
			}
			var wg sync.WaitGroup
			for w := range 6 {
				s := stores[w%2]
				wg.Go(func() {
					ctx := t.Context()
					for i := range 40 {
						id := int64(1 + w + 6*(i%20) + 120*(i/20)) // interleaved with the others', then far above
						if _, err := s.Owe(ctx, []int64{id, id + 500}, 100); err != nil {
							t.Error(err)
							return
						}
						if _, err := s.Settle(ctx, []int64{id - 6}, 100); err != nil {
							t.Error(err)
							return
						}
					}
				})
			}
			wg.Wait()
			checkOwedRows(t, stores[0], 50)
		})
	}
}

// checkOwedRows checks that the rows of ids owed are sorted, disjoint and never adjacent,
// at most bound, and as many as counted.
func checkOwedRows(t *testing.T, s *sqlstore.Store, bound int) {
	t.Helper()
	rows, err := s.DB().QueryContext(t.Context(), `SELECT lo, hi FROM escrow_webhook_owed ORDER BY lo`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var got []webhook.IDRange
	for rows.Next() {
		var r webhook.IDRange
		if err := rows.Scan(&r.Lo, &r.Hi); err != nil {
			t.Fatal(err)
		}
		if r.Lo > r.Hi || len(got) > 0 && got[len(got)-1].Hi >= r.Lo-1 {
			t.Errorf("row %v after %v: not a range of its own", r, got[len(got)-1:])
		}
		got = append(got, r)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	var counted int
	if err := s.DB().QueryRowContext(t.Context(), `SELECT ranges FROM escrow_webhook_owed_count`).Scan(&counted); err != nil {
		t.Fatal(err)
	}
	if counted != len(got) || len(got) > bound || len(got) == 0 {
		t.Errorf("%d rows, %d counted; want as many, at most %d", len(got), counted, bound)
	}
}

// TestVersion2StoreUpgraded: a store of schema version 2 (before ids owed a look) opens as
// the current version, what it recorded kept, and keeps ids owed.
func TestVersion2StoreUpgraded(t *testing.T) {
	for name, mk := range engines(t) {
		t.Run(name, func(t *testing.T) {
			dsn := mk(t)
			s := open(t, dsn)
			ctx := t.Context()
			if err := s.Track(ctx, []int64{4}); err != nil {
				t.Fatal(err)
			}
			for _, q := range []string{`DROP TABLE escrow_webhook_owed`, `DROP TABLE escrow_webhook_owed_count`,
				`UPDATE escrow_webhook_schema SET version = 2`} {
				if _, err := s.DB().ExecContext(ctx, q); err != nil {
					t.Fatalf("%s: %v", q, err)
				}
			}
			again := open(t, dsn)
			if ids, err := again.Unfinished(ctx); err != nil || !slices.Equal(ids, []int64{4}) {
				t.Errorf("after the upgrade: Unfinished = %v, %v; want [4]", ids, err)
			}
			if _, err := again.Owe(ctx, []int64{7, 8}, 8); err != nil {
				t.Fatalf("after the upgrade: Owe: %v", err)
			}
			if ids, err := again.Owed(ctx, 8, 5); err != nil || !slices.Equal(ids, []int64{8, 7}) {
				t.Errorf("after the upgrade: Owed = %v, %v; want [8 7]", ids, err)
			}
			var v int
			if err := again.DB().QueryRowContext(ctx, `SELECT version FROM escrow_webhook_schema`).Scan(&v); err != nil || v != sqlstore.SchemaVersion {
				t.Errorf("after the upgrade: version %d, %v; want %d", v, err, sqlstore.SchemaVersion)
			}
		})
	}
}

// TestReservedLeaseAcrossReplicas: the lease of a negative id, held by one replica
// while it looks at the ids owed, is granted on another store of the same database only
// once it ends.
func TestReservedLeaseAcrossReplicas(t *testing.T) {
	for name, mk := range engines(t) {
		t.Run(name, func(t *testing.T) {
			dsn := mk(t)
			a, b := open(t, dsn), open(t, dsn)
			now := time.Now()
			l := webhook.Lease{TransactionID: -1, Holder: "a", Expires: now.Add(time.Minute)}
			if turn, err := a.Acquire(t.Context(), l, nil, now); err != nil || !turn.Granted {
				t.Fatalf("a: %+v, %v; want granted", turn, err)
			}
			l.Holder = "b"
			if turn, err := b.Acquire(t.Context(), l, nil, now.Add(time.Second)); err != nil || turn.Granted {
				t.Errorf("b while a's lease is live: %+v, %v; want refused", turn, err)
			}
			if turn, err := b.Acquire(t.Context(), l, nil, now.Add(time.Minute)); err != nil || !turn.Granted {
				t.Errorf("b once a's lease ended: %+v, %v; want granted", turn, err)
			}
		})
	}
}

// BenchmarkOwed measures the calls of a receiver's look at the ids owed on a table full of
// them (webhook.MaxOwedRanges ranges of forged ids, one apart, around the account's newest
// id): Owe of 100 more ids (past the bound: the farthest dropped), of 100 ids spread over
// the table, Owed of the 100 nearest, Settle of 100. Each call reads the rows around its ids or near by the primary key, never
// the whole table.
//
//	cd webhook/sqlstore && ESCROW_REQUIRE_SERVERS=1 go test -run '^$' -bench BenchmarkOwed -benchtime 200x .
func BenchmarkOwed(b *testing.B) {
	dsns := map[string]func() string{
		"sqlite":   func() string { return "sqlite:" + filepath.Join(b.TempDir(), "webhooks.db") },
		"postgres": func() string { return pgtest.Need(b, pg, pgErr).NewDatabase(b) },
	}
	for _, name := range []string{"sqlite", "postgres"} {
		b.Run(name, func(b *testing.B) {
			s, err := sqlstore.Open(b.Context(), dsns[name]())
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			const near, width = 1_000_000, webhook.MaxOwedRanges
			start := time.Now()
			if _, err := s.Owe(b.Context(), span(near-width, near+width-2, 2), near); err != nil {
				b.Fatal(err)
			}
			b.Logf("filling %d ranges in one Owe: %v", width, time.Since(start).Round(time.Millisecond))
			next := int64(near + width)
			b.Run("Owe100", func(b *testing.B) {
				for b.Loop() {
					if _, err := s.Owe(b.Context(), span(next, next+198, 2), near); err != nil {
						b.Fatal(err)
					}
					next += 200
				}
			})
			spread := int64(near - width + 1)
			b.Run("Owe100Spread", func(b *testing.B) {
				for b.Loop() { // 100 ids between rows 2,000 ids apart: a probe each
					if _, err := s.Owe(b.Context(), span(spread, spread+99*2000, 2000), near); err != nil {
						b.Fatal(err)
					}
					spread += 2
				}
			})
			b.Run("Owed100", func(b *testing.B) {
				for b.Loop() {
					if ids, err := s.Owed(b.Context(), near, 100); err != nil || len(ids) != 100 {
						b.Fatal(len(ids), err)
					}
				}
			})
			settled := int64(near)
			b.Run("Settle100", func(b *testing.B) {
				for b.Loop() {
					if _, err := s.Settle(b.Context(), span(settled, settled+198, 2), near); err != nil {
						b.Fatal(err)
					}
					settled -= 200
				}
			})
		})
	}
}

// span returns the ids from lo to hi, by step.
func span(lo, hi, step int64) []int64 {
	var ids []int64
	for id := lo; id <= hi; id += step {
		ids = append(ids, id)
	}
	return ids
}
