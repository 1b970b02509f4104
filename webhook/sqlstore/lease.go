package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"time"

	escrow "github.com/escrowkit/escrow-go"
	"github.com/escrowkit/escrow-go/webhook"
)

// Transactions' finished column.
const (
	unfinished = 0
	finished   = 1
	pruned     = 2 // a tombstone: its facts and lease were deleted
)

// forUpdate locks the rows a PostgreSQL SELECT reads until the transaction ends; SQLite
// transactions (immediate) hold the database's write lock already.
func (s *Store) forUpdate() string {
	if s.d == Postgres {
		return " FOR UPDATE"
	}
	return ""
}

// millis stores a time as Unix milliseconds, the zero time as 0.
func millis(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMilli()
}

func fromMillis(ms int64) time.Time {
	if ms == 0 {
		return time.Time{}
	}
	return time.UnixMilli(ms)
}

func joinNames(ns []escrow.EventName) string {
	out := make([]string, len(ns))
	for i, n := range ns {
		out[i] = string(n)
	}
	return strings.Join(out, " ") // names are validated: a-z, 0-9 and "_"
}

// splitNames reads names back, each once, at most webhook.MaxNames of them.
func splitNames(s string) []escrow.EventName {
	var out []escrow.EventName
	for _, f := range strings.Fields(s) {
		if n := escrow.EventName(f); len(out) < webhook.MaxNames && !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}

// loadLease reads and locks a transaction's lease row, creating it if missing, and how
// finished the transaction is.
func (s *Store) loadLease(ctx context.Context, tx *sql.Tx, id int64) (st webhook.LeaseState, state int, err error) {
	if _, err := tx.ExecContext(ctx, s.q(`INSERT INTO escrow_webhook_leases (transaction_id) VALUES (?) ON CONFLICT (transaction_id) DO NOTHING`), id); err != nil {
		return st, 0, fmt.Errorf("sqlstore: %w", err)
	}
	var expires, notBefore, hold int64
	var pending, tried string
	var fin sql.NullInt64
	lock := ""
	if s.d == Postgres {
		lock = " FOR UPDATE OF l"
	}
	err = tx.QueryRowContext(ctx, s.q(`SELECT l.holder, l.expires, l.marks, l.pending, l.not_before, l.hold, l.tried, t.finished
		FROM escrow_webhook_leases l LEFT JOIN escrow_webhook_transactions t ON t.transaction_id = l.transaction_id
		WHERE l.transaction_id = ?`+lock), id).Scan(&st.Holder, &expires, &st.Marks, &pending, &notBefore, &hold, &tried, &fin)
	if err != nil {
		return st, 0, fmt.Errorf("sqlstore: %w", err)
	}
	st.Expires, st.Pending = fromMillis(expires), splitNames(pending)
	st.Pace = webhook.Pace{NotBefore: fromMillis(notBefore), Hold: time.Duration(hold) * time.Millisecond, Tried: splitNames(tried)}
	return st, int(fin.Int64), nil
}

// saveLease writes a lease row back, or deletes it when it holds nothing worth keeping.
func (s *Store) saveLease(ctx context.Context, tx *sql.Tx, id int64, st webhook.LeaseState, now time.Time) error {
	var err error
	if st.Idle(now) {
		_, err = tx.ExecContext(ctx, s.q(`DELETE FROM escrow_webhook_leases WHERE transaction_id = ?`), id)
	} else {
		_, err = tx.ExecContext(ctx, s.q(`UPDATE escrow_webhook_leases SET holder = ?, expires = ?, marks = ?, pending = ?, not_before = ?, hold = ?, tried = ?
			WHERE transaction_id = ?`), st.Holder, millis(st.Expires), st.Marks, joinNames(st.Pending),
			millis(st.Pace.NotBefore), st.Pace.Hold.Milliseconds(), joinNames(st.Pace.Tried), id)
	}
	if err != nil {
		return fmt.Errorf("sqlstore: %w", err)
	}
	return nil
}

// Acquire grants l or records names for its holder, as webhook.LeaseState.Acquire does,
// in one database transaction. It first reads the transaction's record: a pruned
// transaction, or names that are replays of its facts (webhook.Replayed), end it there,
// read only (rolled back: nothing to commit). Otherwise one statement inserts or updates
// the lease row under its row lock (one commit), adding for the holder only the names
// not waiting for it already; if that granted the lease, on PostgreSQL the record is read
// again by a statement of its own, which sees every turn that ended before (a
// statement's snapshot is taken when it starts, after the lock wait), and the transaction
// is left open as the turn (turn.go), committed by its Yield. SQLite's immediate
// transaction holds the write lock from its start: the first read is current.
func (s *Store) Acquire(ctx context.Context, l webhook.Lease, names []escrow.EventName, now time.Time) (webhook.Turn, error) {
	s.settle(l.TransactionID) // a turn of this process is met as a committed lease
	// An open turn's transaction outlives the call (and the handler's context: its end
	// records what was handed over, whatever ended the handler).
	tx, err := s.db.BeginTx(context.WithoutCancel(ctx), nil)
	if err != nil {
		return webhook.Turn{}, fmt.Errorf("sqlstore: %w", err)
	}
	kept := false
	defer func() {
		if !kept {
			// Nothing to undo once committed; a rollback that fails had no transaction
			// left to undo (database/sql drops its connection, the server rolls back).
			_ = tx.Rollback()
		}
	}()
	a := acquisition{s: s, tx: tx, l: l, names: names, now: now}
	turn, end, err := a.run(ctx)
	switch {
	case err != nil || end == rollBackAcquire:
		return turn, err
	case end == keepAsTurn:
		s.open(l.TransactionID, l.Holder, tx)
		kept = true
		return turn, nil
	}
	return turn, s.commit(tx)
}

// acquisition is one Acquire call within its database transaction tx.
type acquisition struct {
	s     *Store
	tx    *sql.Tx
	l     webhook.Lease
	names []escrow.EventName
	now   time.Time
}

// acquireEnd is what Acquire does with its database transaction once the turn is decided.
type acquireEnd int

const (
	rollBackAcquire acquireEnd = iota // read only, or the lease not taken: nothing to commit
	commitAcquire                     // names recorded for the holder, or a lease taken outside a turn
	keepAsTurn                        // the lease is taken and the transaction is the turn (turn.go)
)

// run decides the turn: it ends at the record when the transaction is unknown (and
// l.IfKnown), pruned or the names replays; otherwise it leases.
func (a *acquisition) run(ctx context.Context) (webhook.Turn, acquireEnd, error) {
	r, err := a.s.read(ctx, a.tx, a.l.TransactionID, a.now)
	if err != nil {
		return webhook.Turn{}, rollBackAcquire, err
	}
	if !r.known && a.l.IfKnown {
		return webhook.Turn{Unknown: true}, rollBackAcquire, nil
	}
	if turn, ended := endedBy(r, a.names); ended {
		return turn, rollBackAcquire, nil // a pruned transaction is never leased
	}
	// A name waiting for the holder already stays there until the holder takes the
	// pending names, and then it is handed to it: it need not be added again.
	add := slices.DeleteFunc(slices.Clone(a.names), func(n escrow.EventName) bool { return slices.Contains(r.pending, n) })
	turn, err := a.s.lease(ctx, a.tx, a.l, add, a.now)
	switch {
	case err != nil:
		return webhook.Turn{}, rollBackAcquire, err
	case !turn.Granted:
		return turn, commitAcquire, nil // the names were left to the holder
	}
	return a.granted(ctx, turn, r)
}

// granted completes a granted lease's turn with what was handed over. On PostgreSQL it
// reads the record again first: the turn the lease waited for may have pruned the
// transaction or recorded what makes the names replays, and then the lease is not taken
// (rolled back).
func (a *acquisition) granted(ctx context.Context, turn webhook.Turn, r record) (webhook.Turn, acquireEnd, error) {
	if a.s.d == Postgres {
		var err error
		if r, err = a.s.read(ctx, a.tx, a.l.TransactionID, a.now); err != nil {
			return webhook.Turn{}, rollBackAcquire, err
		}
		if ended, ok := endedBy(r, a.names); ok {
			return ended, rollBackAcquire, nil
		}
	}
	turn.Handed = r.handed
	if a.s.keepOpen() {
		return turn, keepAsTurn, nil
	}
	return turn, commitAcquire, nil
}

// endedBy is the turn a transaction's record gives names without a lease: pruned, or
// replays of what was handed over; false when the record leaves them to a lease.
func endedBy(r record, names []escrow.EventName) (webhook.Turn, bool) {
	switch {
	case r.state == pruned:
		return webhook.Turn{Pruned: true}, true
	case webhook.Replayed(names, r.handed):
		return webhook.Turn{Replayed: true, Handed: r.handed}, true
	}
	return webhook.Turn{}, false
}

// lease inserts or updates the lease row in one statement: l is granted if the lease is
// free, l.Holder's or expired at now; otherwise the names and a request are recorded for
// the holder. The Turn returned holds the lease's marks, pending names and pace.
func (s *Store) lease(ctx context.Context, tx *sql.Tx, l webhook.Lease, names []escrow.EventName, now time.Time) (webhook.Turn, error) {
	free := `(l.holder = '' OR l.holder = excluded.holder OR l.expires <= ?)`
	q := s.q(`INSERT INTO escrow_webhook_leases AS l (transaction_id, holder, expires) VALUES (?, ?, ?)
		ON CONFLICT (transaction_id) DO UPDATE SET
			holder = CASE WHEN ` + free + ` THEN excluded.holder ELSE l.holder END,
			expires = CASE WHEN ` + free + ` THEN excluded.expires ELSE l.expires END,
			marks = CASE WHEN ` + free + ` THEN l.marks ELSE l.marks + 1 END,
			pending = CASE WHEN ` + free + ` OR ? = '' THEN l.pending
				WHEN l.pending = '' THEN ?
				WHEN length(l.pending) < ? THEN l.pending || ' ' || ?
				ELSE l.pending END
		RETURNING holder, marks, pending, not_before, hold, tried`)
	at, delivered := now.UnixMilli(), joinNames(names)
	var holder, pending, tried string
	var marks, notBefore, hold int64
	if err := tx.QueryRowContext(ctx, q, l.TransactionID, l.Holder, millis(l.Expires), at, at, at, at, delivered, delivered, maxPendingText, delivered).
		Scan(&holder, &marks, &pending, &notBefore, &hold, &tried); err != nil {
		return webhook.Turn{}, fmt.Errorf("sqlstore: %w", err)
	}
	if holder != l.Holder {
		return webhook.Turn{}, nil
	}
	return webhook.Turn{Granted: true, Marks: marks, Pending: splitNames(pending),
		Pace: webhook.Pace{NotBefore: fromMillis(notBefore), Hold: time.Duration(hold) * time.Millisecond, Tried: splitNames(tried)}}, nil
}

// record is what the store holds of a transaction, as Acquire and Yield read it.
type record struct {
	known   bool // tracked, facts of it recorded, or its lease held live
	state   int  // how finished: unfinished (also when unknown), finished or pruned
	handed  map[string]bool
	pending []escrow.EventName // names waiting for the lease's holder
}

// read reads a transaction's record at now in one statement.
func (s *Store) read(ctx context.Context, tx *sql.Tx, id int64, now time.Time) (record, error) {
	agg := "string_agg"
	if s.d == SQLite {
		agg = "group_concat"
	}
	var fin sql.NullInt64
	var facts, pending sql.NullString
	var held bool
	if err := tx.QueryRowContext(ctx, s.q(`SELECT (SELECT finished FROM escrow_webhook_transactions WHERE transaction_id = ?),
		(SELECT `+agg+`(fact, ' ') FROM escrow_webhook_facts WHERE transaction_id = ? AND done = 1),
		EXISTS (SELECT 1 FROM escrow_webhook_leases WHERE transaction_id = ? AND holder <> '' AND expires > ?),
		(SELECT pending FROM escrow_webhook_leases WHERE transaction_id = ?)`), id, id, id, now.UnixMilli(), id).
		Scan(&fin, &facts, &held, &pending); err != nil {
		return record{}, fmt.Errorf("sqlstore: %w", err)
	}
	r := record{state: int(fin.Int64), handed: make(map[string]bool), pending: splitNames(pending.String)}
	for _, k := range strings.Fields(facts.String) {
		r.handed[k] = true
	}
	r.known = fin.Valid || len(r.handed) > 0 || held
	return r, nil
}

func (s *Store) commit(tx *sql.Tx) error {
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("sqlstore: %w", err)
	}
	return nil
}

