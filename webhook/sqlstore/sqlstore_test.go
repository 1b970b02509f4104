package sqlstore_test

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/escrowkit/escrow-go/internal/pgtest"
	"github.com/escrowkit/escrow-go/webhook"
	"github.com/escrowkit/escrow-go/webhook/sqlstore"
	"github.com/escrowkit/escrow-go/webhook/storetest"
)

// engines are the DSN makers of both engines, each giving a fresh, empty store.
func engines(t *testing.T) map[string]func(t *testing.T) string {
	return map[string]func(t *testing.T) string{
		"sqlite": func(t *testing.T) string { return "sqlite:" + filepath.Join(t.TempDir(), "webhooks.db") },
		"postgres": func(t *testing.T) string {
			return pgtest.Need(t, pg, pgErr).NewDatabase(t)
		},
	}
}

func open(t *testing.T, dsn string) *sqlstore.Store {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	s, err := sqlstore.Open(ctx, dsn)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestConformance(t *testing.T) {
	for name, dsn := range engines(t) {
		t.Run(name, func(t *testing.T) {
			storetest.Run(t, func(t *testing.T) webhook.Store { return open(t, dsn(t)) })
			storetest.RunReplicas(t, func(t *testing.T) webhook.Store { return open(t, dsn(t)) })
		})
	}
}

// TestSchema: opening again, or by several replicas at once, is harmless; a schema from a
// newer version is refused with a message and left as it was; what was recorded survives.
func TestSchema(t *testing.T) {
	for name, mk := range engines(t) {
		t.Run(name, func(t *testing.T) {
			dsn := mk(t)
			openAtOnce(t, dsn, 4)
			s := open(t, dsn)
			l := webhook.Lease{TransactionID: 1, Holder: "a", Expires: time.Now().Add(time.Minute)}
			turn, err := s.Acquire(t.Context(), l, nil, time.Now())
			if err != nil || !turn.Granted {
				t.Fatalf("Acquire: %v %v", turn, err)
			}
			if _, err := s.Yield(t.Context(), webhook.Yield{Lease: l, Marks: turn.Marks, Facts: []string{"create"}, Now: time.Now()}); err != nil {
				t.Fatal(err)
			}
			if _, err := s.DB().ExecContext(t.Context(), `UPDATE escrow_webhook_schema SET version = 99`); err != nil {
				t.Fatal(err)
			}
			_, err = sqlstore.Open(t.Context(), dsn)
			var se *sqlstore.SchemaError
			if !errors.As(err, &se) || !errors.Is(err, sqlstore.ErrNewerSchema) || se.Found != 99 || !strings.Contains(err.Error(), "upgrade") {
				t.Fatalf("Open of a newer schema: %v", err)
			}
			if _, err := s.DB().ExecContext(t.Context(), `UPDATE escrow_webhook_schema SET version = `+strconv.Itoa(sqlstore.SchemaVersion)); err != nil {
				t.Fatal(err)
			}
			again := open(t, dsn)
			if h, err := again.Handed(t.Context(), 1); err != nil || !h["create"] {
				t.Errorf("after reopening: Handed = %v, %v", h, err)
			}
		})
	}
}

// TestBadDSN: a DSN that does not parse or a server that cannot be reached is a clear
// error, never a panic.
func TestBadDSN(t *testing.T) {
	for _, dsn := range []string{"", "memory", "mysql://localhost/x", "sqlite:", "sqlite:a?b", "sqlite:a#b", "sqlite://host/x.db",
		"postgres://", "postgres://%zz", "postgres://u:secret@/x", "mysql://u:secret@h/x", "postgres://u:sec%zzret@h/x"} {
		_, err := sqlstore.Open(t.Context(), dsn)
		if !errors.Is(err, sqlstore.ErrDSN) {
			t.Errorf("Open(%q) = %v, want ErrDSN", dsn, err)
		}
		if err != nil && strings.Contains(dsn, "sec") && strings.Contains(err.Error(), "sec") {
			t.Errorf("Open(%q): the error shows the password: %v", dsn, err)
		}
	}
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	_, err := sqlstore.Open(ctx, "postgres://nobody:secret@127.0.0.1:1/x?sslmode=disable&connect_timeout=2")
	if err == nil || errors.Is(err, sqlstore.ErrDSN) || !strings.Contains(err.Error(), "connecting") {
		t.Errorf("unreachable server: %v", err)
	}
	if strings.Contains(err.Error(), "secret") {
		t.Errorf("the error shows the password: %v", err)
	}
	_, err = sqlstore.Open(t.Context(), "sqlite:"+filepath.Join(t.TempDir(), "no", "such", "dir", "x.db"))
	if err == nil {
		t.Error("a SQLite file in a missing directory opened")
	}
}

// TestTxCallback: the callback's own writes and the record of the event commit together,
// or not at all.
func TestTxCallback(t *testing.T) {
	for name, mk := range engines(t) {
		t.Run(name, func(t *testing.T) {
			s := open(t, mk(t))
			ctx := t.Context()
			if _, err := s.DB().ExecContext(ctx, `CREATE TABLE orders (transaction_id BIGINT, event TEXT)`); err != nil {
				t.Fatal(err)
			}
			fail := errors.New("the order system refuses")
			var failing bool
			cb := s.TxCallback(func(ctx context.Context, tx *sql.Tx, ev webhook.ConfirmedEvent) error {
				q := `INSERT INTO orders VALUES (?, ?)`
				if s.Dialect() == sqlstore.Postgres {
					q = `INSERT INTO orders VALUES ($1, $2)`
				}
				if _, err := tx.ExecContext(ctx, q, ev.TransactionID, string(ev.Name)); err != nil {
					return err
				}
				if failing {
					return fail
				}
				return nil
			})
			rows := func() int {
				var n int
				if err := s.DB().QueryRowContext(ctx, `SELECT count(*) FROM orders`).Scan(&n); err != nil {
					t.Fatal(err)
				}
				return n
			}
			now := time.Now()
			ev := func(owner string) webhook.ConfirmedEvent {
				var e webhook.ConfirmedEvent
				e.TransactionID, e.Name = 5, "ship"
				e.Claim = webhook.Claim{TransactionID: 5, Facts: []string{"ship:1"}, Owner: owner, Expires: now.Add(time.Minute)}
				return e
			}
			lease := func(e webhook.ConfirmedEvent, at time.Time) {
				t.Helper()
				l := webhook.Lease{TransactionID: 5, Holder: e.Claim.Owner, Expires: at.Add(time.Minute)}
				if turn, err := s.Acquire(ctx, l, nil, at); err != nil || !turn.Granted {
					t.Fatal(turn, err)
				}
			}
			a := ev("a")
			lease(a, now)
			failing = true
			if err := cb(ctx, a); !errors.Is(err, fail) || rows() != 0 {
				t.Fatalf("failing callback: %v, %d rows", err, rows())
			}
			if h, _ := s.Handed(ctx, 5); h["ship:1"] {
				t.Fatal("a failed callback's fact was recorded")
			}
			// a's lease ends; b takes over; a's late callback must not commit.
			b := ev("b")
			lease(b, now.Add(2*time.Minute))
			failing = false
			if err := cb(ctx, a); !errors.Is(err, webhook.ErrClaimLost) || rows() != 0 {
				t.Fatalf("callback of a lost claim: %v, %d rows", err, rows())
			}
			if err := cb(ctx, b); err != nil || rows() != 1 {
				t.Fatalf("callback: %v, %d rows", err, rows())
			}
			if h, _ := s.Handed(ctx, 5); !h["ship:1"] {
				t.Error("the fact was not recorded with the callback's writes")
			}
			if err := cb(ctx, b); !errors.Is(err, webhook.ErrClaimLost) || rows() != 1 {
				t.Errorf("callback of a fact already recorded: %v, %d rows; want ErrClaimLost and nothing more", err, rows())
			}
			y := webhook.Yield{Lease: webhook.Lease{TransactionID: 5, Holder: "b", Expires: now.Add(3 * time.Minute)}, Facts: b.Claim.Facts, Now: now.Add(2 * time.Minute)}
			if _, err := s.Yield(ctx, y); err != nil { // what the Handler does next
				t.Errorf("Yield after TxCallback: %v", err)
			}
		})
	}
}

// TestNewOnTheCallersDatabase: a Store made with New on the caller's database leaves it
// open on Close; an engine it does not know is refused by name. Open takes postgresql://
// as well as postgres://.
func TestNewOnTheCallersDatabase(t *testing.T) {
	db, err := sql.Open("sqlite", "file:"+filepath.Join(t.TempDir(), "app.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	s, err := sqlstore.New(t.Context(), db, sqlstore.SQLite)
	if err != nil {
		t.Fatal(err)
	}
	if s.DB() != db || s.Dialect() != sqlstore.SQLite || s.Dialect().String() != "sqlite" {
		t.Errorf("store on %v, dialect %v", s.DB(), s.Dialect())
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := db.PingContext(t.Context()); err != nil {
		t.Errorf("Close of a store made with New closed the caller's database: %v", err)
	}
	if _, err := sqlstore.New(t.Context(), db, sqlstore.Dialect(7)); err == nil || !strings.Contains(err.Error(), "Dialect(7)") {
		t.Errorf("New with an unknown dialect: %v", err)
	}

	dsn := pgtest.Need(t, pg, pgErr).NewDatabase(t)
	pgs := open(t, "postgresql://"+strings.TrimPrefix(dsn, "postgres://"))
	if pgs.Dialect() != sqlstore.Postgres || pgs.Dialect().String() != "postgres" {
		t.Errorf("postgresql:// opened as %v", pgs.Dialect())
	}
}

// openAtOnce opens the store n times at the same moment, as n replicas starting together,
// and fails the test for each Open that fails.
func openAtOnce(t *testing.T, dsn string, n int) {
	t.Helper()
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			s, err := sqlstore.Open(t.Context(), dsn)
			if err != nil {
				t.Errorf("Open by one of %d replicas at once: %v", n, err)
				return
			}
			s.Close()
		})
	}
	wg.Wait()
}
