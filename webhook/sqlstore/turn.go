package sqlstore

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"maps"
	"sync"
	"time"

	"github.com/escrowkit/escrow-go/webhook"
)

// An open turn is a PostgreSQL lease granted in a database transaction left open until
// the turn's Yield commits it ("A turn is one commit on PostgreSQL" in the package doc).
// TxCallbacks of the turn's holder run in it too, each under a savepoint, so that their
// effects and facts commit with the turn's end. Any other call of this Store about the
// transaction first commits it (settle), as the window's timer does: only the holder's
// callbacks and Yield use the open transaction.
type openTurn struct {
	mu     sync.Mutex // held while the transaction is used or ended
	tx     *sql.Tx    // nil once committed or ended
	holder string
	timer  *time.Timer
	joined bool // a TxCallback's effects are in tx
}

// openTurns are a Store's open turns, by transaction id. A turn stays in the map until
// it has ended, so that a Yield that finds none knows that any end of it is over.
type openTurns struct {
	mu sync.Mutex
	m  map[int64]*openTurn
	// undone are turns whose callbacks' effects were undone with them (their end's
	// commit failed, the store closed, or their transaction broke): the holder's next
	// Yield of the transaction reports it. They are kept by holder too: Handlers sharing
	// the Store take turns on one transaction, and an undo is reported to the turn that
	// was undone, not to whichever holder yields first.
	undone map[heldBy]bool
}

// heldBy names a turn: its transaction and its holder.
type heldBy struct {
	id     int64
	holder string
}

// turnWindow is how long a turn keeps its grant uncommitted. Another replica's delivery
// for the transaction waits on the lease row at most that long (and for a TxCallback
// running when it ends); a turn is one fetch and its callbacks, tens of milliseconds.
const turnWindow = 200 * time.Millisecond

// open keeps tx as the open turn of id, committing it after the store's window.
func (s *Store) open(id int64, holder string, tx *sql.Tx) {
	t := &openTurn{tx: tx, holder: holder}
	t.mu.Lock() // until its timer is set
	defer t.mu.Unlock()
	s.turns.mu.Lock()
	if s.turns.m == nil {
		s.turns.m = make(map[int64]*openTurn)
	}
	s.turns.m[id] = t
	s.turns.mu.Unlock()
	t.timer = time.AfterFunc(s.window, func() { s.end(id, t, commitTurn) })
}

// turnOf returns id's open turn, or nil.
func (s *Store) turnOf(id int64) *openTurn {
	s.turns.mu.Lock()
	defer s.turns.mu.Unlock()
	return s.turns.m[id]
}

// forget removes t, the turn of id, from the map once it has ended.
func (s *Store) forget(id int64, t *openTurn) {
	s.turns.mu.Lock()
	defer s.turns.mu.Unlock()
	if s.turns.m[id] == t {
		delete(s.turns.m, id)
	}
}

// ending says how end ends a turn.
type ending int

const (
	commitTurn   ending = iota // commit what it did so far
	rollBackTurn               // undo it, as when the process dies
)

// end ends the open turn t of id as how says; a commit that fails leaves it rolled back,
// as when the process dies: the lease is free. Callbacks' effects undone so are noted
// for the holder's Yield. Whoever finds t's transaction still open ends it.
func (s *Store) end(id int64, t *openTurn, how ending) {
	t.mu.Lock()
	defer t.mu.Unlock()
	s.endLocked(id, t, how)
}

// endLocked is end with t.mu held.
func (s *Store) endLocked(id int64, t *openTurn, how ending) {
	defer s.forget(id, t)
	if t.tx == nil {
		return
	}
	t.timer.Stop()
	var err error
	if how == commitTurn {
		err = t.tx.Commit()
	} else {
		// A rollback that fails had no transaction left to undo: database/sql drops the
		// connection it failed on, and the server rolls back what it held.
		_ = t.tx.Rollback()
	}
	t.tx = nil
	if t.joined && (err != nil || how == rollBackTurn) {
		s.turns.mu.Lock()
		if s.turns.undone == nil {
			s.turns.undone = make(map[heldBy]bool)
		}
		s.turns.undone[heldBy{id, t.holder}] = true
		s.turns.mu.Unlock()
	}
}

// settle commits id's open turn, if any: the lease becomes a committed one, so that a
// call that reads or waits on its row sees it held.
func (s *Store) settle(id int64) {
	if t := s.turnOf(id); t != nil {
		s.end(id, t, commitTurn)
	}
}

// wasUndone reports, once, whether holder's turn of id was undone with its callbacks'
// effects.
func (s *Store) wasUndone(id int64, holder string) bool {
	s.turns.mu.Lock()
	defer s.turns.mu.Unlock()
	k := heldBy{id, holder}
	if s.turns.undone[k] {
		delete(s.turns.undone, k)
		return true
	}
	return false
}