// maxPendingText bounds the names a lease row keeps for its holder, as text: a storm of
// replays adds nothing once it is reached (the names are read back distinct, at most
// webhook.MaxNames). It holds MaxNames names of the longest kind (a hint: 64 characters).
const maxPendingText = 1600

// Yield records y's facts, the transaction known (finished if y.Finished), and ends or
// extends the turn (webhook.LeaseState.Yield), in one database transaction: one commit,
// the turn's open transaction's if it is still open (turn.go).
func (s *Store) Yield(ctx context.Context, y webhook.Yield) (webhook.Turn, error) {
	var turn webhook.Turn
	var lost error
	end := func(tx *sql.Tx) (err error) {
		turn, lost, err = s.yield(ctx, tx, y)
		return err
	}
	ok, err := s.endTurn(ctx, y.TransactionID, y.Holder, end)
	if !ok {
		err = s.inTx(ctx, end)
	}
	switch {
	case err != nil:
		return webhook.Turn{}, err
	case lost != nil:
		return webhook.Turn{}, lost
	}
	return turn, nil
}

// inTx runs fn in a database transaction and commits it.
func (s *Store) inTx(ctx context.Context, fn func(tx *sql.Tx) error) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("sqlstore: %w", err)
	}
	defer tx.Rollback()
	if err := fn(tx); err != nil {
		return err
	}
	return s.commit(tx)
}

