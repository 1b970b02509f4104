package sqlstore_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	escrow "github.com/escrowkit/escrow-go"
	"github.com/escrowkit/escrow-go/escrowtest"
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
		"postgres://", "postgres://%zz", "postgres://u:secret@/x", "mysql://u:secret@h/x", "postgres://u:sec%zzret@h/x",
		// URLs that parse, with settings the PostgreSQL driver refuses when it reads them
		"postgres://u:secret@h:99999/x", "postgres://u:secret@h/x?sslmode=bogus", "postgres://u:secret@h/x?connect_timeout=soon"} {
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

// The tests from here pin what a user of the store would notice that the conformance suite
// does not reach: failures of the database itself (a closed handle, a statement or a commit
// refused), which must come back as errors and never as a granted lease or a lost one; turns
// of no facts; and opening.

// mustErr fails unless err is a database error of this package: not nil, prefixed
// "sqlstore:", and not a lost claim (which would make the Handler drop the event).
func mustErr(t *testing.T, what string, err error) {
	t.Helper()
	switch {
	case err == nil:
		t.Errorf("%s on a failing database: no error", what)
	case errors.Is(err, webhook.ErrClaimLost):
		t.Errorf("%s on a failing database: %v, taken for a lost claim", what, err)
	case !strings.HasPrefix(err.Error(), "sqlstore:"):
		t.Errorf("%s on a failing database: %q, not an error of the store", what, err)
	}
}

// TestClosedDatabaseIsAnErrorEverywhere: once the database handle is closed, every method
// returns an error of the store; none panics, a lease is never reported granted, the mark
// never reported known, and a TxCallback's function is not run.
func TestClosedDatabaseIsAnErrorEverywhere(t *testing.T) {
	for name, mk := range engines(t) {
		t.Run(name, func(t *testing.T) {
			s := open(t, mk(t))
			ctx := t.Context()
			c := webhook.Claim{TransactionID: 1, Facts: []string{"create"}, Owner: "a", Expires: time.Now().Add(time.Minute)}
			l := webhook.Lease{TransactionID: 1, Holder: "a", Expires: c.Expires}
			if turn, err := s.Acquire(ctx, l, nil, time.Now()); !turn.Granted || err != nil {
				t.Fatalf("Acquire: %v %v", turn, err)
			}
			if err := s.DB().Close(); err != nil {
				t.Fatal(err)
			}
			_, err := s.Handed(ctx, 1)
			mustErr(t, "Handed", err)
			turn, err := s.Acquire(ctx, l, nil, time.Now())
			mustErr(t, "Acquire", err)
			if turn.Granted {
				t.Error("Acquire on a closed database reported the lease granted")
			}
			_, err = s.Yield(ctx, webhook.Yield{Lease: l, Facts: c.Facts, Now: time.Now()})
			mustErr(t, "Yield", err)
			_, err = s.Prune(ctx, time.Now())
			mustErr(t, "Prune", err)
			mustErr(t, "Track", s.Track(ctx, []int64{2}))
			mustErr(t, "Finish", s.Finish(ctx, 1))
			_, err = s.Unfinished(ctx)
			mustErr(t, "Unfinished", err)
			_, known, err := s.Mark(ctx)
			mustErr(t, "Mark", err)
			if known {
				t.Error("Mark on a closed database reported a mark")
			}
			mustErr(t, "AdvanceMark", s.AdvanceMark(ctx, 5))
			ran := false
			cb := s.TxCallback(func(context.Context, *sql.Tx, webhook.ConfirmedEvent) error { ran = true; return nil })
			var ev webhook.ConfirmedEvent
			ev.TransactionID, ev.Claim = 1, c
			mustErr(t, "TxCallback", cb(ctx, ev))
			if ran {
				t.Error("TxCallback ran its function without a transaction")
			}
			_, err = sqlstore.New(ctx, s.DB(), s.Dialect())
			mustErr(t, "New", err)
		})
	}
}

// refuse makes the database refuse some writes, as a constraint or a full disk would:
// inserting a fact "poison", inserting transaction 666 or the mark 666. On PostgreSQL a
// fact "late" is refused at commit.
func refuse(t *testing.T, s *sqlstore.Store) {
	t.Helper()
	var stmts []string
	if s.Dialect() == sqlstore.SQLite {
		stmts = []string{
			`CREATE TRIGGER refuse_fact BEFORE INSERT ON escrow_webhook_facts WHEN NEW.fact = 'poison' BEGIN SELECT RAISE(ABORT, 'refused'); END`,
			`CREATE TRIGGER refuse_tx BEFORE INSERT ON escrow_webhook_transactions WHEN NEW.transaction_id = 666 BEGIN SELECT RAISE(ABORT, 'refused'); END`,
			`CREATE TRIGGER refuse_mark BEFORE INSERT ON escrow_webhook_mark WHEN NEW.mark = 666 BEGIN SELECT RAISE(ABORT, 'refused'); END`,
		}
	} else {
		stmts = []string{
			`CREATE FUNCTION refuse() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'refused'; END $$`,
			`CREATE TRIGGER refuse_fact BEFORE INSERT ON escrow_webhook_facts FOR EACH ROW WHEN (NEW.fact = 'poison') EXECUTE FUNCTION refuse()`,
			`CREATE TRIGGER refuse_tx BEFORE INSERT ON escrow_webhook_transactions FOR EACH ROW WHEN (NEW.transaction_id = 666) EXECUTE FUNCTION refuse()`,
			`CREATE TRIGGER refuse_mark BEFORE INSERT ON escrow_webhook_mark FOR EACH ROW WHEN (NEW.mark = 666) EXECUTE FUNCTION refuse()`,
			`CREATE CONSTRAINT TRIGGER refuse_late AFTER INSERT ON escrow_webhook_facts DEFERRABLE INITIALLY DEFERRED
				FOR EACH ROW WHEN (NEW.fact = 'late') EXECUTE FUNCTION refuse()`,
		}
	}
	for _, q := range stmts {
		if _, err := s.DB().ExecContext(t.Context(), q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

// TestRefusedWriteRecordsNothing: when the database refuses a write in the middle of a
// turn's end, the Yield is an error, not a lost lease, records none of the turn's facts
// and leaves the lease with its holder, who records them on its next try; a refused
// TxCallback records nothing; a refused Track tracks none of its transactions and leaves
// the store writable; the mark stays where it was.
func TestRefusedWriteRecordsNothing(t *testing.T) {
	for name, mk := range engines(t) {
		t.Run(name, func(t *testing.T) {
			s := open(t, mk(t))
			refuse(t, s)
			ctx := t.Context()
			now := time.Now()
			turnEnd := func(id int64, facts ...string) error {
				t.Helper()
				l := webhook.Lease{TransactionID: id, Holder: "a", Expires: now.Add(time.Minute)}
				turn, err := s.Acquire(ctx, l, nil, now)
				if err != nil || !turn.Granted {
					t.Fatalf("Acquire(%d) = %v, %v", id, turn, err)
				}
				_, err = s.Yield(ctx, webhook.Yield{Lease: l, Marks: turn.Marks, Facts: facts, Now: now})
				return err
			}
			mustErr(t, "Yield", turnEnd(1, "create", "poison"))
			if h, err := s.Handed(ctx, 1); err != nil || len(h) != 0 {
				t.Errorf("after a refused Yield: Handed = %v, %v; want nothing", h, err)
			}
			if turn, err := s.Acquire(ctx, webhook.Lease{TransactionID: 1, Holder: "b", Expires: now.Add(time.Minute)}, nil, now); err != nil || turn.Granted {
				t.Errorf("after a refused Yield, another replica got the lease: %v, %v", turn, err)
			}
			if err := turnEnd(1, "create"); err != nil { // a's next try
				t.Fatal(err)
			}
			mustErr(t, "Yield", turnEnd(666, "create")) // the transaction's row is refused
			if s.Dialect() == sqlstore.Postgres {
				mustErr(t, "Yield", turnEnd(2, "create", "late")) // refused at commit
				if err := turnEnd(2, "create"); err != nil {
					t.Fatal(err)
				}
			}
			l := webhook.Lease{TransactionID: 3, Holder: "a", Expires: now.Add(time.Minute)}
			if turn, err := s.Acquire(ctx, l, nil, now); err != nil || !turn.Granted {
				t.Fatal(turn, err)
			}
			var ev webhook.ConfirmedEvent
			ev.TransactionID, ev.Claim = 3, webhook.Claim{TransactionID: 3, Facts: []string{"create", "poison"}, Owner: "a", Expires: l.Expires}
			mustErr(t, "TxCallback", s.TxCallback(func(context.Context, *sql.Tx, webhook.ConfirmedEvent) error { return nil })(ctx, ev))
			if h, err := s.Handed(ctx, 3); err != nil || len(h) != 0 {
				t.Errorf("after a refused TxCallback: Handed = %v, %v; want nothing", h, err)
			}

			mustErr(t, "Track", s.Track(ctx, []int64{10, 666}))
			mustErr(t, "Finish", s.Finish(ctx, 666))
			// The refused transaction must not keep the database: a write now goes through
			// at once (a transaction left open would hold SQLite's write lock, or
			// PostgreSQL's lock on row 10, until the test ends).
			wctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			defer cancel()
			if err := s.Track(wctx, []int64{11}); err != nil {
				t.Errorf("Track after a refused Track: %v", err)
			}
			if err := s.Finish(wctx, 10); err != nil {
				t.Errorf("Finish after a refused Track: %v", err)
			}
			want := []int64{1, 11}
			if s.Dialect() == sqlstore.Postgres {
				want = []int64{1, 2, 11}
			}
			if ids, err := s.Unfinished(ctx); err != nil || !slices.Equal(ids, want) {
				t.Errorf("Unfinished = %v, %v; want %v", ids, err, want)
			}

			if err := s.AdvanceMark(ctx, 5); err != nil {
				t.Fatal(err)
			}
			mustErr(t, "AdvanceMark", s.AdvanceMark(ctx, 666))
			if m, known, err := s.Mark(ctx); err != nil || !known || m != 5 {
				t.Errorf("Mark = %d %v %v, want 5", m, known, err)
			}
		})
	}
}

// TestTurnOfNoFacts: a turn that hands nothing over ends without error on both engines
// and leaves nothing behind (an empty VALUES list is a syntax error).
func TestTurnOfNoFacts(t *testing.T) {
	for name, mk := range engines(t) {
		t.Run(name, func(t *testing.T) {
			s := open(t, mk(t))
			l := webhook.Lease{TransactionID: 4, Holder: "a", Expires: time.Now().Add(time.Minute)}
			turn, err := s.Acquire(t.Context(), l, nil, time.Now())
			if err != nil || !turn.Granted {
				t.Fatalf("Acquire: %v %v", turn, err)
			}
			if _, err := s.Yield(t.Context(), webhook.Yield{Lease: l, Marks: turn.Marks, Now: time.Now()}); err != nil {
				t.Errorf("Yield: %v", err)
			}
			var n int
			if err := s.DB().QueryRowContext(t.Context(), `SELECT count(*) FROM escrow_webhook_leases`).Scan(&n); err != nil || n != 0 {
				t.Errorf("%d lease rows left, %v; want none", n, err)
			}
		})
	}
}

// TestFinishedTransactionStaysFinished: a late event of a finished transaction (handed
// over after Finish) does not make the reconciler read it again.
func TestFinishedTransactionStaysFinished(t *testing.T) {
	for name, mk := range engines(t) {
		t.Run(name, func(t *testing.T) {
			s := open(t, mk(t))
			ctx := t.Context()
			if err := s.Finish(ctx, 6); err != nil {
				t.Fatal(err)
			}
			l := webhook.Lease{TransactionID: 6, Holder: "a", Expires: time.Now().Add(time.Minute)}
			turn, err := s.Acquire(ctx, l, nil, time.Now())
			if err != nil || !turn.Granted {
				t.Fatalf("Acquire: %v %v", turn, err)
			}
			if _, err := s.Yield(ctx, webhook.Yield{Lease: l, Marks: turn.Marks, Facts: []string{"complete"}, Now: time.Now()}); err != nil {
				t.Fatal(err)
			}
			if ids, err := s.Unfinished(ctx); err != nil || len(ids) != 0 {
				t.Errorf("Unfinished = %v, %v; want none", ids, err)
			}
		})
	}
}

// TestBadDSNSaysWhatIsWanted: a refused DSN's error names the form wanted, and a SQLite
// file that cannot be opened is refused at once, not retried as if it were busy.
func TestBadDSNSaysWhatIsWanted(t *testing.T) {
	for dsn, want := range map[string]string{
		"sqlite:a?b":            "want sqlite:PATH",
		"postgres://":           "postgres:// URL with a host",
		"mysql://u:secret@h/x":  "want sqlite:PATH or a postgres:// URL",
		"postgresql://%zz/x":    "postgres:// URL with a host",
		"sqlite://server/x.db":  "want sqlite:PATH",
		"memory":                "want sqlite:PATH or a postgres:// URL",
		"postgres://u:p@h:x/db": "postgres:// URL with a host",
	} {
		if _, err := sqlstore.Open(t.Context(), dsn); !errors.Is(err, sqlstore.ErrDSN) || !strings.Contains(err.Error(), want) {
			t.Errorf("Open(%q) = %v, want ErrDSN saying %q", dsn, err, want)
		}
	}
	// The refused DSN is quoted with its password hidden and the rest kept, so that the
	// operator sees which one it was.
	for dsn, want := range map[string]string{
		"mysql://u:secret@h/x":        `"mysql://u:xxxxx@h/x"`,
		"postgres://u:sec%zzret@h/x":  `"…@h/x"`,
		"postgres://u@/x":             `"…@/x"`,
		"mongodb://u:secret@h1,h2/db": `"mongodb://u:xxxxx@h1,h2/db"`,
	} {
		if _, err := sqlstore.Open(t.Context(), dsn); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Open(%q) = %v, want it quoted as %s", dsn, err, want)
		}
	}
	start := time.Now()
	_, err := sqlstore.Open(t.Context(), "sqlite:"+filepath.Join(t.TempDir(), "no", "such", "dir", "x.db"))
	if err == nil || !strings.Contains(err.Error(), "connecting to the sqlite store") {
		t.Errorf("a SQLite file in a missing directory: %v", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("a SQLite file in a missing directory refused after %v: retried as if busy", d)
	}
}

// TestReplicasStartingAtOnceAllOpen: replicas opening an empty PostgreSQL database at the
// same moment all get a store (creating the schema is serialized, not raced).
func TestReplicasStartingAtOnceAllOpen(t *testing.T) {
	srv := pgtest.Need(t, pg, pgErr)
	for range 3 {
		openAtOnce(t, srv.NewDatabase(t), 8)
	}
}

// TestNewerSchemaLeftAsItWas: a schema one version newer is refused, and is left as it
// was (the version and the data), so that the newer program still finds it.
func TestNewerSchemaLeftAsItWas(t *testing.T) {
	for name, mk := range engines(t) {
		t.Run(name, func(t *testing.T) {
			dsn := mk(t)
			s := open(t, dsn)
			ctx := t.Context()
			newer := sqlstore.SchemaVersion + 1
			if _, err := s.DB().ExecContext(ctx, `UPDATE escrow_webhook_schema SET version = `+strconv.Itoa(newer)); err != nil {
				t.Fatal(err)
			}
			_, err := sqlstore.Open(ctx, dsn)
			var se *sqlstore.SchemaError
			if !errors.As(err, &se) || se.Found != newer || se.Supported != sqlstore.SchemaVersion {
				t.Fatalf("Open of a schema one version newer: %v", err)
			}
			if errors.Is(err, sqlstore.ErrDSN) || errors.Is(err, webhook.ErrClaimLost) || errors.Is(err, context.Canceled) {
				t.Errorf("the newer-schema error matches another error's sentinel: %v", err)
			}
			var v int
			if err := s.DB().QueryRowContext(ctx, `SELECT version FROM escrow_webhook_schema`).Scan(&v); err != nil || v != newer {
				t.Errorf("after the refused Open: version %d, %v; want %d", v, err, newer)
			}
		})
	}
}

// TestZeroDialectRefused: a Dialect left at its zero value names no engine, and New refuses
// it rather than guess one.
func TestZeroDialectRefused(t *testing.T) {
	db, err := sql.Open("sqlite", "file:"+filepath.Join(t.TempDir(), "app.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var d sqlstore.Dialect
	if _, err := sqlstore.New(t.Context(), db, d); err == nil || !strings.Contains(err.Error(), "Dialect(0)") {
		t.Errorf("New with the zero Dialect: %v", err)
	}
}

// TestForeignTableRefusedByVersion: a database already holding a table of the store's name
// that is not the store's is refused, the error naming the version being created, and no
// schema version is recorded.
func TestForeignTableRefusedByVersion(t *testing.T) {
	for name, mk := range engines(t) {
		t.Run(name, func(t *testing.T) {
			dsn := mk(t)
			driver, source := "pgx", dsn
			if name == "sqlite" {
				driver, source = "sqlite", "file:"+strings.TrimPrefix(dsn, "sqlite:")
			}
			db, err := sql.Open(driver, source)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			if _, err := db.ExecContext(t.Context(), `CREATE TABLE escrow_webhook_transactions (id BIGINT)`); err != nil {
				t.Fatal(err)
			}
			_, err = sqlstore.Open(t.Context(), dsn)
			if err == nil || !strings.Contains(err.Error(), "upgrading the schema to version 1:") {
				t.Errorf("Open over a foreign table: %v", err)
			}
			var n int
			if err := db.QueryRowContext(t.Context(), `SELECT count(*) FROM escrow_webhook_schema`).Scan(&n); err == nil && n != 0 {
				t.Errorf("a schema version was recorded over a foreign table")
			}
		})
	}
}

// TestVersion1StoreUpgraded: a store written by schema version 1 (per-fact claims) opens
// as the current version with what it recorded: facts handed over stay handed over,
// claims never done are dropped (their events are handed over again, as after a crash),
// unfinished transactions stay unfinished.
func TestVersion1StoreUpgraded(t *testing.T) {
	for name, mk := range engines(t) {
		t.Run(name, func(t *testing.T) {
			dsn := mk(t)
			s := open(t, dsn)
			ctx := t.Context()
			for _, q := range []string{
				`DROP TABLE escrow_webhook_leases`,
				`DROP TABLE escrow_webhook_transactions`,
				`CREATE TABLE escrow_webhook_transactions (transaction_id BIGINT PRIMARY KEY, finished INTEGER NOT NULL DEFAULT 0)`,
				`CREATE INDEX escrow_webhook_unfinished ON escrow_webhook_transactions (finished, transaction_id)`,
				`INSERT INTO escrow_webhook_transactions VALUES (1, 0), (2, 1)`,
				`INSERT INTO escrow_webhook_facts VALUES (1, 'create', 'a', 0, 1), (1, 'agree', 'a', 99, 0), (2, 'create', 'a', 0, 1)`,
				`UPDATE escrow_webhook_schema SET version = 1`,
			} {
				if _, err := s.DB().ExecContext(ctx, q); err != nil {
					t.Fatalf("%s: %v", q, err)
				}
			}
			again := open(t, dsn)
			if h, err := again.Handed(ctx, 1); err != nil || len(h) != 1 || !h["create"] {
				t.Errorf("after the upgrade: Handed(1) = %v, %v; want create only", h, err)
			}
			if ids, err := again.Unfinished(ctx); err != nil || !slices.Equal(ids, []int64{1}) {
				t.Errorf("after the upgrade: Unfinished = %v, %v; want [1]", ids, err)
			}
			l := webhook.Lease{TransactionID: 1, Holder: "b", Expires: time.Now().Add(time.Minute)}
			if turn, err := again.Acquire(ctx, l, nil, time.Now()); err != nil || !turn.Granted {
				t.Errorf("after the upgrade: Acquire = %v, %v", turn, err)
			}
			if n, err := again.Prune(ctx, time.Now()); err != nil || n != 1 {
				t.Errorf("after the upgrade: Prune = %d, %v; want the finished transaction", n, err)
			}
		})
	}
}

// TestRowsStayFlatUnderSteadyLoad: a receiver with a short retention, reconciling (and so
// pruning) as it runs, takes eight rounds of sales through the store; the rows of facts and
// leases stay as many as a retention's worth of sales, not growing with the rounds, while
// each finished sale leaves one tombstone row.
func TestRowsStayFlatUnderSteadyLoad(t *testing.T) {
	for name, mk := range engines(t) {
		t.Run(name, func(t *testing.T) {
			s := open(t, mk(t))
			srv := escrowtest.NewServer(escrowtest.WithRateLimit(0, time.Minute))
			defer srv.Close()
			p, b, se := srv.AddPartner("market@example.com"), srv.AddCustomer("buyer@example.com"), srv.AddCustomer("seller@example.com")
			partner := apiClient(t, srv, p)
			var handed atomic.Int64
			h := webhook.NewHandler(partner, func(context.Context, webhook.ConfirmedEvent) error { handed.Add(1); return nil },
				webhook.Options{Store: s, Workers: 1, Retention: 300 * time.Millisecond})
			hook := httptest.NewServer(h)
			defer hook.Close()
			if _, err := partner.Webhooks.Create(t.Context(), escrow.Me, hook.URL+"/escrow"); err != nil {
				t.Fatal(err)
			}
			defer reconciling(h, 20*time.Millisecond)()
			const rounds, sales = 8, 10
			var factRows []int
			for range rounds {
				for range sales {
					cancelledSale(t, partner, b, se)
				}
				if err := srv.FlushWebhooks(t.Context()); err != nil {
					t.Fatal(err)
				}
				if err := h.Flush(t.Context()); err != nil {
					t.Fatal(err)
				}
				time.Sleep(400 * time.Millisecond) // longer than the retention: the next prune takes this round
				factRows = append(factRows, count(t, s, `SELECT count(*) FROM escrow_webhook_facts`)+count(t, s, `SELECT count(*) FROM escrow_webhook_leases`))
			}
			tombstones := count(t, s, `SELECT count(*) FROM escrow_webhook_transactions WHERE finished = 2`)
			t.Logf("fact and lease rows after each round: %v; %d tombstones; %d events handed over", factRows, tombstones, handed.Load())
			for i, n := range factRows {
				if n > 3*2*sales {
					t.Errorf("round %d: %d rows of facts and leases, more than three rounds' worth: the store grows", i, n)
				}
			}
			if tombstones < (rounds-3)*sales || handed.Load() != rounds*sales*2 {
				t.Errorf("%d tombstones, %d events handed over; want a tombstone per pruned sale and every event once", tombstones, handed.Load())
			}
		})
	}
}

// reconciling runs h's reconciler every interval until the function it returns stops it
// and shuts h down.
func reconciling(h *webhook.Handler, every time.Duration) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); h.RunReconciler(ctx, every) }()
	return func() {
		cancel()
		<-done
		sctx, scancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer scancel()
		h.Shutdown(sctx)
	}
}

// cancelledSale has the partner create a sale between buyer and seller and cancel it: two
// events, the sale finished.
func cancelledSale(t *testing.T, partner *escrow.Client, buyer, seller escrowtest.Account) {
	t.Helper()
	tx, err := partner.Transactions.Create(t.Context(), &escrow.CreateTransactionRequest{Currency: escrow.USD, Description: "Lamp",
		Parties: []escrow.PartyInput{{Role: escrow.RoleBuyer, Customer: buyer.Email}, {Role: escrow.RoleSeller, Customer: seller.Email}},
		Items: []escrow.ItemInput{{Title: "Lamp", Type: escrow.ItemGeneralMerchandise, Schedule: []escrow.ScheduleInput{
			{Amount: escrow.MustAmount("40"), PayerCustomer: buyer.Email, BeneficiaryCustomer: seller.Email}}}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := partner.Transactions.Cancel(t.Context(), tx.ID, "out of stock"); err != nil {
		t.Fatal(err)
	}
}

func count(t *testing.T, s *sqlstore.Store, q string) int {
	t.Helper()
	var n int
	if err := s.DB().QueryRowContext(t.Context(), q).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// market is a broker's marketplace on the emulator, receiving its webhooks through replicas
// of one receiver over one store. Every delivery that arrives goes to every replica that
// is up; 30% of the emulator's calls are lost on the way.
type market struct {
	t                      *testing.T
	srv                    *escrowtest.Server
	partner, buyer, seller *escrow.Client
	stranger               *escrow.Client
	buyerMail, sellerMail  string
	dsn                    string

	mu       sync.Mutex
	replicas map[string]*replica // up, by name
	hook     *httptest.Server
	hints    atomic.Int64
}

// replica is one receiver process: its own database handle, Handler and reconciler.
type replica struct {
	name   string
	store  *dyingStore
	db     *sqlstore.Store
	h      *webhook.Handler
	cancel context.CancelFunc
	done   chan struct{}
}

// dyingStore is a Store that stops ending turns once its process is "killed": a crashed
// process releases nothing, so its leases must be taken over when they end.
type dyingStore struct {
	*sqlstore.Store
	dead atomic.Bool
}

func (d *dyingStore) Yield(ctx context.Context, y webhook.Yield) (webhook.Turn, error) {
	if d.dead.Load() {
		return webhook.Turn{}, nil
	}
	return d.Store.Yield(ctx, y)
}

func newMarket(t *testing.T, dsn string) *market {
	srv := escrowtest.NewServer(escrowtest.WithSeed(16), escrowtest.WithRateLimit(0, time.Minute))
	t.Cleanup(srv.Close)
	p := srv.AddPartner("market@example.com")
	b, s := srv.AddCustomer("buyer@example.com"), srv.AddCustomer("seller@example.com")
	m := &market{
		t: t, srv: srv, dsn: dsn,
		partner: apiClient(t, srv, p), buyer: apiClient(t, srv, b), seller: apiClient(t, srv, s),
		stranger:  apiClient(t, srv, srv.AddCustomer("stranger@example.com")),
		buyerMail: b.Email, sellerMail: s.Email,
		replicas: make(map[string]*replica),
	}
	if _, err := m.partner.Customers.Get(t.Context(), escrow.Me); err != nil {
		t.Fatal(err)
	}
	m.hook = httptest.NewServer(http.HandlerFunc(m.fanOut))
	t.Cleanup(m.hook.Close)
	if _, err := m.partner.Webhooks.Create(t.Context(), escrow.Me, m.hook.URL+"/escrow"); err != nil {
		t.Fatal(err)
	}
	if err := srv.InjectFault(escrowtest.Fault{Endpoint: "WEBHOOK *", Probability: 0.3, Drop: escrowtest.DropBefore}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	s0, err := sqlstore.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer s0.Close()
	seq := "seq BIGSERIAL PRIMARY KEY"
	if s0.Dialect() == sqlstore.SQLite {
		seq = "seq INTEGER PRIMARY KEY AUTOINCREMENT"
	}
	if _, err := s0.DB().ExecContext(ctx, `CREATE TABLE handed (`+seq+`, transaction_id BIGINT NOT NULL, event TEXT NOT NULL,
		item_id BIGINT NOT NULL, source TEXT NOT NULL, replica TEXT NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	return m
}

func apiClient(t *testing.T, srv *escrowtest.Server, a escrowtest.Account) *escrow.Client {
	t.Helper()
	c, err := escrow.NewClient(a.Email, a.APIKey, escrow.WithBaseURL(srv.URL), escrow.WithHTTPClient(srv.Client()))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// fanOut is the webhook URL: it hands every delivery to every replica that is up.
func (m *market) fanOut(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	m.mu.Lock()
	up := make([]*replica, 0, len(m.replicas))
	for _, rp := range m.replicas {
		up = append(up, rp)
	}
	m.mu.Unlock()
	status := http.StatusServiceUnavailable
	for _, rp := range up {
		rec := httptest.NewRecorder()
		req := httptest.NewRequestWithContext(r.Context(), http.MethodPost, "/escrow", strings.NewReader(string(body)))
		req.Header.Set("Content-Type", "application/json")
		rp.h.ServeHTTP(rec, req)
		status = rec.Code
	}
	w.WriteHeader(status)
}

// start runs a fresh replica process over the shared store: a new database handle, a
// new Handler (a new owner of claims) and its reconciler.
func (m *market) start(name string) *replica {
	t := m.t
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	db, err := sqlstore.Open(ctx, m.dsn)
	if err != nil {
		t.Fatal(err)
	}
	rp := &replica{name: name, db: db, store: &dyingStore{Store: db}, done: make(chan struct{})}
	insert := `INSERT INTO handed (transaction_id, event, item_id, source, replica) VALUES ($1, $2, $3, $4, $5)`
	if db.Dialect() == sqlstore.SQLite {
		insert = `INSERT INTO handed (transaction_id, event, item_id, source, replica) VALUES (?, ?, ?, ?, ?)`
	}
	record := db.TxCallback(func(ctx context.Context, tx *sql.Tx, ev webhook.ConfirmedEvent) error {
		if rand.N(4) == 0 { // a slow side effect: a kill may land in the middle of it
			select {
			case <-time.After(time.Duration(rand.N(3)+1) * time.Millisecond):
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		items := ev.ItemIDs
		if len(items) == 0 {
			items = []int64{0}
		}
		for _, it := range items {
			if _, err := tx.ExecContext(ctx, insert,
				ev.TransactionID, string(ev.Name), it, string(ev.Source), name); err != nil {
				return err
			}
		}
		return nil
	})
	logger := slog.New(slog.DiscardHandler)
	if dir := os.Getenv("ESCROW_TEST_LOGDIR"); dir != "" { // for a run that failed: every replica's log
		f, err := os.Create(filepath.Join(dir, name+".log"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		logger = slog.New(slog.NewTextHandler(f, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	rp.h = webhook.NewHandler(m.partner, record, webhook.Options{
		Store: rp.store, Logger: logger, Replica: name + fmt.Sprint("-", time.Now().UnixNano()),
		Workers: 4, MaxAttempts: 40,
		RetryWait: 2 * time.Millisecond, MaxRetryWait: 40 * time.Millisecond,
		Refetch: 2 * time.Millisecond, MaxRefetch: 30 * time.Millisecond,
		ClaimLease:        time.Second,
		OnUnconfirmedHint: func(context.Context, webhook.Hint) { m.hints.Add(1) },
	})
	rctx, rcancel := context.WithCancel(context.Background())
	rp.cancel = rcancel
	go func() {
		defer close(rp.done)
		rp.h.RunReconciler(rctx, 150*time.Millisecond)
	}()
	m.mu.Lock()
	m.replicas[name] = rp
	m.mu.Unlock()
	return rp
}

// waitForMark waits until a reconciliation has set the store's mark.
func (m *market) waitForMark(rp *replica) {
	deadline := time.Now().Add(30 * time.Second)
	for {
		_, ok, err := rp.db.Mark(m.t.Context())
		if err != nil {
			m.t.Fatal(err)
		}
		if ok {
			return
		}
		if time.Now().After(deadline) {
			m.t.Fatal("no reconciliation set the store's mark within 30s")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// kill ends a replica as a crash would: it gets no more deliveries, its callbacks are
// cancelled mid-way (their transactions roll back) and it releases none of its claims.
func (m *market) kill(rp *replica) {
	m.mu.Lock()
	delete(m.replicas, rp.name)
	m.mu.Unlock()
	rp.store.dead.Store(true)
	rp.cancel()
	<-rp.done
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // no grace: whatever runs is cut short
	rp.h.Shutdown(ctx)
	rp.db.Close()
}

// stop ends a replica cleanly, after its queued work.
func (m *market) stop(rp *replica) {
	m.mu.Lock()
	delete(m.replicas, rp.name)
	m.mu.Unlock()
	rp.cancel()
	<-rp.done
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := rp.h.Shutdown(ctx); err != nil {
		m.t.Errorf("Shutdown %s: %v", rp.name, err)
	}
	rp.db.Close()
}

// path is one way a transaction goes, and the facts it leaves: per event, how many
// distinct items (0 for an event of the whole transaction).
type path struct {
	name    string
	create  func(m *market) *escrow.CreateTransactionRequest
	run     func(m *market, tx *escrow.Transaction) error
	want    map[string]int
	ordered bool // events come in the lifecycle order (not so for milestones, item by item)
}

func (m *market) goods(amount string) escrow.ItemInput {
	return escrow.ItemInput{
		Title: "Bicycle", Type: escrow.ItemGeneralMerchandise, InspectionPeriod: escrow.Days(1),
		Schedule: []escrow.ScheduleInput{{Amount: escrow.MustAmount(amount), PayerCustomer: m.buyerMail, BeneficiaryCustomer: m.sellerMail}},
	}
}

func (m *market) brokerFee(payer string) escrow.ItemInput {
	return escrow.ItemInput{Type: escrow.ItemBrokerFee, Schedule: []escrow.ScheduleInput{{Amount: escrow.MustAmount("25.00"), PayerCustomer: payer, BeneficiaryCustomer: "me"}}}
}

func (m *market) sale(items ...escrow.ItemInput) *escrow.CreateTransactionRequest {
	return &escrow.CreateTransactionRequest{Currency: escrow.USD, Description: "A sale",
		Parties: []escrow.PartyInput{{Role: escrow.RoleBuyer, Customer: m.buyerMail}, {Role: escrow.RoleSeller, Customer: m.sellerMail}},
		Items:   items}
}

func (m *market) brokered(items ...escrow.ItemInput) *escrow.CreateTransactionRequest {
	r := m.sale(items...)
	r.Parties = append(r.Parties, escrow.PartyInput{Role: escrow.RoleBroker, Customer: "me"})
	return r
}

func (m *market) act(id int64, as string, a escrow.Action) error {
	_, err := m.partner.Transactions.Act(m.t.Context(), id, &escrow.ActionRequest{Action: a}, escrow.AsCustomer(as))
	return err
}

func (m *market) agreeAndFund(id int64) error {
	if err := m.act(id, m.buyerMail, escrow.ActionAgree); err != nil {
		return err
	}
	if err := m.act(id, m.sellerMail, escrow.ActionAgree); err != nil {
		return err
	}
	return m.srv.ApprovePayment(id)
}

func (m *market) sellerBank(id int64) error {
	_, err := m.seller.Transactions.SelectDisbursementMethod(m.t.Context(), id, &escrow.DisbursementMethod{
		Type: escrow.DisbursementACH, AccountName: "Seller", AccountType: "savings",
		BankABARoutingNumber: "121000248", BankAccountNumber: "12345678", BankName: "First Bank",
	})
	return err
}

func (m *market) brokerBank(id int64) error {
	_, err := m.partner.Transactions.SelectDisbursementMethod(m.t.Context(), id, &escrow.DisbursementMethod{
		Type: escrow.DisbursementWireTransfer, AccountName: "Market LLC", BankName: "Second Bank",
		BankSwiftCode: "EXAMUS33", BankAccountNumber: "9876543210",
	})
	return err
}

func steps(fs ...func() error) error {
	for i, f := range fs {
		if err := f(); err != nil {
			return fmt.Errorf("step %d: %w", i, err)
		}
	}
	return nil
}

func (m *market) paths() []path {
	ctx := m.t.Context()
	return []path{
		{"sale", func(m *market) *escrow.CreateTransactionRequest { return m.sale(m.goods("250")) },
			func(m *market, tx *escrow.Transaction) error {
				id := tx.ID
				return steps(func() error { return m.agreeAndFund(id) }, func() error { return m.sellerBank(id) },
					func() error { return m.act(id, m.sellerMail, escrow.ActionShip) },
					func() error { return m.act(id, m.buyerMail, escrow.ActionReceive) },
					func() error { _, err := m.buyer.Transactions.Accept(ctx, id); return err })
			},
			map[string]int{"create": 0, "agree": 0, "payment_approved": 0, "ship": 1, "receive": 1, "accept": 1, "payment_disbursed": 1, "complete": 0}, true},
		{"brokered, seller pays the fee", func(m *market) *escrow.CreateTransactionRequest {
			return m.brokered(m.goods("900"), m.brokerFee(m.sellerMail))
		},
			func(m *market, tx *escrow.Transaction) error {
				id := tx.ID
				return steps(func() error { return m.agreeAndFund(id) }, func() error { return m.sellerBank(id) },
					func() error { return m.act(id, m.sellerMail, escrow.ActionShip) },
					func() error { return m.act(id, m.buyerMail, escrow.ActionReceive) },
					func() error { _, err := m.buyer.Transactions.Accept(ctx, id); return err },
					// The goods are paid out; the broker's fee is not until it names a bank.
					func() error {
						if got, err := m.partner.Transactions.Get(ctx, id); err != nil || !got.CloseDate.IsZero() {
							return fmt.Errorf("closed before the broker fee was paid out (%v)", err)
						}
						return nil
					},
					func() error { return m.brokerBank(id) })
			},
			map[string]int{"create": 0, "agree": 0, "payment_approved": 0, "ship": 1, "receive": 1, "accept": 1, "payment_disbursed": 2, "complete": 0}, true},
		{"milestones, seller pays the fee", func(m *market) *escrow.CreateTransactionRequest {
			due := m.srv.Now().AddDate(0, 1, 0)
			ms := func(title, amount string) escrow.ItemInput {
				return escrow.ItemInput{Title: title, Type: escrow.ItemMilestone, InspectionPeriod: escrow.Days(1),
					Schedule: []escrow.ScheduleInput{{Amount: escrow.MustAmount(amount), PayerCustomer: m.buyerMail, BeneficiaryCustomer: m.sellerMail, DueDate: escrow.Timestamp{Time: due}}}}
			}
			return m.brokered(ms("Design", "500"), ms("Build", "1500"), ms("Launch", "300"), m.brokerFee(m.sellerMail))
		},
			func(m *market, tx *escrow.Transaction) error {
				id := tx.ID
				if err := steps(func() error { return m.agreeAndFund(id) }, func() error { return m.sellerBank(id) }, func() error { return m.brokerBank(id) }); err != nil {
					return err
				}
				for _, it := range tx.Items {
					if it.Type != escrow.ItemMilestone {
						continue
					}
					on := func(as string, a escrow.Action) func() error {
						return func() error {
							_, err := m.partner.Transactions.ActOnItem(ctx, id, it.ID, &escrow.ActionRequest{Action: a}, escrow.AsCustomer(as))
							return err
						}
					}
					if err := steps(on(m.sellerMail, escrow.ActionShip), on(m.buyerMail, escrow.ActionReceive), func() error {
						_, err := m.buyer.Transactions.ActOnItem(ctx, id, it.ID, &escrow.ActionRequest{Action: escrow.ActionAccept})
						return err
					}); err != nil {
						return err
					}
				}
				return nil
			},
			map[string]int{"create": 0, "agree": 0, "payment_approved": 0, "ship": 3, "receive": 3, "accept": 3, "payment_disbursed": 4, "complete": 0}, false},
		{"returned", func(m *market) *escrow.CreateTransactionRequest { return m.sale(m.goods("120")) },
			func(m *market, tx *escrow.Transaction) error {
				id := tx.ID
				return steps(func() error { return m.agreeAndFund(id) },
					func() error { return m.act(id, m.sellerMail, escrow.ActionShip) },
					func() error { return m.act(id, m.buyerMail, escrow.ActionReceive) },
					func() error { return m.act(id, m.buyerMail, escrow.ActionReject) },
					func() error { return m.act(id, m.buyerMail, escrow.ActionShipReturn) },
					func() error { return m.act(id, m.sellerMail, escrow.ActionReceiveReturn) },
					func() error { _, err := m.seller.Transactions.AcceptReturn(ctx, id); return err })
			},
			map[string]int{"create": 0, "agree": 0, "payment_approved": 0, "ship": 1, "receive": 1, "reject": 1, "ship_return": 1, "receive_return": 1, "accept_return": 1, "complete": 0}, true},
		{"cancelled", func(m *market) *escrow.CreateTransactionRequest { return m.sale(m.goods("60")) },
			func(m *market, tx *escrow.Transaction) error {
				_, err := m.partner.Transactions.Cancel(ctx, tx.ID, "out of stock")
				return err
			},
			map[string]int{"create": 0, "cancel": 0}, true},
		{"cancelled after agreement", func(m *market) *escrow.CreateTransactionRequest {
			return m.brokered(m.goods("80"), m.brokerFee(m.buyerMail))
		},
			func(m *market, tx *escrow.Transaction) error {
				return steps(func() error { return m.act(tx.ID, m.buyerMail, escrow.ActionAgree) },
					func() error { return m.act(tx.ID, m.sellerMail, escrow.ActionAgree) },
					func() error { _, err := m.partner.Transactions.Cancel(ctx, tx.ID, "changed their mind"); return err })
			},
			map[string]int{"create": 0, "agree": 0, "cancel": 0}, true},
	}
}

// lifecycleOrder ranks events for the order check.
var lifecycleOrder = []string{"create", "agree", "payment_approved", "ship", "receive", "accept", "reject",
	"ship_return", "receive_return", "accept_return", "reject_return", "payment_disbursed", "complete", "cancel"}

// forger sends deliveries no state confirms, of many kinds, straight to the webhook URL.
type forger struct {
	m                             *market
	completed, cancelled, ongoing []int64
	strangers                     []int64
	n                             int
	kinds                         map[string]int
}

func (f *forger) send(count int) {
	m := f.m
	pick := func(ids []int64) int64 {
		if len(ids) == 0 {
			return 1 << 40
		}
		return ids[rand.N(len(ids))]
	}
	for range count {
		var kind, event string
		var id int64
		switch f.n % 13 {
		case 0:
			kind, event, id = "payment_refunded on a sale", "payment_refunded", pick(f.completed)
		case 1:
			kind, event, id = "payment_sent", "payment_sent", pick(f.ongoing)
		case 2:
			kind, event, id = "invented name", "funds_released_to_attacker", pick(f.completed)
		case 3:
			kind, event, id = "verification", "party_verification_approved", pick(f.ongoing)
		case 4:
			kind, event, id = "complete of a cancelled one", "complete", pick(f.cancelled)
		case 5:
			kind, event, id = "cancel of a completed one", "cancel", pick(f.completed)
		case 6:
			kind, event, id = "ship of a cancelled one", "ship", pick(f.cancelled)
		case 7:
			kind, event, id = "unknown transaction", "create", 1<<40+int64(f.n)
		case 8:
			kind, event, id = "another account's transaction", "create", pick(f.strangers)
		case 9:
			kind, event, id = "accept_return of a sale", "accept_return", pick(f.completed)
		case 10:
			kind, event, id = "unique invented names", fmt.Sprintf("x_%d", f.n), pick(f.ongoing)
		case 11:
			kind, event, id = "invalid names", strings.Repeat("Z", 70+f.n%50), pick(f.ongoing)
		case 12:
			kind, event, id = "reject of a completed sale", "reject", pick(f.completed)
		}
		f.n++
		f.kinds[kind]++
		body := fmt.Sprintf(`{"event": %q, "event_type": "transaction", "transaction_id": %d}`, event, id)
		resp, err := http.Post(m.hook.URL+"/escrow", "application/json", strings.NewReader(body))
		if err != nil {
			m.t.Fatal(err)
		}
		resp.Body.Close()
	}
}

// TestReplicasRestartsAndForgers: two replicas over one PostgreSQL store receive every
// delivery that arrives (30% are lost), one is killed and restarted mid-run, both are down
// while transactions are created and ended, and 1,000 forged deliveries of 13 kinds come
// in. Over 54 lifecycles of every path, each fact is handed over once, none is lost and
// nothing forged is handed over.
func TestReplicasRestartsAndForgers(t *testing.T) {
	pgtest.Need(t, pg, pgErr)
	runMarket(t, pg.NewDatabase(t), true)
}

// TestRestartsAndForgersOnSQLite: the same with one process over a SQLite file, killed
// mid-run and restarted after transactions were created and ended while it was down.
func TestRestartsAndForgersOnSQLite(t *testing.T) {
	runMarket(t, "sqlite:"+filepath.Join(t.TempDir(), "hooks.db"), false)
}

func runMarket(t *testing.T, dsn string, twoReplicas bool) {
	m := newMarket(t, dsn)
	live := []*replica{m.start("a")}
	if twoReplicas {
		live = append(live, m.start("b"))
	}
	// A restart misses nothing once the first reconciliation has noted the store's mark,
	// with its first request (see Reconcile); a process killed before that has nothing to
	// resume from. The run starts from there, as a marketplace's first deployment does.
	m.waitForMark(live[0])
	f := &forger{m: m, kinds: map[string]int{}}
	st, err := m.stranger.Transactions.Create(t.Context(), &escrow.CreateTransactionRequest{Currency: escrow.USD, Description: "Not the market's",
		Parties: []escrow.PartyInput{{Role: escrow.RoleBuyer, Customer: "me"}, {Role: escrow.RoleSeller, Customer: m.sellerMail}},
		Items: []escrow.ItemInput{{Title: "Lamp", Type: escrow.ItemGeneralMerchandise, Schedule: []escrow.ScheduleInput{
			{Amount: escrow.MustAmount("40"), PayerCustomer: "me", BeneficiaryCustomer: m.sellerMail}}}}})
	if err != nil {
		t.Fatal(err)
	}
	f.strangers = append(f.strangers, st.ID)

	paths := m.paths()
	const rounds = 9
	want := make(map[int64]path)
	var downIDs []int64
	for r := range rounds {
		switch {
		case twoReplicas && r == 3:
			m.kill(live[1]) // mid-run, claims held and callbacks cut short
			live = live[:1]
		case twoReplicas && r == 5, !twoReplicas && r == 3:
			m.kill(live[0]) // nobody receives: what happens now is found only through the store's mark
			live = nil
		case twoReplicas && r == 7:
			live = []*replica{m.start("a2"), m.start("b2")}
		case !twoReplicas && r == 5:
			live = []*replica{m.start("a2")}
		}
		down := len(live) == 0
		for _, p := range paths {
			tx, err := m.partner.Transactions.Create(t.Context(), p.create(m))
			if err != nil {
				t.Fatalf("%s: create: %v", p.name, err)
			}
			if down {
				downIDs = append(downIDs, tx.ID)
			}
			f.ongoing = append(f.ongoing, tx.ID)
			if err := p.run(m, tx); err != nil {
				t.Fatalf("%s (%d): %v", p.name, tx.ID, err)
			}
			want[tx.ID] = p
			if _, ok := p.want["cancel"]; ok {
				f.cancelled = append(f.cancelled, tx.ID)
			} else {
				f.completed = append(f.completed, tx.ID)
			}
			f.send(1000 / (rounds * len(paths)))
		}
	}
	f.send(1000 - f.n)

	// Let everything land: the emulator's calls, both replicas' queues, and reconciliations
	// until a full one finds nothing more.
	ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
	defer cancel()
	if err := m.srv.FlushWebhooks(ctx); err != nil {
		t.Fatal(err)
	}
	time.Sleep(1200 * time.Millisecond) // the killed replicas' leases end
	m.mu.Lock()
	m.replicas = map[string]*replica{}
	m.mu.Unlock()
	for _, rp := range live {
		rp.cancel()
		<-rp.done
	}
	for range 3 {
		for _, rp := range live {
			if err := rp.h.Reconcile(ctx); err != nil {
				t.Fatal(err)
			}
		}
		for _, rp := range live {
			if err := rp.h.Flush(ctx); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, rp := range live {
		m.stop(rp)
	}

	// What reached the application, through the callback's own database transactions.
	store, err := sqlstore.Open(t.Context(), m.dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	rows, err := store.DB().QueryContext(t.Context(), `SELECT transaction_id, event, item_id, source, replica FROM handed ORDER BY seq`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	type key struct {
		tx    int64
		event string
		item  int64
	}
	seen := map[key]int{}
	byTx := map[int64][]string{}
	bySource, byReplica := map[string]int{}, map[string]int{}
	for rows.Next() {
		var k key
		var src, rep string
		if err := rows.Scan(&k.tx, &k.event, &k.item, &src, &rep); err != nil {
			t.Fatal(err)
		}
		seen[k]++
		byTx[k.tx] = append(byTx[k.tx], k.event)
		bySource[src]++
		byReplica[rep]++
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	duplicates, lost, forged := 0, 0, 0
	for k, n := range seen {
		if n > 1 {
			duplicates += n - 1
			t.Errorf("transaction %d: %s (item %d) handed over %d times", k.tx, k.event, k.item, n)
		}
		p, ok := want[k.tx]
		if _, expected := p.want[k.event]; !ok || !expected {
			forged++
			t.Errorf("transaction %d: %s handed over, never happened", k.tx, k.event)
		}
	}
	for id, p := range want {
		for ev, items := range p.want {
			got := 0
			for k := range seen {
				if k.tx == id && k.event == ev {
					got++
				}
			}
			if items == 0 {
				items = 1
			}
			if got < items {
				lost += items - got
				t.Errorf("transaction %d (%s): %s handed over for %d of %d items: %v", id, p.name, ev, got, items, byTx[id])
			}
		}
		if p.ordered {
			rank := func(ev string) int { return slices.Index(lifecycleOrder, ev) }
			for i := 1; i < len(byTx[id]); i++ {
				if rank(byTx[id][i]) < rank(byTx[id][i-1]) {
					t.Errorf("transaction %d (%s): out of order: %v", id, p.name, byTx[id])
					break
				}
			}
		}
	}
	lost2 := 0
	for _, id := range downIDs {
		if len(byTx[id]) == 0 {
			lost2++
		}
	}
	lostDeliveries := 0
	for _, d := range m.srv.Deliveries() {
		if d.Error != "" {
			lostDeliveries++
		}
	}
	t.Logf("%d lifecycles (%d while no replica ran), %d deliveries (%d lost by the network), %d forged of %d kinds, %d hints; handed over %d facts %v by %v; duplicates %d, lost %d, forged handed over %d",
		len(want), len(downIDs), len(m.srv.Deliveries()), lostDeliveries, f.n, len(f.kinds), m.hints.Load(), len(seen), bySource, byReplica, duplicates, lost, forged)
	if len(want) < 50 || len(f.kinds) < 10 || f.n < 1000 || lost2 != 0 {
		t.Errorf("the run was too small or missed the transactions made while down: %d lifecycles, %d kinds, %d forged, %d down-time transactions with nothing", len(want), len(f.kinds), f.n, lost2)
	}
	if bySource["reconcile"] == 0 || lostDeliveries == 0 {
		t.Error("nothing was lost, so nothing was tested")
	}
}

// TestAcquireWaitingForATurnSeesItsFacts (PostgreSQL): an Acquire that waits on the lease
// row for another replica's turn to end sees the facts that turn recorded: if they make
// its names replays, it answers Replayed and leaves the lease free, instead of granting a
// turn that would find nothing to do.
func TestAcquireWaitingForATurnSeesItsFacts(t *testing.T) {
	dsn := pgtest.Need(t, pg, pgErr).NewDatabase(t)
	s := open(t, dsn)
	ctx := t.Context()
	now := time.Now()
	a := webhook.Lease{TransactionID: 9, Holder: "a", Expires: now.Add(time.Minute)}
	turn, err := s.Acquire(ctx, a, []escrow.EventName{escrow.EventCreate}, now)
	if err != nil || !turn.Granted {
		t.Fatalf("a's Acquire: %+v, %v", turn, err)
	}
	waitCommitted(t, s, 9, "a") // a's turn outlived its window: a committed lease
	// a's turn ends in a transaction of its own, held open while b asks for the lease.
	tx, err := s.DB().BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `UPDATE escrow_webhook_leases SET holder = '', expires = 0 WHERE transaction_id = 9`); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO escrow_webhook_facts (transaction_id, fact, owner, expires, done) VALUES (9, 'create', 'a', 0, 1)`); err != nil {
		t.Fatal(err)
	}
	b := make(chan webhook.Turn, 1)
	go func() {
		turn, err := s.Acquire(ctx, webhook.Lease{TransactionID: 9, Holder: "b", Expires: now.Add(time.Minute)}, []escrow.EventName{escrow.EventCreate}, now)
		if err != nil {
			t.Error(err)
		}
		b <- turn
	}()
	time.Sleep(200 * time.Millisecond) // b reads no facts, then waits for the row
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if got := <-b; !got.Replayed || got.Granted {
		t.Fatalf("b's Acquire after a's turn recorded create: %+v, want Replayed", got)
	}
	if turn, err := s.Acquire(ctx, webhook.Lease{TransactionID: 9, Holder: "c", Expires: now.Add(time.Minute)}, nil, now); err != nil || !turn.Granted {
		t.Errorf("the lease after b's replay: %+v, %v; want it free", turn, err)
	}
}

// TestPruneDeletesABusyLeaseOfAFinishedTransaction: pruning a finished transaction deletes
// its lease row even while names wait in it for a holder that died: that row is not idle,
// so only the prune of its transaction removes it.
func TestPruneDeletesABusyLeaseOfAFinishedTransaction(t *testing.T) {
	for name, mk := range engines(t) {
		t.Run(name, func(t *testing.T) {
			s := open(t, mk(t))
			ctx, now := t.Context(), time.Now()
			a := webhook.Lease{TransactionID: 6, Holder: "a", Expires: now.Add(time.Hour)}
			turn, err := s.Acquire(ctx, a, []escrow.EventName{escrow.EventCancel}, now)
			if err != nil || !turn.Granted {
				t.Fatalf("Acquire: %+v %v", turn, err)
			}
			if _, err := s.Yield(ctx, webhook.Yield{Lease: a, Marks: turn.Marks, Facts: []string{"create", "cancel"}, Finished: true, Now: now}); err != nil {
				t.Fatal(err)
			}
			a2, err := s.Acquire(ctx, a, nil, now) // a takes a turn again, and dies in it
			if err != nil || !a2.Granted {
				t.Fatalf("a's second Acquire: %+v %v", a2, err)
			}
			if _, err := s.Acquire(ctx, webhook.Lease{TransactionID: 6, Holder: "b", Expires: now.Add(time.Hour)}, []escrow.EventName{"hint_x"}, now); err != nil {
				t.Fatal(err)
			}
			if n := count(t, s, `SELECT count(*) FROM escrow_webhook_leases WHERE pending <> ''`); n != 1 {
				t.Fatalf("%d busy lease rows before pruning, want 1", n)
			}
			if n, err := s.Prune(ctx, time.Now().Add(time.Hour)); err != nil || n != 1 {
				t.Fatalf("Prune = %d, %v; want 1", n, err)
			}
			if n := count(t, s, `SELECT count(*) FROM escrow_webhook_leases`); n != 0 {
				t.Errorf("%d lease rows left after its transaction was pruned", n)
			}
		})
	}
}

// TestTakeOverWaitsForATxCallbacksCommit: a replica whose lease ends while its TxCallback's
// transaction commits holds the lease row until the commit: another replica taking the
// transaction over waits, then finds the facts and takes no turn. Had it not waited, it
// would have confirmed and handed over the same event again. The commit is made slow by a
// deferred trigger on the facts, so the take-over comes while it runs.
func TestTakeOverWaitsForATxCallbacksCommit(t *testing.T) {
	dsn := pgtest.Need(t, pg, pgErr).NewDatabase(t)
	a, b := open(t, dsn), open(t, dsn)
	ctx := t.Context()
	slowFacts(t, a.DB(), `CREATE CONSTRAINT TRIGGER escrow_test_slow AFTER INSERT ON escrow_webhook_facts
		DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION escrow_test_slow()`)
	now := time.Now()
	held := webhook.Lease{TransactionID: 1, Holder: "a", Expires: now.Add(time.Second)}
	if turn, err := a.Acquire(ctx, held, []escrow.EventName{escrow.EventCreate}, now); err != nil || !turn.Granted {
		t.Fatalf("a's Acquire = %+v, %v", turn, err)
	}
	cb := a.TxCallback(func(context.Context, *sql.Tx, webhook.ConfirmedEvent) error { return nil })
	handed := make(chan error, 1)
	go func() {
		ev := webhook.ConfirmedEvent{Claim: webhook.Claim{TransactionID: 1, Facts: []string{"create"}, Owner: "a", Expires: held.Expires}}
		ev.TransactionID, ev.Name = 1, escrow.EventCreate
		handed <- cb(ctx, ev)
	}()
	// Wait until a's transaction sleeps in its commit: past its holder check, facts unseen.
	awaitSlowTrigger(t, b.DB(), "a's commit")
	later := now.Add(2 * time.Second) // a's lease has ended
	turn, err := b.Acquire(ctx, webhook.Lease{TransactionID: 1, Holder: "b", Expires: later.Add(time.Minute)}, []escrow.EventName{escrow.EventCreate}, later)
	if err := <-handed; err != nil {
		t.Fatalf("a's TxCallback: %v", err)
	}
	if err != nil || turn.Granted || !turn.Replayed {
		t.Errorf("b's take-over during a's commit: %+v, %v; want Replayed, the lease untaken", turn, err)
	}
}

// TestNamesLeftDuringAYieldReachAHolder: a delivery to another replica while the holder's
// turn is being recorded is not lost: the Yield holds the lease row from its read to its
// commit, so the other replica's names wait for it and then find the lease free and take
// it, or the Yield sees them and goes on. Without the lock, the Yield wrote back the row as
// it had read it and the names were gone, though the other replica was told they were left
// to the holder. A trigger on the facts makes the Yield slow enough to come between. The
// turn's grant is committed first, as a turn's is once it outlives its window (an open turn's
// Yield holds the row already).
func TestNamesLeftDuringAYieldReachAHolder(t *testing.T) {
	dsn := pgtest.Need(t, pg, pgErr).NewDatabase(t)
	a, b := open(t, dsn), open(t, dsn)
	sqlstore.SetTurnWindow(a, time.Millisecond)
	ctx := t.Context()
	slowFacts(t, a.DB(), `CREATE TRIGGER escrow_test_slow AFTER INSERT ON escrow_webhook_facts FOR EACH STATEMENT EXECUTE FUNCTION escrow_test_slow()`)
	now := time.Now()
	held := webhook.Lease{TransactionID: 1, Holder: "a", Expires: now.Add(time.Minute)}
	turn, err := a.Acquire(ctx, held, []escrow.EventName{escrow.EventCreate}, now)
	if err != nil || !turn.Granted {
		t.Fatalf("a's Acquire = %+v, %v", turn, err)
	}
	waitCommitted(t, b, 1, "a")
	type result struct {
		turn webhook.Turn
		err  error
	}
	yielded := make(chan result, 1)
	go func() {
		end, err := a.Yield(ctx, webhook.Yield{Lease: held, Marks: turn.Marks, Facts: []string{"create"}, Now: now})
		yielded <- result{end, err}
	}()
	awaitSlowTrigger(t, b.DB(), "a's Yield")
	bt, err := b.Acquire(ctx, webhook.Lease{TransactionID: 1, Holder: "b", Expires: now.Add(time.Minute)}, []escrow.EventName{escrow.EventAgree}, now)
	if err != nil {
		t.Fatal(err)
	}
	y := <-yielded
	if y.err != nil {
		t.Fatalf("a's Yield: %v", y.err)
	}
	if !bt.Granted && !(y.turn.Granted && slices.Contains(y.turn.Pending, escrow.EventAgree)) {
		t.Errorf("agree, delivered to b during a's Yield: b %+v, a's Yield %+v; want b's lease, or a's turn going on with it", bt, y.turn)
	}
}

// TestPruneTakesPausedLeases: a turn that records nothing and ends with a pause before
// the next fetch (claims its fetch did not confirm) keeps its lease row past the turn;
// Prune past the pause deletes it.
func TestPruneTakesPausedLeases(t *testing.T) {
	for name, dsn := range engines(t) {
		t.Run(name, func(t *testing.T) {
			s := open(t, dsn(t))
			ctx := t.Context()
			now := time.Now()
			for id := int64(1); id <= 20; id++ {
				l := webhook.Lease{TransactionID: id, Holder: "a", Expires: now.Add(time.Minute)}
				turn, err := s.Acquire(ctx, l, []escrow.EventName{escrow.EventCreate}, now)
				if err != nil || !turn.Granted {
					t.Fatalf("Acquire(%d) = %+v, %v", id, turn, err)
				}
				pace := webhook.Pace{NotBefore: now.Add(time.Second), Hold: time.Second, Tried: []escrow.EventName{escrow.EventCreate}}
				if _, err := s.Yield(ctx, webhook.Yield{Lease: l, Marks: turn.Marks, Pace: pace, Now: now}); err != nil {
					t.Fatal(err)
				}
			}
			rows := func() (n int) {
				t.Helper()
				if err := s.DB().QueryRowContext(ctx, `SELECT count(*) FROM escrow_webhook_leases`).Scan(&n); err != nil {
					t.Fatal(err)
				}
				return n
			}
			if n := rows(); n != 20 {
				t.Fatalf("%d lease rows after the turns, want the 20 paused", n)
			}
			if _, err := s.Prune(ctx, now.Add(2*time.Second)); err != nil {
				t.Fatal(err)
			}
			if n := rows(); n != 0 {
				t.Errorf("%d lease rows after Prune past every pause, want none", n)
			}
		})
	}
}

// TestForgedIdsLeaveNoRows: a handler over the store, delivered 300 made-up ids that the
// API answers 404, fetches each once and leaves no row of them in any table, before
// Prune and after Prune(now - 30 days): nothing is kept for what never existed.
func TestForgedIdsLeaveNoRows(t *testing.T) {
	for name, dsn := range engines(t) {
		t.Run(name, func(t *testing.T) {
			s := open(t, dsn(t))
			srv := escrowtest.NewServer(escrowtest.WithRateLimit(0, time.Minute))
			t.Cleanup(srv.Close)
			shop := apiClient(t, srv, srv.AddCustomer("shop@example.com"))
			h := webhook.NewHandler(shop, func(context.Context, webhook.ConfirmedEvent) error { return nil }, webhook.Options{Store: s})
			t.Cleanup(func() { h.Shutdown(context.WithoutCancel(t.Context())) })
			for i := range int64(300) {
				body := fmt.Sprintf(`{"event": "create", "event_type": "transaction", "transaction_id": %d}`, 900_000_000+i)
				req := httptest.NewRequest(http.MethodPost, "/escrow", strings.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, req)
				if rec.Code != http.StatusOK {
					t.Fatalf("delivery %d answered %d", i, rec.Code)
				}
			}
			ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
			defer cancel()
			if err := h.Flush(ctx); err != nil {
				t.Fatal(err)
			}
			rows := func() int {
				return count(t, s, `SELECT count(*) FROM escrow_webhook_leases`) +
					count(t, s, `SELECT count(*) FROM escrow_webhook_facts`) +
					count(t, s, `SELECT count(*) FROM escrow_webhook_transactions`)
			}
			if n := rows(); n != 0 {
				t.Errorf("%d rows kept for 300 forged ids after their turns, want 0", n)
			}
			if _, err := s.Prune(ctx, time.Now().Add(-30*24*time.Hour)); err != nil {
				t.Fatal(err)
			}
			if n := rows(); n != 0 {
				t.Errorf("%d rows kept for 300 forged ids after Prune, want 0", n)
			}
		})
	}
}

// slowFacts makes writing facts slow in a PostgreSQL store's database: trigger creates a
// trigger on escrow_webhook_facts running escrow_test_slow, which sleeps half a second, so
// that another replica's call can come while it sleeps (awaitSlowTrigger).
func slowFacts(t *testing.T, db *sql.DB, trigger string) {
	t.Helper()
	for _, stmt := range []string{
		`CREATE FUNCTION escrow_test_slow() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN PERFORM pg_sleep(0.5); RETURN NULL; END $$`,
		trigger,
	} {
		if _, err := db.ExecContext(t.Context(), stmt); err != nil {
			t.Fatal(err)
		}
	}
}

// awaitSlowTrigger waits until a transaction of db's database sleeps in slowFacts' trigger.
func awaitSlowTrigger(t *testing.T, db *sql.DB, what string) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; {
		var n int
		if err := db.QueryRowContext(t.Context(), `SELECT count(*) FROM pg_stat_activity WHERE wait_event = 'PgSleep' AND datname = current_database()`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n > 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never reached the slow trigger", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// noDriverProgram opens the store its argument names and prints whether the error matches
// ErrNoDriver, then ErrDSN, then the error. It imports no SQL driver, as a program that
// forgot the import.
const noDriverProgram = `package main

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/escrowkit/escrow-go/webhook/sqlstore"
)

func main() {
	_, err := sqlstore.Open(context.Background(), os.Args[1])
	fmt.Println(errors.Is(err, sqlstore.ErrNoDriver), errors.Is(err, sqlstore.ErrDSN), err)
}
`

// TestOpenWithoutItsDriverSaysWhatToImport: a program that did not import its engine's
// driver gets from Open an error matching ErrNoDriver, not ErrDSN (its DSN is fine), naming
// the package to import. The test binary registers both drivers, so the program is built
// apart, from this package's source on disk (put into a directory of the package through
// an overlay, so that it builds within this module).
func TestOpenWithoutItsDriverSaysWhatToImport(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to build a program with")
	}
	here, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	src, overlay := filepath.Join(dir, "main.go"), filepath.Join(dir, "overlay.json")
	ov, err := json.Marshal(map[string]map[string]string{"Replace": {filepath.Join(here, "escrow_nodriver_probe", "main.go"): src}})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(src, []byte(noDriverProgram), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(overlay, ov, 0o600); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "probe")
	if out, err := exec.CommandContext(t.Context(), goTool, "build", "-overlay", overlay, "-o", bin, "./escrow_nodriver_probe").CombinedOutput(); err != nil {
		t.Fatalf("building a program without a driver: %v\n%s", err, out)
	}
	for dsn, want := range map[string]string{
		"sqlite:" + filepath.Join(dir, "x.db"): `import _ "modernc.org/sqlite"`,
		"postgres://u@db.example/x":            `import _ "github.com/jackc/pgx/v5/stdlib"`,
	} {
		b, err := exec.CommandContext(t.Context(), bin, dsn).CombinedOutput()
		out := strings.TrimSpace(string(b))
		if err != nil {
			t.Fatalf("%s: %v\n%s", dsn, err, out)
		}
		if !strings.HasPrefix(out, "true false ") || !strings.Contains(out, want) {
			t.Errorf("Open(%q) without its driver: %s (matches ErrNoDriver, matches ErrDSN, error); want ErrNoDriver alone, saying %s", dsn, out, want)
		}
	}
}

// TestOpenKeepsAConnectionForEachWorker: a store that Open made keeps the connections of a
// burst of a Handler's default 8 workers open for the next burst, instead of the 2 that
// database/sql keeps by default: on PostgreSQL each connection closed and opened again is
// a server backend started anew, for most statements of a busy receiver.
func TestOpenKeepsEveryConnectionItMayOpen(t *testing.T) {
	for name, mk := range engines(t) {
		t.Run(name, func(t *testing.T) {
			s := open(t, mk(t))
			ctx := t.Context()
			conns := 8 // a Handler's workers
			if s.Dialect() == sqlstore.Postgres {
				conns = sqlstore.PostgresConns
			}
			var held []*sql.Conn
			for range conns {
				c, err := s.DB().Conn(ctx)
				if err != nil {
					t.Fatal(err)
				}
				held = append(held, c)
			}
			for _, c := range held {
				if err := c.Close(); err != nil {
					t.Fatal(err)
				}
			}
			if st := s.DB().Stats(); st.Idle != conns || st.MaxIdleClosed != 0 {
				t.Errorf("after %d connections at once: %d kept idle, %d closed for the idle limit; want every one kept", conns, st.Idle, st.MaxIdleClosed)
			}
		})
	}
}

// TestPostgresStoreUsesAtMostItsConnections: a PostgreSQL Store that Open made uses at
// most PostgresConns connections: one more waits for one of them to be free.
func TestPostgresStoreUsesAtMostItsConnections(t *testing.T) {
	s := open(t, pgtest.Need(t, pg, pgErr).NewDatabase(t))
	var held []*sql.Conn
	for range sqlstore.PostgresConns {
		c, err := s.DB().Conn(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, c)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	if c, err := s.DB().Conn(ctx); err == nil {
		c.Close()
		t.Errorf("a connection beyond the %d in use was opened", sqlstore.PostgresConns)
	}
	held[0].Close()
	c, err := s.DB().Conn(t.Context())
	if err != nil {
		t.Fatalf("a connection once one was free: %v", err)
	}
	c.Close()
	for _, c := range held[1:] {
		c.Close()
	}
}

// cancellingMarket starts an emulator whose partner's deliveries reach a handler over s
// that records an order per event (ordersOf), and returns the handler and sell, which
// makes n cancelled sales and waits until the handler has handed their events over.
func cancellingMarket(t *testing.T, s *sqlstore.Store, opt webhook.Options) (h *webhook.Handler, sell func(n int) error) {
	t.Helper()
	ctx := t.Context()
	srv := escrowtest.NewServer(escrowtest.WithRateLimit(0, time.Minute))
	t.Cleanup(srv.Close)
	p, b, se := srv.AddPartner("market@example.com"), srv.AddCustomer("buyer@example.com"), srv.AddCustomer("seller@example.com")
	partner := apiClient(t, srv, p)
	opt.Store = s
	h = webhook.NewHandler(partner, ordersOf(t, s), opt)
	hook := httptest.NewServer(h)
	t.Cleanup(hook.Close)
	t.Cleanup(func() {
		sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		h.Shutdown(sctx)
	})
	if _, err := partner.Webhooks.Create(ctx, escrow.Me, hook.URL+"/escrow"); err != nil {
		t.Fatal(err)
	}
	return h, func(n int) error {
		for range n {
			cancelledSale(t, partner, b, se)
		}
		if err := srv.FlushWebhooks(ctx); err != nil {
			return err
		}
		fctx, fcancel := context.WithTimeout(ctx, 30*time.Second)
		defer fcancel()
		return h.Flush(fctx)
	}
}

// TestOneConnectionServesAHandlersWorkers: no path of a Store holds a connection while
// it waits for another, so a Store of one connection serves a Handler's eight workers,
// its reconciler and a TxCallback, with turns held open until they end (a window of an
// hour), and hands every event over once.
func TestOneConnectionServesAHandlersWorkers(t *testing.T) {
	s := open(t, pgtest.Need(t, pg, pgErr).NewDatabase(t))
	s.DB().SetMaxOpenConns(1)
	sqlstore.SetTurnWindow(s, time.Hour)
	ctx := t.Context()
	h, sell := cancellingMarket(t, s, webhook.Options{Workers: 8})
	defer reconciling(h, 10*time.Millisecond)()
	const sales = 20
	if err := sell(sales); err != nil {
		t.Fatalf("Flush with one connection: %v (a path waiting for a second connection while it holds one?)", err)
	}
	var events, distinct int
	if err := s.DB().QueryRowContext(ctx, `SELECT count(*), count(DISTINCT (transaction_id, event)) FROM orders`).Scan(&events, &distinct); err != nil {
		t.Fatal(err)
	}
	if events != 2*sales || distinct != events {
		t.Errorf("%d orders, %d distinct; want each sale's create and cancel once (%d)", events, distinct, 2*sales)
	}
}

// TestCurrentStoreOpensReadOnly: New on a store already at the current schema writes
// nothing, so a tool can look at a running receiver's SQLite file through a read-only
// handle (mode=ro) and read what it recorded.
func TestCurrentStoreOpensReadOnly(t *testing.T) {
	path := filepath.Join(t.TempDir(), "webhooks.db")
	s := open(t, "sqlite:"+path)
	ctx := t.Context()
	if err := s.Track(ctx, []int64{3, 4}); err != nil {
		t.Fatal(err)
	}
	if err := s.AdvanceMark(ctx, 4); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ro, err := sqlstore.New(ctx, db, sqlstore.SQLite)
	if err != nil {
		t.Fatalf("New on a read-only handle of a current store: %v", err)
	}
	if ids, err := ro.Unfinished(ctx); err != nil || !slices.Equal(ids, []int64{3, 4}) {
		t.Errorf("Unfinished through the read-only handle = %v, %v; want [3 4]", ids, err)
	}
	if m, known, err := ro.Mark(ctx); err != nil || !known || m != 4 {
		t.Errorf("Mark through the read-only handle = %d %v %v; want 4", m, known, err)
	}
}

// TestHandlerHandsOverAgainWhatAFailedTurnUndid: a turn whose commit fails takes its
// TxCallbacks' effects with it; the Handler hands those events over again, so that every
// event of every sale has its order once, and its fact recorded.
func TestHandlerHandsOverAgainWhatAFailedTurnUndid(t *testing.T) {
	s := open(t, pgtest.Need(t, pg, pgErr).NewDatabase(t))
	sqlstore.SetTurnWindow(s, time.Hour)
	ctx := t.Context()
	_, sell := cancellingMarket(t, s, webhook.Options{RetryWait: time.Millisecond, MaxRetryWait: 10 * time.Millisecond})
	// The first two commits that add an order fail (a sequence is not rolled back).
	for _, stmt := range []string{
		`CREATE SEQUENCE escrow_test_commits`,
		`CREATE FUNCTION escrow_test_refuse_twice() RETURNS trigger LANGUAGE plpgsql AS $$
			BEGIN IF nextval('escrow_test_commits') <= 2 THEN RAISE EXCEPTION 'refused at commit'; END IF; RETURN NULL; END $$`,
		`CREATE CONSTRAINT TRIGGER escrow_test_refuse AFTER INSERT ON orders DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION escrow_test_refuse_twice()`,
	} {
		if _, err := s.DB().ExecContext(ctx, stmt); err != nil {
			t.Fatal(err)
		}
	}
	const sales = 3
	if err := sell(sales); err != nil {
		t.Fatal(err)
	}
	var events, distinct, facts, refused int
	if err := s.DB().QueryRowContext(ctx, `SELECT (SELECT count(*) FROM orders), (SELECT count(DISTINCT (transaction_id, event)) FROM orders),
		(SELECT count(*) FROM escrow_webhook_facts WHERE fact IN ('create', 'cancel')), (SELECT last_value FROM escrow_test_commits)`).Scan(&events, &distinct, &facts, &refused); err != nil {
		t.Fatal(err)
	}
	if refused < 3 {
		t.Fatalf("the trigger ran %d times: no turn was refused twice and then let through", refused)
	}
	if events != 2*sales || distinct != events || facts != events {
		t.Errorf("%d orders (%d distinct), %d facts recorded; want each sale's create and cancel once (%d)", events, distinct, facts, 2*sales)
	}
}
