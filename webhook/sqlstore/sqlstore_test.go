package sqlstore_test

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"slices"
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
