package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"sync"
	"time"
)

// An open turn is a PostgreSQL lease granted in a database transaction left open until
// the turn's Yield commits it ("A turn is one commit on PostgreSQL" in the package doc).
// Any other call of this Store about the transaction first commits the grant (settle):
// only the holder's Yield uses the open transaction.
type openTurn struct {
	mu     sync.Mutex
	tx     *sql.Tx // nil once committed or ended
	holder string
	timer  *time.Timer
}

// openTurns are a Store's open turns, by transaction id.
type openTurns struct {
	mu sync.Mutex
	m  map[int64]*openTurn
}

// turnWindow is how long a turn keeps its grant uncommitted. Another replica's delivery
// for the transaction waits on the lease row at most that long; a turn is one fetch and
// its callbacks, tens of milliseconds.
const turnWindow = 200 * time.Millisecond

// open keeps tx as the open turn of id, committing its grant after the store's window.
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
	t.timer = time.AfterFunc(s.window, func() {
		if s.take(id, t) {
			t.end(true)
		}
	})
}

// take removes t, the open turn of id, from the map, and reports whether it was there:
// whoever takes it ends it.
func (s *Store) take(id int64, t *openTurn) bool {
	s.turns.mu.Lock()
	defer s.turns.mu.Unlock()
	if s.turns.m[id] != t {
		return false
	}
	delete(s.turns.m, id)
	return true
}

// takeAll removes every open turn from the map and returns them.
func (s *Store) takeAll() map[int64]*openTurn {
	s.turns.mu.Lock()
	defer s.turns.mu.Unlock()
	m := s.turns.m
	s.turns.m = nil
	return m
}

// turnOf returns id's open turn, still in the map, or nil.
func (s *Store) turnOf(id int64) *openTurn {
	s.turns.mu.Lock()
	defer s.turns.mu.Unlock()
	return s.turns.m[id]
}

// settle commits the grant of id's open turn, if any: the lease becomes a committed one,
// so that a call that reads or waits on its row sees it held.
func (s *Store) settle(id int64) {
	if t := s.turnOf(id); t != nil && s.take(id, t) {
		t.end(true)
	}
}

// end commits what the open turn did so far (its grant), or rolls it back; a commit that
// fails leaves the grant rolled back, as when the process dies: the lease is free.
func (t *openTurn) end(commit bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.timer.Stop()
	switch {
	case t.tx == nil:
	case commit:
		t.tx.Commit()
	default:
		t.tx.Rollback()
	}
	t.tx = nil
}

// endTurn runs fn in the open turn of id held by holder and commits it, if there is one;
// ok reports whether there was.
func (s *Store) endTurn(ctx context.Context, id int64, holder string, fn func(tx *sql.Tx) error) (ok bool, err error) {
	t := s.turnOf(id)
	if t == nil || t.holder != holder || !s.take(id, t) {
		return false, nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.timer.Stop()
	tx := t.tx
	if tx == nil {
		return false, nil // committed by its window meanwhile
	}
	t.tx = nil
	defer tx.Rollback()
	// Under a savepoint: if the turn's end fails, the grant is committed without it and
	// the lease stays with its holder, who ends the turn again, as with a committed lease.
	if _, err := tx.ExecContext(ctx, `SAVEPOINT escrow_turn_end`); err != nil {
		return true, fmt.Errorf("sqlstore: %w", err)
	}
	err = fn(tx)
	if err != nil {
		if _, rerr := tx.ExecContext(ctx, `ROLLBACK TO SAVEPOINT escrow_turn_end`); rerr != nil {
			return true, err
		}
	}
	if cerr := tx.Commit(); cerr != nil && err == nil {
		err = fmt.Errorf("sqlstore: %w", cerr)
	}
	return true, err
}

// settleAll commits the grants of every open turn.
func (s *Store) settleAll() {
	for _, t := range s.takeAll() {
		t.end(true)
	}
}

// closeTurns rolls back the open turns: their grants are undone, as when the process
// dies.
func (s *Store) closeTurns() {
	for _, t := range s.takeAll() {
		t.end(false)
	}
}

// keepOpen reports whether a lease granted in a transaction is left open as a turn.
func (s *Store) keepOpen() bool { return s.d == Postgres && s.window > 0 }