// yield is Yield's work within tx; lost is ErrClaimLost when the lease was taken over
// (the facts are recorded all the same).
func (s *Store) yield(ctx context.Context, tx *sql.Tx, y webhook.Yield) (t webhook.Turn, lost, err error) {
	st, state, err := s.loadLease(ctx, tx, y.TransactionID)
	if err != nil {
		return webhook.Turn{}, nil, err
	}
	if state == pruned {
		return webhook.Turn{}, nil, nil // pruned meanwhile: everything was handed over
	}
	if err := s.recordYield(ctx, tx, y); err != nil {
		return webhook.Turn{}, nil, err
	}
	var handed map[string]bool // read once, if names delivered meanwhile need it
	replayed := func(names []escrow.EventName) bool {
		if handed == nil && err == nil {
			var r record
			r, err = s.read(ctx, tx, y.TransactionID, y.Now)
			handed = r.handed
		}
		return webhook.Replayed(names, handed)
	}
	again, pending, lost := st.Yield(y, replayed)
	if err != nil {
		return webhook.Turn{}, nil, err
	}
	if err := s.saveLease(ctx, tx, y.TransactionID, st, y.Now); err != nil {
		return webhook.Turn{}, nil, err
	}
	return webhook.Turn{Granted: again, Marks: st.Marks, Pending: pending}, lost, nil
}