// inTurn runs fn in holder's open turn of id, if there is one (ok), under a savepoint
// that fn's failure rolls back to: what fn did commits with the turn, or is undone with
// it. The window's timer, or another call's settle, waits for fn. A savepoint statement
// that fails leaves the turn's transaction unusable (aborted, or its connection gone):
// the turn is ended there, rolled back, and reported undone if callbacks had joined it.
func (s *Store) inTurn(ctx context.Context, id int64, holder string, fn func(tx *sql.Tx) error) (ok bool, err error) {
	t := s.turnOf(id)
	if t == nil || t.holder != holder {
		return false, nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.tx == nil {
		return false, nil // committed meanwhile: a lease as any other
	}
	broken := func(err error) error {
		s.endLocked(id, t, rollBackTurn)
		return err
	}
	// The savepoint's statements are the turn's bookkeeping, not fn's work: ctx's end
	// cuts fn, not them, so that only a broken transaction fails them.
	keep := context.WithoutCancel(ctx)
	if _, err := t.tx.ExecContext(keep, `SAVEPOINT escrow_callback`); err != nil {
		return true, broken(fmt.Errorf("sqlstore: %w", err))
	}
	if err := fn(t.tx); err != nil {
		if _, rerr := t.tx.ExecContext(keep, `ROLLBACK TO SAVEPOINT escrow_callback`); rerr != nil {
			return true, broken(fmt.Errorf("%w (sqlstore: undoing it failed, and its turn with it: %w)", err, rerr))
		}
		return true, err
	}
	if _, err := t.tx.ExecContext(keep, `RELEASE SAVEPOINT escrow_callback`); err != nil {
		return true, broken(fmt.Errorf("sqlstore: %w", err))
	}
	t.joined = true // handed over: the turn's end commits it or undoes it
	return true, nil
}

// endTurn runs fn in the open turn of id held by holder and commits it, if there is one;
// ok reports whether there was. A turn of holder's whose end undid its TxCallbacks'
// effects (now or before: its window's commit failed) is webhook.ErrTurnUndone, and
// nothing of this end is recorded: the handler hands those events over again first.
func (s *Store) endTurn(ctx context.Context, id int64, holder string, fn func(tx *sql.Tx) error) (ok bool, err error) {
	if !s.wasUndone(id, holder) {
		if t := s.turnOf(id); t != nil && t.holder == holder {
			if ok, err = s.endOpen(ctx, id, t, fn); ok {
				return ok, err
			}
		}
		if !s.wasUndone(id, holder) { // its window may have ended it meanwhile
			return false, nil
		}
	}
	s.settle(id) // a grant renewed since: the lease stays the holder's, committed
	return true, fmt.Errorf("sqlstore: %w", webhook.ErrTurnUndone)
}

// endOpen is endTurn with t, the open turn: ok is false if it was ended meanwhile.
func (s *Store) endOpen(ctx context.Context, id int64, t *openTurn, fn func(tx *sql.Tx) error) (ok bool, err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	defer s.forget(id, t)
	tx := t.tx
	if tx == nil {
		return false, nil // ended by its window meanwhile
	}
	t.timer.Stop()
	t.tx = nil
	// Once committed there is nothing to roll back; on the paths that fail before, a
	// rollback that fails had no transaction left to undo (its connection is dropped,
	// and the server rolls back what it held). Either way the turn's end is reported.
	defer func() { _ = tx.Rollback() }()
	// Under a savepoint: if the turn's end fails, the grant (and the callbacks' effects)
	// is committed without it and the lease stays with its holder, who ends the turn
	// again, as with a committed lease.
	if _, err := tx.ExecContext(ctx, `SAVEPOINT escrow_turn_end`); err != nil {
		return true, undone(t, fmt.Errorf("sqlstore: %w", err))
	}
	err = fn(tx)
	if err != nil {
		if _, rerr := tx.ExecContext(context.WithoutCancel(ctx), `ROLLBACK TO SAVEPOINT escrow_turn_end`); rerr != nil {
			return true, undone(t, fmt.Errorf("%w (sqlstore: undoing it failed, and the turn with it: %w)", err, rerr))
		}
	}
	if cerr := tx.Commit(); cerr != nil {
		return true, undone(t, cmp.Or(err, fmt.Errorf("sqlstore: %w", cerr)))
	}
	return true, err
}

// undone is the error of a turn's end that left its transaction rolled back: it undid
// the callbacks' effects if any joined it.
func undone(t *openTurn, err error) error {
	if t.joined {
		return fmt.Errorf("%w: %w", webhook.ErrTurnUndone, err)
	}
	return err
}

// settleAll commits every open turn.
func (s *Store) settleAll() {
	for id, t := range s.openNow() {
		s.end(id, t, commitTurn)
	}
}

// closeTurns rolls back the open turns: their grants are undone, as when the process
// dies.
func (s *Store) closeTurns() {
	for id, t := range s.openNow() {
		s.end(id, t, rollBackTurn)
	}
}

// openNow returns the open turns at this moment.
func (s *Store) openNow() map[int64]*openTurn {
	s.turns.mu.Lock()
	defer s.turns.mu.Unlock()
	return maps.Clone(s.turns.m)
}

// keepOpen reports whether a lease granted in a transaction is left open as a turn.
func (s *Store) keepOpen() bool { return s.d == Postgres && s.window > 0 }
