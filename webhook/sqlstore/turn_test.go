package sqlstore_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	escrow "github.com/escrowkit/escrow-go"
	"github.com/escrowkit/escrow-go/internal/pgtest"
	"github.com/escrowkit/escrow-go/webhook"
	"github.com/escrowkit/escrow-go/webhook/sqlstore"
)

// waitCommitted waits until the lease of id is committed to holder, as another
// connection sees it: a PostgreSQL turn's grant is committed once the turn outlives the
// store's window.
func waitCommitted(t *testing.T, s *sqlstore.Store, id int64, holder string) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		var h string
		err := s.DB().QueryRowContext(t.Context(), `SELECT holder FROM escrow_webhook_leases WHERE transaction_id = $1`, id).Scan(&h)
		if err == nil && h == holder {
			return
		}
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			t.Fatal(err)
		}
	}
	t.Fatalf("the lease of %d was never committed to %s", id, holder)
}

// waitBlocked waits until a statement of the database waits for a lock.
func waitBlocked(t *testing.T, db *sql.DB) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(2 * time.Millisecond) {
		var n int
		if err := db.QueryRowContext(t.Context(), `SELECT count(*) FROM pg_locks WHERE NOT granted`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n > 0 {
			return
		}
	}
	t.Fatal("no statement ever waited for a lock")
}

// acquireIn asks s for the lease of id until a minute after now. It may run outside the
// test's goroutine: an error fails the test without stopping it.
func acquireIn(t *testing.T, s *sqlstore.Store, id int64, holder string, now time.Time, names ...escrow.EventName) webhook.Turn {
	t.Helper()
	turn, err := s.Acquire(t.Context(), webhook.Lease{TransactionID: id, Holder: holder, Expires: now.Add(time.Minute)}, names, now)
	if err != nil {
		t.Error(err)
	}
	return turn
}

// soon returns what f returns, failing the test if f does not return within 10 s: what it
// does must not wait on a turn (its lease row, or the connection it holds).
func soon[T any](t *testing.T, what string, f func() T) T {
	t.Helper()
	answer := make(chan T, 1)
	go func() { answer <- f() }()
	select {
	case v := <-answer:
		return v
	case <-time.After(10 * time.Second):
	}
	t.Fatalf("%s waited on a turn: its lease row, or the connection it holds", what)
	var none T
	return none
}

// twoReplicas opens two replicas' handles on a fresh PostgreSQL database.
func twoReplicas(t *testing.T) (a, b *sqlstore.Store) {
	t.Helper()
	dsn := pgtest.Need(t, pg, pgErr).NewDatabase(t)
	return open(t, dsn), open(t, dsn)
}

// startTurn starts a's turn on transaction 9 for create, a keeping a turn's grant
// uncommitted for window.
func startTurn(t *testing.T, a *sqlstore.Store, window time.Duration) (turn webhook.Turn, now time.Time) {
	t.Helper()
	sqlstore.SetTurnWindow(a, window)
	now = time.Now()
	if turn = acquireIn(t, a, 9, "a", now, escrow.EventCreate); !turn.Granted {
		t.Fatalf("a's Acquire: %+v", turn)
	}
	return turn, now
}

// cutOffTurns ends, through b, the connections of its database's open turns, as a
// server restart or idle_in_transaction_session_timeout does.
func cutOffTurns(t *testing.T, b *sqlstore.Store) {
	t.Helper()
	if _, err := b.DB().ExecContext(t.Context(), `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
		WHERE datname = current_database() AND state = 'idle in transaction'`); err != nil {
		t.Fatal(err)
	}
}

// withATurn opens two replicas' handles on a fresh PostgreSQL database and starts a's
// turn (startTurn).
func withATurn(t *testing.T, window time.Duration) (a, b *sqlstore.Store, turn webhook.Turn, now time.Time) {
	t.Helper()
	a, b = twoReplicas(t)
	turn, now = startTurn(t, a, window)
	return a, b, turn, now
}

// TestReplicaWaitingOnATurnSeesItsFacts: on PostgreSQL a turn's lease is its open
// database transaction; another replica's delivery for the transaction waits on the lease
// row until the turn ends, then finds its name a replay of what the turn recorded and
// answers Replayed, leaving the lease free: no names written for the holder, no fetch.
func TestReplicaWaitingOnATurnSeesItsFacts(t *testing.T) {
	a, b, turn, now := withATurn(t, time.Hour)
	waiting := make(chan webhook.Turn, 1)
	go func() { waiting <- acquireIn(t, b, 9, "b", now, escrow.EventCreate) }()
	waitBlocked(t, a.DB())
	if _, err := a.Yield(t.Context(), webhook.Yield{Lease: webhook.Lease{TransactionID: 9, Holder: "a"}, Marks: turn.Marks, Facts: []string{"create"}, Now: now}); err != nil {
		t.Fatal(err)
	}
	if got := <-waiting; !got.Replayed || got.Granted {
		t.Fatalf("b's Acquire, waiting during a's turn that recorded create: %+v, want Replayed", got)
	}
	if got := acquireIn(t, b, 9, "c", now); !got.Granted || !got.Handed["create"] {
		t.Errorf("the lease after the turn: %+v; want it free, create handed", got)
	}
}