// recordYield records y's facts and makes the transaction known, finished if y.Finished.
func (s *Store) recordYield(ctx context.Context, tx *sql.Tx, y webhook.Yield) error {
	if _, err := s.recordFacts(ctx, tx, y.TransactionID, y.Holder, y.Facts); err != nil {
		return err
	}
	return s.known(ctx, tx, y, time.Now())
}

// factChunk bounds the rows of one INSERT of facts.
const factChunk = 200

// recordFacts inserts facts as done, those not recorded yet, and returns how many it
// inserted.
func (s *Store) recordFacts(ctx context.Context, q querier, id int64, holder string, facts []string) (int64, error) {
	var n int64
	for len(facts) > 0 {
		chunk := facts[:min(len(facts), factChunk)]
		facts = facts[len(chunk):]
		args := make([]any, 0, 3*len(chunk))
		for _, k := range chunk {
			args = append(args, id, k, holder)
		}
		values := strings.TrimSuffix(strings.Repeat("(?, ?, ?, 0, 1), ", len(chunk)), ", ")
		res, err := q.ExecContext(ctx, s.q(`INSERT INTO escrow_webhook_facts (transaction_id, fact, owner, expires, done) VALUES `+values+`
			ON CONFLICT (transaction_id, fact) DO NOTHING`), args...)
		if err != nil {
			return 0, fmt.Errorf("sqlstore: %w", err)
		}
		m, err := res.RowsAffected()
		if err != nil {
			return 0, fmt.Errorf("sqlstore: %w", err)
		}
		n += m
	}
	return n, nil
}