// TestTurnOutlivingItsWindowIsACommittedLease: a turn longer than the store's window (a
// retry's backoff, a slow fetch) has its grant committed: another replica's delivery no
// longer waits, it is left to the holder, who confirms it when its turn ends.
func TestTurnOutlivingItsWindowIsACommittedLease(t *testing.T) {
	a, b, turn, now := withATurn(t, time.Millisecond)
	waitCommitted(t, b, 9, "a")
	if got := acquireIn(t, b, 9, "b", now, escrow.EventShip); got.Granted || got.Replayed {
		t.Fatalf("b's Acquire during a's committed turn: %+v, want its names left to a", got)
	}
	again, err := a.Yield(t.Context(), webhook.Yield{Lease: webhook.Lease{TransactionID: 9, Holder: "a", Expires: now.Add(time.Minute)}, Marks: turn.Marks, Facts: []string{"create"}, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	if !again.Granted || len(again.Pending) != 1 || again.Pending[0] != escrow.EventShip {
		t.Errorf("a's Yield: %+v, want the turn to go on with ship", again)
	}
}

// TestHolderCutOffMidTurnFreesTheLeaseAtOnce: a holder whose connection ends mid-turn (the
// process killed) leaves the lease free at once, not after its lease's time: the server
// rolls its grant back. Its facts, not recorded, are confirmed again by the next holder.
func TestHolderCutOffMidTurnFreesTheLeaseAtOnce(t *testing.T) {
	_, b, _, now := withATurn(t, time.Hour)
	cutOffTurns(t, b)
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		turn := acquireIn(t, b, 9, "b", now, escrow.EventCreate)
		if turn.Granted {
			if len(turn.Handed) != 0 {
				t.Errorf("b's turn: %+v, want nothing handed", turn)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("b never got the lease of a holder cut off: %+v", turn)
		}
	}
}

// TestTurnCommitsItsGrantWithItsFacts: on PostgreSQL a turn that takes the lease and
// ends it is one database transaction: no other connection sees the lease taken during
// the turn (its row lock keeps them out), and the turn's facts appear with the lease's
// release, at one commit.
func TestTurnCommitsItsGrantWithItsFacts(t *testing.T) {
	a, b, turn, now := withATurn(t, time.Hour)
	rows := func() (leases, facts int) {
		t.Helper()
		if err := b.DB().QueryRowContext(t.Context(), `SELECT (SELECT count(*) FROM escrow_webhook_leases), (SELECT count(*) FROM escrow_webhook_facts)`).Scan(&leases, &facts); err != nil {
			t.Fatal(err)
		}
		return leases, facts
	}
	if l, f := rows(); l != 0 || f != 0 {
		t.Errorf("during the turn another connection sees %d lease and %d fact rows, want none", l, f)
	}
	if _, err := a.Yield(t.Context(), webhook.Yield{Lease: webhook.Lease{TransactionID: 9, Holder: "a"}, Marks: turn.Marks, Facts: []string{"create"}, Now: now}); err != nil {
		t.Fatal(err)
	}
	if l, f := rows(); l != 0 || f != 1 {
		t.Errorf("after the turn: %d lease and %d fact rows, want the fact alone", l, f)
	}
}

// TestHandlersSharingAStoreDoNotWaitForEachOther: two handlers of one process on one
// Store (as tests and single-process replicas run) meet each other's turns as committed
// leases: the second's delivery is left to the first at once, never waiting on the row
// the first one's open turn holds.
func TestHandlersSharingAStoreDoNotWaitForEachOther(t *testing.T) {
	s := open(t, pgtest.Need(t, pg, pgErr).NewDatabase(t))
	sqlstore.SetTurnWindow(s, time.Hour)
	now := time.Now()
	turn := acquireIn(t, s, 9, "a", now, escrow.EventCreate)
	if got := soon(t, "b's Acquire, a handler of the same Store as a's turn", func() webhook.Turn {
		return acquireIn(t, s, 9, "b", now, escrow.EventShip)
	}); got.Granted || got.Replayed {
		t.Errorf("b's Acquire during a's turn: %+v, want its names left to a", got)
	}
	again, err := s.Yield(t.Context(), webhook.Yield{Lease: webhook.Lease{TransactionID: 9, Holder: "a", Expires: now.Add(time.Minute)}, Marks: turn.Marks, Now: now})
	if err != nil || !again.Granted || len(again.Pending) != 1 {
		t.Errorf("a's Yield: %+v, %v; want the turn to go on with b's name", again, err)
	}
}

// ordersOf makes an orders table in s's database and returns a TxCallback that adds a
// row to it for each event.
func ordersOf(t *testing.T, s *sqlstore.Store) webhook.Callback {
	t.Helper()
	if _, err := s.DB().ExecContext(t.Context(), `CREATE TABLE orders (transaction_id BIGINT, event TEXT)`); err != nil {
		t.Fatal(err)
	}
	return s.TxCallback(func(ctx context.Context, tx *sql.Tx, ev webhook.ConfirmedEvent) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO orders VALUES ($1, $2)`, ev.TransactionID, string(ev.Name))
		return err
	})
}

// withARefusedOrder opens a's turn on transaction 9 (withATurn) in which a TxCallback
// (returned) added an order, which every commit refuses.
func withARefusedOrder(t *testing.T, window time.Duration) (a, b *sqlstore.Store, turn webhook.Turn, now time.Time, cb webhook.Callback) {
	t.Helper()
	a, b, turn, now = withATurn(t, window)
	return a, b, turn, now, refusedOrder(t, a, now)
}

// refusedOrder has a TxCallback (returned) add an order in a's turn on transaction 9,
// which every commit refuses.
func refusedOrder(t *testing.T, a *sqlstore.Store, now time.Time) webhook.Callback {
	t.Helper()
	cb := ordersOf(t, a)
	for _, stmt := range []string{
		`CREATE FUNCTION escrow_test_refuse() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'refused at commit'; END $$`,
		`CREATE CONSTRAINT TRIGGER escrow_test_refuse AFTER INSERT ON orders DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION escrow_test_refuse()`,
	} {
		if _, err := a.DB().ExecContext(t.Context(), stmt); err != nil {
			t.Fatal(err)
		}
	}
	if err := soon(t, "the TxCallback in its own turn", func() error { return cb(t.Context(), createOf(now)) }); err != nil {
		t.Fatal(err)
	}
	return cb
}

// createOf is the event withATurn's turn hands over, claimed by a.
func createOf(now time.Time) webhook.ConfirmedEvent {
	var ev webhook.ConfirmedEvent
	ev.TransactionID, ev.Name = 9, escrow.EventCreate
	ev.Claim = webhook.Claim{TransactionID: 9, Facts: []string{"create"}, Owner: "a", Expires: now.Add(time.Minute)}
	return ev
}

// yieldCreate ends a's turn on transaction 9, recording create.
func yieldCreate(t *testing.T, a *sqlstore.Store, turn webhook.Turn, now time.Time) error {
	t.Helper()
	return yieldCreateAs(t, a, "a", turn, now)
}

// yieldCreateAs ends holder's turn on transaction 9 in s, recording create.
func yieldCreateAs(t *testing.T, s *sqlstore.Store, holder string, turn webhook.Turn, now time.Time) error {
	t.Helper()
	_, err := s.Yield(t.Context(), webhook.Yield{Lease: webhook.Lease{TransactionID: 9, Holder: holder}, Marks: turn.Marks, Facts: []string{"create"}, Now: now})
	return err
}

// recorded returns what another connection sees of transaction 9: orders and facts.
func recorded(t *testing.T, b *sqlstore.Store) (orders, facts int) {
	t.Helper()
	if err := b.DB().QueryRowContext(t.Context(), `SELECT (SELECT count(*) FROM orders), (SELECT count(*) FROM escrow_webhook_facts WHERE transaction_id = 9)`).Scan(&orders, &facts); err != nil {
		t.Fatal(err)
	}
	return orders, facts
}

// wantUndone ends a's turn on transaction 9 and wants its Yield to report the turn undone,
// and b to see no order and no fact of it.
func wantUndone(t *testing.T, a, b *sqlstore.Store, turn webhook.Turn, now time.Time, what string) {
	t.Helper()
	if err := yieldCreate(t, a, turn, now); !errors.Is(err, webhook.ErrTurnUndone) {
		t.Errorf("the Yield of %s: %v, want ErrTurnUndone", what, err)
	}
	if orders, facts := recorded(t, b); orders != 0 || facts != 0 {
		t.Errorf("after %s and its Yield: %d orders and %d facts, want none", what, orders, facts)
	}
}

// slowLeases makes the commit of a new lease row sleep (slowFacts), so that a call can
// come while a turn's grant commits (awaitSlowTrigger).
func slowLeases(t *testing.T, a *sqlstore.Store) {
	t.Helper()
	slowFacts(t, a.DB(), `CREATE CONSTRAINT TRIGGER escrow_test_slow AFTER INSERT ON escrow_webhook_leases
		DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION escrow_test_slow()`)
}

// inWindowCommit opens a's turn on transaction 9 and returns once its window's commit of
// the grant is under way, held for half a second by a trigger on the lease rows.
func inWindowCommit(t *testing.T) (a, b *sqlstore.Store, turn webhook.Turn, now time.Time) {
	t.Helper()
	a, b = twoReplicas(t)
	slowLeases(t, a)
	turn, now = startTurn(t, a, 50*time.Millisecond)
	awaitSlowTrigger(t, b.DB(), "the window's commit of a's grant")
	return a, b, turn, now
}

// TestTxCallbackCommitsWithItsTurn: a TxCallback run during its claim's open turn makes
// its effects in the turn's database transaction: no other connection sees them, nor the
// fact, until the turn ends, and then sees them with the turn's record of the
// transaction: one commit for the turn.
func TestTxCallbackCommitsWithItsTurn(t *testing.T) {
	a, b, turn, now := withATurn(t, time.Hour)
	cb := ordersOf(t, a)
	if err := soon(t, "the TxCallback in its own turn", func() error { return cb(t.Context(), createOf(now)) }); err != nil {
		t.Fatal(err)
	}
	if orders, facts := recorded(t, b); orders != 0 || facts != 0 {
		t.Errorf("during the turn another connection sees %d orders and %d facts, want none", orders, facts)
	}
	if err := yieldCreate(t, a, turn, now); err != nil {
		t.Fatal(err)
	}
	var known int
	if err := b.DB().QueryRowContext(t.Context(), `SELECT count(*) FROM escrow_webhook_transactions WHERE transaction_id = 9`).Scan(&known); err != nil {
		t.Fatal(err)
	}
	if orders, facts := recorded(t, b); orders != 1 || facts != 1 || known != 1 {
		t.Errorf("after the turn: %d orders, %d facts, %d records of the transaction; want one each", orders, facts, known)
	}
}

// TestTurnWhoseEndFailsUndoesItsTxCallbacks: when the commit of a turn fails, the
// effects its TxCallbacks made go with it, and the Yield says so (ErrTurnUndone) so that
// the Handler hands those events over again: nothing is recorded, the lease is free.
func TestTurnWhoseEndFailsUndoesItsTxCallbacks(t *testing.T) {
	a, b, turn, now, _ := withARefusedOrder(t, time.Hour)
	wantUndone(t, a, b, turn, now, "a turn whose commit failed")
	if got := soon(t, "b's Acquire after a's failed turn", func() webhook.Turn {
		return acquireIn(t, b, 9, "b", now, escrow.EventCreate)
	}); !got.Granted {
		t.Errorf("b's Acquire after a's failed turn: %+v, want the lease", got)
	}
}

// TestTurnUndoneByItsWindowIsReportedByItsYield: a turn whose window's commit failed
// undid its TxCallbacks' effects before its holder came to end it; the holder's Yield,
// meeting a lease another replica took meanwhile, must not record the turn's facts (their
// effects are gone) but report ErrTurnUndone.
func TestTurnUndoneByItsWindowIsReportedByItsYield(t *testing.T) {
	a, b, turn, now, _ := withARefusedOrder(t, time.Second)
	// b waits on the lease row until a's window ends the turn, its commit failing.
	if got := acquireIn(t, b, 9, "b", now.Add(2*time.Minute), escrow.EventCreate); !got.Granted {
		t.Fatalf("b's Acquire once a's turn ended: %+v, want the lease", got)
	}
	wantUndone(t, a, b, turn, now, "a turn its window undid")
}

// TestClosedStoreFreesItsTurns: closing a Store rolls back the turns it has open, as a
// process that exits does: another replica takes the lease at once.
func TestClosedStoreFreesItsTurns(t *testing.T) {
	a, b, _, now := withATurn(t, time.Hour)
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if got := soon(t, "b's Acquire after a closed its store", func() webhook.Turn {
		return acquireIn(t, b, 9, "b", now, escrow.EventCreate)
	}); !got.Granted {
		t.Errorf("b's Acquire after a closed its store: %+v, want the lease", got)
	}
}

// TestStoreForgetsEndedTurns: a Store remembers a turn only while it is open: one ended by
// its Yield, one another Handler of the Store met, those Prune and Close end, are
// forgotten, so that a receiver's memory does not grow with the transactions it saw.
func TestStoreForgetsEndedTurns(t *testing.T) {
	a, _, turn, now := withATurn(t, time.Hour) // transaction 9, open
	if _, err := a.Yield(t.Context(), webhook.Yield{Lease: webhook.Lease{TransactionID: 9, Holder: "a"}, Marks: turn.Marks, Now: now}); err != nil {
		t.Fatal(err)
	}
	acquireIn(t, a, 10, "a", now, escrow.EventCreate)
	acquireIn(t, a, 10, "b", now, escrow.EventCreate) // another Handler of the same Store
	if n := sqlstore.OpenTurns(a); n != 0 {
		t.Errorf("after a turn's Yield and a turn another Handler met: %d turns kept, want none", n)
	}
	acquireIn(t, a, 11, "a", now, escrow.EventCreate)
	if _, err := a.Prune(t.Context(), now); err != nil {
		t.Fatal(err)
	}
	if n := sqlstore.OpenTurns(a); n != 0 {
		t.Errorf("after Prune: %d turns kept, want none", n)
	}
	acquireIn(t, a, 12, "a", now, escrow.EventCreate)
	a.Close()
	if n := sqlstore.OpenTurns(a); n != 0 {
		t.Errorf("after Close: %d turns kept, want none", n)
	}
}

// TestSQLiteTurnsCommitAtOnce: on SQLite, whose write lock covers the whole database, a
// turn's grant is committed at once: another process's write never waits for a turn.
func TestSQLiteTurnsCommitAtOnce(t *testing.T) {
	dsn := "sqlite:" + filepath.Join(t.TempDir(), "webhooks.db")
	a, b := open(t, dsn), open(t, dsn)
	sqlstore.SetTurnWindow(a, time.Hour)
	now := time.Now()
	if turn := acquireIn(t, a, 9, "a", now, escrow.EventCreate); !turn.Granted {
		t.Fatalf("a's Acquire: %+v", turn)
	}
	if got := soon(t, "another process's Acquire", func() webhook.Turn {
		return acquireIn(t, b, 10, "b", now, escrow.EventCreate)
	}); !got.Granted {
		t.Errorf("b's Acquire of another transaction during a's turn: %+v, want the lease", got)
	}
}

// TestTurnOpenDuringPruneKeepsItsLease: Prune commits the grants of the turns open in its
// process, as their leases: the holder's turn goes on and ends as its own, and no other
// replica may take the transaction meanwhile.
func TestTurnOpenDuringPruneKeepsItsLease(t *testing.T) {
	a, b, turn, now := withATurn(t, time.Hour)
	if _, err := a.Prune(t.Context(), now); err != nil {
		t.Fatal(err)
	}
	if got := acquireIn(t, b, 9, "b", now, escrow.EventShip); got.Granted {
		t.Errorf("b's Acquire after Prune, during a's turn: %+v, want the lease a's", got)
	}
	if _, err := a.Yield(t.Context(), webhook.Yield{Lease: webhook.Lease{TransactionID: 9, Holder: "a"}, Marks: turn.Marks, Facts: []string{"create"}, Now: now}); err != nil {
		t.Errorf("a's Yield after Prune: %v, want its turn to end as its own", err)
	}
}

// TestMoreTurnsThanConnectionsAreAllGranted: each open turn holds one of the Store's
// PostgresConns connections, and a turn past its window gives its connection back with
// its grant committed: a Store with more turns under way than connections grants every
// one, and each ends with its Yield.
func TestMoreTurnsThanConnectionsAreAllGranted(t *testing.T) {
	s := open(t, pgtest.Need(t, pg, pgErr).NewDatabase(t))
	now := time.Now()
	turns := make([]webhook.Turn, 2*sqlstore.PostgresConns)
	for i := range turns {
		id := int64(i + 1)
		if turns[i] = soon(t, fmt.Sprint("the Acquire of turn ", id), func() webhook.Turn {
			return acquireIn(t, s, id, "a", now, escrow.EventCreate)
		}); !turns[i].Granted {
			t.Fatalf("turn %d: %+v, want the lease", id, turns[i])
		}
	}
	for i, turn := range turns {
		id := int64(i + 1)
		y := webhook.Yield{Lease: webhook.Lease{TransactionID: id, Holder: "a", Expires: now.Add(time.Minute)}, Marks: turn.Marks, Facts: []string{"create"}, Now: now}
		if _, err := s.Yield(t.Context(), y); err != nil {
			t.Fatalf("turn %d's Yield: %v", id, err)
		}
		if h, err := s.Handed(t.Context(), id); err != nil || !h["create"] {
			t.Errorf("turn %d: handed %v, %v; want create recorded", id, h, err)
		}
	}
}

// TestTurnUndoneBeforeItsLeaseWasRenewedIsReportedByItsYield: a holder that renews its
// lease (Acquire again) after its turn was undone gets a new turn, and its Yield must
// still report the undone one (ErrTurnUndone) rather than record, in the new turn, facts
// whose effects are gone; reported once, the turn that hands the event over again records
// it.
func TestTurnUndoneBeforeItsLeaseWasRenewedIsReportedByItsYield(t *testing.T) {
	a, b, turn, now, cb := withARefusedOrder(t, time.Hour)
	// The renewal commits the turn first, which fails and undoes the order.
	if got := acquireIn(t, a, 9, "a", now); !got.Granted {
		t.Fatalf("a's renewal: %+v, want the lease", got)
	}
	wantUndone(t, a, b, turn, now, "an undone turn, its lease renewed since")
	// What the Handler does next: the lease again, the event handed over again, a Yield
	// that records it. The undone turn is reported once.
	if _, err := a.DB().ExecContext(t.Context(), `DROP TRIGGER escrow_test_refuse ON orders`); err != nil {
		t.Fatal(err)
	}
	again := acquireIn(t, a, 9, "a", now)
	if err := cb(t.Context(), createOf(now)); err != nil {
		t.Fatal(err)
	}
	if err := yieldCreate(t, a, again, now); err != nil {
		t.Errorf("a's Yield of the turn that handed the event over again: %v", err)
	}
	if orders, facts := recorded(t, b); orders != 1 || facts != 1 {
		t.Errorf("after the event was handed over again: %d orders and %d facts, want one each", orders, facts)
	}
}

// TestTurnWithoutTxCallbacksUndoneByItsWindowRecordsItsFacts: a turn whose window's commit
// failed but into which no TxCallback wrote handed its events over outside the database:
// its holder's Yield records their facts (the lease is lost: ErrClaimLost), so that
// they are not handed over a second time.
func TestTurnWithoutTxCallbacksUndoneByItsWindowRecordsItsFacts(t *testing.T) {
	a, b := twoReplicas(t)
	// The first commit that adds a lease row fails (a sequence is not rolled back).
	for _, stmt := range []string{
		`CREATE SEQUENCE escrow_test_commits`,
		`CREATE FUNCTION escrow_test_refuse_once() RETURNS trigger LANGUAGE plpgsql AS $$
			BEGIN IF nextval('escrow_test_commits') <= 1 THEN RAISE EXCEPTION 'refused at commit'; END IF; RETURN NULL; END $$`,
		`CREATE CONSTRAINT TRIGGER escrow_test_refuse AFTER INSERT ON escrow_webhook_leases DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION escrow_test_refuse_once()`,
	} {
		if _, err := a.DB().ExecContext(t.Context(), stmt); err != nil {
			t.Fatal(err)
		}
	}
	sqlstore.SetTurnWindow(a, 50*time.Millisecond)
	now := time.Now()
	turn := acquireIn(t, a, 9, "a", now, escrow.EventCreate)
	if !turn.Granted {
		t.Fatalf("a's Acquire: %+v", turn)
	}
	soon(t, "the window's commit", func() bool {
		for {
			var called bool
			if err := b.DB().QueryRowContext(t.Context(), `SELECT is_called FROM escrow_test_commits`).Scan(&called); err != nil || called {
				return called
			}
			time.Sleep(5 * time.Millisecond)
		}
	})
	if err := yieldCreate(t, a, turn, now); !errors.Is(err, webhook.ErrClaimLost) {
		t.Errorf("a's Yield after its window's commit failed: %v, want ErrClaimLost (the facts recorded)", err)
	}
	if h, err := b.Handed(t.Context(), 9); err != nil || !h["create"] {
		t.Errorf("recorded %v, %v; want create", h, err)
	}
}

// TestTurnUndoneByCloseIsReportedByItsYield: closing a Store made by New on the caller's
// database rolls its open turns back, TxCallbacks' effects with them; a Yield that comes
// after, on the database the caller keeps open, reports ErrTurnUndone and records nothing.
func TestTurnUndoneByCloseIsReportedByItsYield(t *testing.T) {
	dsn := pgtest.Need(t, pg, pgErr).NewDatabase(t)
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	a, err := sqlstore.New(t.Context(), db, sqlstore.Postgres)
	if err != nil {
		t.Fatal(err)
	}
	b := open(t, dsn)
	sqlstore.SetTurnWindow(a, time.Hour)
	now := time.Now()
	turn := acquireIn(t, a, 9, "a", now, escrow.EventCreate)
	if err := ordersOf(t, a)(t.Context(), createOf(now)); err != nil {
		t.Fatal(err)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	wantUndone(t, a, b, turn, now, "a turn Close rolled back")
}

// TestTxCallbackFailingInItsTurnUndoesItselfAlone: in an open turn, a TxCallback whose
// function fails is rolled back to its savepoint and run once: the callbacks before it
// keep their effects, which the turn's end commits with their facts.
func TestTxCallbackFailingInItsTurnUndoesItselfAlone(t *testing.T) {
	a, b, turn, now := withATurn(t, time.Hour)
	record := ordersOf(t, a)
	if err := record(t.Context(), createOf(now)); err != nil {
		t.Fatal(err)
	}
	refused, runs := errors.New("the order system refuses"), 0
	failing := a.TxCallback(func(ctx context.Context, tx *sql.Tx, ev webhook.ConfirmedEvent) error {
		runs++
		if _, err := tx.ExecContext(ctx, `INSERT INTO orders VALUES ($1, 'agree')`, ev.TransactionID); err != nil {
			return err
		}
		return refused
	})
	agree := createOf(now)
	agree.Name, agree.Claim.Facts = escrow.EventAgree, []string{"agree"}
	if err := failing(t.Context(), agree); !errors.Is(err, refused) || runs != 1 {
		t.Errorf("a failing TxCallback: %v after %d runs, want its error after one", err, runs)
	}
	if err := yieldCreate(t, a, turn, now); err != nil {
		t.Fatal(err)
	}
	if orders, facts := recorded(t, b); orders != 1 || facts != 1 {
		t.Errorf("after the turn: %d orders and %d facts, want create's alone", orders, facts)
	}
}

// TestTxCallbackWhileItsTurnCommitsRunsOnItsOwn: a TxCallback that comes while its turn's
// window commits the grant waits for that commit, then runs in a transaction of its own:
// its effects and facts are recorded, not lost with a turn that is over.
func TestTxCallbackWhileItsTurnCommitsRunsOnItsOwn(t *testing.T) {
	a, b, _, now := inWindowCommit(t)
	cb := ordersOf(t, a)
	if err := soon(t, "the TxCallback", func() error { return cb(t.Context(), createOf(now)) }); err != nil {
		t.Fatal(err)
	}
	if orders, facts := recorded(t, b); orders != 1 || facts != 1 {
		t.Errorf("after the TxCallback: %d orders and %d facts, want one each", orders, facts)
	}
}

// TestTurnCutOffAfterItsTxCallbacksIsReportedByItsYield: a turn whose connection the
// server lost after TxCallbacks wrote into it took their effects with it; the holder's
// Yield reports ErrTurnUndone and records nothing (its facts would claim effects that
// never happened).
func TestTurnCutOffAfterItsTxCallbacksIsReportedByItsYield(t *testing.T) {
	a, b, turn, now := withATurn(t, time.Hour)
	if err := ordersOf(t, a)(t.Context(), createOf(now)); err != nil {
		t.Fatal(err)
	}
	cutOffTurns(t, b)
	wantUndone(t, a, b, turn, now, "a turn cut off")
}

// TestYieldWhileItsTurnCommitsRecordsOnItsOwn: a Yield that comes while its turn's window
// commits the grant waits for that commit, then records the turn's facts in a
// transaction of its own.
func TestYieldWhileItsTurnCommitsRecordsOnItsOwn(t *testing.T) {
	a, b, turn, now := inWindowCommit(t)
	if err := soon(t, "the Yield", func() error { return yieldCreate(t, a, turn, now) }); err != nil {
		t.Fatal(err)
	}
	if h, err := b.Handed(t.Context(), 9); err != nil || !h["create"] {
		t.Errorf("after the Yield: recorded %v, %v; want create", h, err)
	}
}

// TestYieldWhileItsTurnFailsToCommitReportsItUndone: a Yield that comes while another
// call commits its turn (the window's timer; here Prune, which commits it the same way)
// waits for that commit; when the commit fails and undoes the turn's TxCallbacks, the
// Yield reports ErrTurnUndone and records nothing, rather than record on its own facts
// whose effects are gone.
func TestYieldWhileItsTurnFailsToCommitReportsItUndone(t *testing.T) {
	a, b := twoReplicas(t)
	slowLeases(t, a)
	turn, now := startTurn(t, a, time.Hour)
	refusedOrder(t, a, now)
	pruned := make(chan error, 1)
	go func() {
		_, err := a.Prune(t.Context(), now)
		pruned <- err
	}()
	awaitSlowTrigger(t, b.DB(), "Prune's commit of a's turn")
	wantUndone(t, a, b, turn, now, "a turn whose commit failed while its Yield waited")
	if err := <-pruned; err != nil {
		t.Error(err)
	}
}

// TestUndoneTurnIsReportedToItsHolderAlone: two Handlers share a Store; a's turn, into
// which a TxCallback wrote, fails to commit when c's delivery for the transaction comes
// and takes the lease. c's turn, ended first, is c's own: its Yield is not told of a's
// undo; a's Yield is, and records nothing.
func TestUndoneTurnIsReportedToItsHolderAlone(t *testing.T) {
	a, b, turn, now, _ := withARefusedOrder(t, time.Hour)
	c := acquireIn(t, a, 9, "c", now, escrow.EventShip)
	if !c.Granted {
		t.Fatalf("c's Acquire, ending a's turn: %+v, want the lease", c)
	}
	if _, err := a.Yield(t.Context(), webhook.Yield{Lease: webhook.Lease{TransactionID: 9, Holder: "c"}, Marks: c.Marks, Now: now}); err != nil {
		t.Errorf("c's Yield after a's turn was undone: %v, want its own turn ended", err)
	}
	wantUndone(t, a, b, turn, now, "a's turn, undone before c's")
}

// TestUndoneTurnsOfTwoHoldersAreEachReported: two Handlers share a Store and each has a
// turn on one transaction undone, with its TxCallback's order, before either yields (a's
// when c takes the lease, c's when a takes it back): each one's Yield reports its own
// turn undone, and neither records its facts.
func TestUndoneTurnsOfTwoHoldersAreEachReported(t *testing.T) {
	a, b, turn, now, cb := withARefusedOrder(t, time.Hour)
	c := acquireIn(t, a, 9, "c", now)
	if !c.Granted {
		t.Fatalf("c's Acquire, ending a's turn: %+v, want the lease", c)
	}
	ev := createOf(now)
	ev.Claim.Owner = "c"
	if err := cb(t.Context(), ev); err != nil {
		t.Fatal(err)
	}
	if got := acquireIn(t, a, 9, "a", now); !got.Granted {
		t.Fatalf("a's Acquire, ending c's turn: %+v, want the lease", got)
	}
	if err := yieldCreateAs(t, a, "c", c, now); !errors.Is(err, webhook.ErrTurnUndone) {
		t.Errorf("c's Yield: %v, want ErrTurnUndone", err)
	}
	wantUndone(t, a, b, turn, now, "a's turn, undone before c's")
}

// TestTurnCutOffAtATxCallbackEndsThere: a TxCallback whose turn's connection is lost
// (the server restarted, idle_in_transaction_session_timeout), before it runs or while it
// runs, can neither make its savepoint nor undo itself to it: the turn ends there, its
// grant gone with the connection, and the holder's Yield records the facts the turn
// handed over outside the database (the lease is lost: ErrClaimLost) rather than fail on
// the broken transaction.
func TestTurnCutOffAtATxCallbackEndsThere(t *testing.T) {
	for name, cutBefore := range map[string]bool{"before it runs": true, "while it runs": false} {
		t.Run(name, func(t *testing.T) {
			a, b, turn, now := withATurn(t, time.Hour)
			if cutBefore {
				cutOffTurns(t, b)
			}
			cut := a.TxCallback(func(ctx context.Context, tx *sql.Tx, ev webhook.ConfirmedEvent) error {
				if _, err := tx.ExecContext(ctx, `SELECT pg_terminate_backend(pg_backend_pid())`); err != nil {
					return err
				}
				return errors.New("the connection outlived pg_terminate_backend")
			})
			agree := createOf(now)
			agree.Name, agree.Claim.Facts = escrow.EventAgree, []string{"agree"}
			if err := cut(t.Context(), agree); err == nil {
				t.Error("a TxCallback cut off: no error")
			}
			if n := sqlstore.OpenTurns(a); n != 0 {
				t.Errorf("after its transaction broke: %d turns kept open, want none", n)
			}
			if err := yieldCreate(t, a, turn, now); !errors.Is(err, webhook.ErrClaimLost) {
				t.Errorf("a's Yield after its turn broke: %v, want ErrClaimLost (the facts recorded)", err)
			}
			if h, err := b.Handed(t.Context(), 9); err != nil || !h["create"] || h["agree"] {
				t.Errorf("recorded %v, %v; want create alone", h, err)
			}
		})
	}
}