// known makes y's transaction known if y handed facts over or finished it, finished at
// now if y.Finished; a finished or pruned one stays so.
func (s *Store) known(ctx context.Context, q querier, y webhook.Yield, now time.Time) error {
	if len(y.Facts) == 0 && !y.Finished {
		return nil
	}
	id, state, at := y.TransactionID, unfinished, int64(0)
	if y.Finished {
		state, at = finished, now.UnixMilli()
	}
	if _, err := q.ExecContext(ctx, s.q(`INSERT INTO escrow_webhook_transactions (transaction_id, finished, finished_at) VALUES (?, ?, ?)
		ON CONFLICT (transaction_id) DO UPDATE SET finished = excluded.finished, finished_at = excluded.finished_at
		WHERE escrow_webhook_transactions.finished = 0 AND excluded.finished = 1`), id, state, at); err != nil {
		return fmt.Errorf("sqlstore: %w", err)
	}
	return nil
}

// Prune deletes the facts and leases of transactions finished before finishedBefore,
// leaving their rows as tombstones, deletes tombstones older than the horizon and idle
// leases, in one database transaction.
func (s *Store) Prune(ctx context.Context, finishedBefore time.Time) (int64, error) {
	s.settleAll() // the leases of this process's open turns, committed, are pruned as such
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, fmt.Errorf("sqlstore: %w", err)
	}
	defer tx.Rollback()
	n, err := s.pruneFinished(ctx, tx, finishedBefore)
	if err == nil {
		err = s.pruneLapsed(ctx, tx, finishedBefore)
	}
	if err == nil {
		err = tx.Commit()
	}
	if err != nil {
		return 0, fmt.Errorf("sqlstore: pruning: %w", err)
	}
	return n, nil
}

// pruneFinished turns the transactions finished before finishedBefore into tombstones,
// deleting their facts and leases, and returns how many it turned.
func (s *Store) pruneFinished(ctx context.Context, tx *sql.Tx, finishedBefore time.Time) (int64, error) {
	before := finishedBefore.UnixMilli()
	old := `SELECT transaction_id FROM escrow_webhook_transactions WHERE finished = 1 AND finished_at < ?`
	for _, stmt := range []string{
		`DELETE FROM escrow_webhook_facts WHERE transaction_id IN (` + old + `)`,
		`DELETE FROM escrow_webhook_leases WHERE transaction_id IN (` + old + `)`,
	} {
		if _, err := tx.ExecContext(ctx, s.q(stmt), before); err != nil {
			return 0, err
		}
	}
	res, err := tx.ExecContext(ctx, s.q(`UPDATE escrow_webhook_transactions SET finished = 2 WHERE finished = 1 AND finished_at < ?`), before)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// pruneLapsed deletes the tombstones older than the horizon and the idle leases.
func (s *Store) pruneLapsed(ctx context.Context, tx *sql.Tx, finishedBefore time.Time) error {
	if _, err := tx.ExecContext(ctx, s.q(`DELETE FROM escrow_webhook_transactions WHERE finished = 2 AND finished_at < ?`),
		finishedBefore.Add(-webhook.TombstoneHorizon).UnixMilli()); err != nil {
		return err
	}
	// Idle as webhook.LeaseState.Idle says: no live holder, no names waiting, no pause ahead.
	before := finishedBefore.UnixMilli()
	_, err := tx.ExecContext(ctx, s.q(`DELETE FROM escrow_webhook_leases WHERE (holder = '' OR expires <= ?) AND pending = '' AND not_before <= ?`),
		before, before)
	return err
}
