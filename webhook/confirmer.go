package webhook

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"time"

	escrow "github.com/escrowkit/escrow-go"
)

// confirmer runs a transaction's turns: it takes the transaction's lease in the Store,
// fetches the transaction (within the account's allowance), compares what it shows with
// the facts recorded, hands what is new to the callback in order, and records it as the
// turn ends. It keeps no state of its own between turns: a turn's is its batch's, the
// rest is the Store's. The scheduler decides when a batch runs (scheduler.go).
type confirmer struct {
	opt  *Options
	fn   Callback
	log  *slog.Logger
	obs  Observer
	ctx  context.Context // ends when Shutdown gives up waiting
	acct *account
	door *door // learns the replays a turn finds
}

// batch is the work of one transaction's turn: the coalesced deliveries of a
// transaction, or a state the reconciler read, and the lease it is done under.
type batch struct {
	id     int64
	q      *txQueue
	kind   qkind // what the scheduler knew of the transaction as this try began
	events []escrow.EventName
	tx     *escrow.Transaction
	fetch  bool // whether tx must be (re)fetched before use
	listed bool // tx was listed after the deliveries came: their hints are passed on from it
	// tracked: the store tracks the transaction as unfinished (a reconciler's recheck), so
	// finding it unreadable ends the tracking. Deliveries never create such a record.
	tracked bool
	ask     leaseAsk // whether the lease is asked for only if the Store knows the transaction

	// The turn, while this replica holds the transaction's lease.
	turn   turnState
	lease  Lease
	marks  int64           // Turn.Marks as last seen
	handed map[string]bool // facts recorded as done, and those handed over since
	pace   Pace            // as the store had it when the turn began
	done   []string        // handed over under the lease, not yet recorded
	finish bool            // the transaction is to be recorded finished
	found  fetchOutcome    // what this turn's confirming fetch found
	// claim: the fetch under way is for names tried before (ClaimShare).
	claim bool
	route claimRoute       // how the batch's claim is confirmed
	obs   batchObservation // what the Observer is told
}

// note records what the turn's fetch found: once something was handed over in the turn
// (a retry's earlier try may have), the turn found something new, whatever comes after.
func (b *batch) note(f fetchOutcome) {
	if b.found != foundNew {
		b.found = f
	}
}

// claimRoute is how a claim is confirmed: a partner's by the next listing by id (a page
// of claims a call, on the listing's own window), else, or when that listing did not name
// the transaction (a partner may be a party without being its partner), by a GET within
// the claims' share.
type claimRoute uint8

const (
	routeFetch   claimRoute = iota // a GET within ClaimShare
	routeListing                   // asked of the next listing by id
	routeListed                    // the listing did not name it: a GET
)

// leaseAsk is how a turn asks for the transaction's lease.
type leaseAsk uint8

const (
	askAlways  leaseAsk = iota // the account has the transaction, or a look-up is not worth it
	askIfKnown                 // a never-seen id: only if the Store knows it (Lease.IfKnown)
)

// turnState is where a batch stands with the transaction's lease.
type turnState uint8

const (
	turnNone    turnState = iota // not held: not asked yet, left to another replica, or ended
	turnHeld                     // this replica holds the lease
	turnUnknown                  // asked askIfKnown, and the Store knows nothing of the id
)

// fetchOutcome is what a turn's confirming fetch found.
type fetchOutcome uint8

const (
	notFetched      fetchOutcome = iota // no fetch in this turn (yet)
	foundNothing                        // fetched (or failed to), nothing new handed over
	foundNew                            // something was handed over in this turn
	foundUnreadable                     // answered 404 or 403
)

// try runs a batch's turns: it takes the transaction's lease (or leaves the batch's names
// to the replica holding it, and is done), confirms and hands over what is new, and
// yields the lease, going on while other replicas asked for more during the turn. paced
// > 0 asks to be called again after that wait: the batch's names were all tried before
// and the transaction's pace does not allow a fetch yet.
func (c *confirmer) try(b *batch) (paced time.Duration, err error) {
	for {
		if b.turn == turnHeld && c.opt.Now().After(b.lease.Expires.Add(-c.opt.ClaimLease/2)) {
			if ok, err := c.renew(b); err != nil || !ok {
				return 0, err
			}
		}
		if b.turn != turnHeld {
			if ok, err := c.acquire(b); err != nil || !ok {
				return 0, err
			}
		}
		if wait := c.paced(b, c.opt.Now()); wait > 0 || b.route == routeListing {
			// The lease is released for the wait (or the listing), with the batch's
			// names, so that a delivery of something new at another replica is fetched
			// at once.
			c.giveUp(b)
			return wait, nil
		}
		err := c.confirm(b)
		c.settleClaim(b)
		if err != nil {
			// The lease is kept for the retry, which reuses the state read; what was
			// handed over is recorded when the turn ends.
			return 0, err
		}
		if again, err := c.yield(b); err != nil || !again {
			return 0, err
		}
	}
}

// acquire asks the Store for the transaction's lease and reports whether this replica
// holds it. If another does, the batch's names were left to it.
func (c *confirmer) acquire(b *batch) (bool, error) {
	now := c.opt.Now()
	l := Lease{TransactionID: b.id, Holder: c.opt.Replica, Expires: now.Add(c.opt.ClaimLease), IfKnown: b.ask == askIfKnown}
	turn, err := c.opt.Store.Acquire(c.ctx, l, b.events, now)
	switch {
	case err != nil:
		return false, fmt.Errorf("leasing: %w", err)
	case turn.Unknown:
		b.turn = turnUnknown
		return false, nil
	case turn.Pruned:
		c.log.Debug("escrow webhook: delivery for a finished and pruned transaction dropped", "transaction_id", b.id, "events", b.events)
		c.observeDropped(b)
		c.door.learnPruned(b.id)
		return false, nil
	case turn.Replayed:
		c.log.Debug("escrow webhook: replayed deliveries dropped without a fetch", "transaction_id", b.id, "events", b.events)
		c.observeReplays(b)
		c.door.learn(b.id, turn.Handed, b.events)
		return false, nil
	case !turn.Granted:
		c.log.Debug("escrow webhook: another replica is confirming the transaction; left to it", "transaction_id", b.id, "events", b.events)
		return false, nil
	}
	l.IfKnown, b.ask = false, askAlways // known now: renewals need not ask
	b.turn, b.lease, b.marks, b.handed, b.pace = turnHeld, l, turn.Marks, turn.Handed, turn.Pace
	b.found = notFetched
	if n := len(b.events); len(turn.Pending) > 0 { // delivered to other replicas: confirm them too
		b.events = addNames(b.events, turn.Pending)
		b.fetch = b.fetch || len(b.events) > n // the batch's own, given back, need no new read
	}
	return true, nil
}

// renew extends the lease a batch holds before its retries outlive it. If another
// replica took it over, the turn ends: what it handed over is recorded, the rest is left
// to the new holder.
func (c *confirmer) renew(b *batch) (bool, error) {
	now := c.opt.Now()
	l := b.lease
	l.Expires = now.Add(c.opt.ClaimLease)
	turn, err := c.opt.Store.Acquire(c.ctx, l, nil, now)
	if err != nil {
		return false, fmt.Errorf("leasing: %w", err)
	}
	if !turn.Granted {
		c.giveUp(b)
		return false, nil
	}
	b.lease, b.marks = l, turn.Marks
	for k := range turn.Handed {
		b.handed[k] = true
	}
	if len(turn.Pending) > 0 {
		b.events, b.fetch = addNames(b.events, turn.Pending), true
	}
	return true, nil
}

// paced returns how long the batch must wait before its fetch. A transaction whose last
// fetch found something new (no pace) is fetched at once: its deliveries are facts about
// to be confirmed. Otherwise they are claims: a fetch for names all tried since then
// waits for the transaction's pace, and any fetch with names waits for the claims' share
// of the window (ClaimShare), so that replays of real ids, whatever names they carry,
// spend no more than that share, and other transactions' facts are fetched at once. The
// claims of an account that may be a partner (not found not to be) are asked of its
// listings by id instead (routeListing, claims.go), a page a call.
func (c *confirmer) paced(b *batch, now time.Time) time.Duration {
	b.claim = false
	if !b.fetch || Replayed(b.events, b.handed) || b.pace.Hold == 0 {
		return 0 // replays are dropped without a fetch (confirm)
	}
	if wait := b.pace.NotBefore.Sub(now); wait > 0 && !untried(b.events, b.pace.Tried) {
		return wait
	}
	if len(b.events) == 0 {
		return 0 // a reconciler's recheck spends no claim's share
	}
	if b.route == routeFetch && c.acct.mayList() {
		b.route = routeListing // the scheduler has it listed
		return 0
	}
	b.route = routeFetch
	ok, retry := c.acct.takeClaim(now)
	if !ok {
		return max(retry.Sub(now), time.Millisecond)
	}
	b.claim = true
	return 0
}

// settleClaim gives a claim's share back when its fetch was not made or found something
// new: only claims that found nothing spend the share.
func (c *confirmer) settleClaim(b *batch) {
	if b.claim && (b.found == notFetched || b.found == foundNew) {
		c.acct.refundClaim()
	}
	b.claim = false
}

// untried reports whether events hold a confirmable name not tried since the last fetch
// that found something new: what may be a real fact, fetched at once.
func untried(events, tried []escrow.EventName) bool {
	return slices.ContainsFunc(events, func(n escrow.EventName) bool {
		return confirmable(n) && !slices.Contains(tried, n)
	})
}

// yield records what the turn handed over and ends it; again reports that other
// replicas asked for more meanwhile: the lease goes on, and the batch holds their names.
func (c *confirmer) yield(b *batch) (again bool, err error) {
	now := c.opt.Now()
	y := Yield{Lease: b.lease, Marks: b.marks, Facts: b.done, Finished: b.finish, Pace: c.nextPace(b, now), Now: now}
	y.Expires = now.Add(c.opt.ClaimLease)
	turn, err := c.opt.Store.Yield(context.WithoutCancel(c.ctx), y)
	if errors.Is(err, ErrTurnUndone) {
		// The callbacks' effects went with the turn: the retry takes the lease again,
		// reads what is recorded, and hands the rest over again from the state fetched.
		c.log.Warn("escrow webhook: a turn's end failed and undid its hand-overs; handing them over again",
			"transaction_id", b.id, "facts", b.done, "error", err)
		b.turn, b.done, b.finish = turnNone, nil, false
		return false, fmt.Errorf("recording: %w", err)
	}
	if errors.Is(err, ErrClaimLost) {
		c.log.Error("escrow webhook: a turn outlived its lease; another replica may have handed its events over too",
			"transaction_id", b.id, "facts", b.done)
		err = nil
	}
	if err != nil {
		return false, fmt.Errorf("recording: %w", err)
	}
	c.door.learn(b.id, b.handed, nil) // recorded now, the turn's facts with those before it
	covered := turn.Granted && c.covered(b, turn.Pending)
	b.done, b.finish = nil, false
	if !turn.Granted {
		b.turn = turnNone
		return false, nil
	}
	b.lease.Expires, b.marks, b.pace = y.Expires, turn.Marks, y.Pace
	b.events, b.found = turn.Pending, notFetched
	b.fetch = !covered
	if covered {
		c.hints(c.ctx, b)
	}
	return true, nil
}

// covered reports whether the state this turn fetched already confirms the names
// delivered to other replicas during the turn: each confirmable one is a replay of what
// is handed over now, this turn's facts with those before it (Replayed). Then they are
// handed over (hints passed on) from that state without a new fetch. An item event's name
// that some items do not show yet may be another item's, made after the fetch, and a
// name the state does not show may have happened since: those take a fetch (paced, if
// tried before).
func (c *confirmer) covered(b *batch, pending []escrow.EventName) bool {
	if b.tx == nil || len(pending) == 0 {
		return false // asked to look again, for no name: a reconciler's recheck
	}
	for _, n := range pending {
		if confirmable(n) && !Replayed([]escrow.EventName{n}, b.handed) {
			return false
		}
	}
	return true
}

// nextPace is the transaction's pace after this turn: reset by a fetch that found
// something new, slowed by one that found nothing.
// An id the API does not show, of which nothing was ever recorded, keeps no pace: a
// forged id leaves nothing in the Store (its lease state is idle, so deleted at the turn's
// end), and this replica's negative cache keeps it from being fetched again for a while.
func (c *confirmer) nextPace(b *batch, now time.Time) Pace {
	switch {
	case b.found == foundNew, b.found == foundUnreadable && len(b.handed) == 0:
		return Pace{}
	case b.found == notFetched:
		return b.pace
	}
	hold := min(max(b.pace.Hold*4, c.opt.Refetch), c.opt.MaxRefetch)
	tried := slices.Clone(b.pace.Tried)
	for _, n := range b.events {
		if confirmable(n) {
			tried = addNames(tried, []escrow.EventName{n})
		}
	}
	return Pace{NotBefore: now.Add(hold), Hold: hold, Tried: tried}
}

// giveUp ends the turn of a batch given up on: it records what was handed over and
// releases the lease, so that another replica can take the transaction over at once.
func (c *confirmer) giveUp(b *batch) {
	if b.turn != turnHeld {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(c.ctx), 5*time.Second)
	defer cancel()
	now := c.opt.Now()
	y := Yield{Lease: b.lease, Marks: b.marks, Facts: b.done, Finished: b.finish, Pace: c.nextPace(b, now), Now: now, Release: true, Names: b.events}
	if _, err := c.opt.Store.Yield(ctx, y); err != nil && !errors.Is(err, ErrClaimLost) {
		c.log.Warn("escrow webhook: releasing a lease failed; it is taken over when it ends", "transaction_id", b.id, "error", err)
	}
	b.turn, b.done, b.finish = turnNone, nil, false
}

// confirm fetches the transaction if the batch needs it and hands over, in order, what
// it shows that was not handed over before. A nil error means the batch is done,
// including when it was dropped.
func (c *confirmer) confirm(b *batch) error {
	ctx, id := c.ctx, b.id
	if b.fetch && Replayed(b.events, b.handed) {
		// A fetch could only show these facts as handed over already: no fetch, no pace.
		b.fetch = false
		if b.tx == nil {
			c.log.Debug("escrow webhook: replayed deliveries dropped without a fetch", "transaction_id", id, "events", b.events)
			c.observeReplays(b)
			return nil
		}
		// A retry's state read before: what it shows and was not handed over yet (a
		// callback failed) is still to be handed over, replays arriving meanwhile or not.
	}
	if err := c.read(b); err != nil || b.tx == nil { // nil: unreadable, nothing to hand over
		return err
	}
	if k := shapeKey(b.tx); !b.handed[k] { // recorded with the turn's facts (Replayed reads it)
		b.handed[k] = true
		b.done = append(b.done, k)
	}
	facts := factsOf(b.tx)
	plan, unconfirmed := planBatch(id, b.events, b.tx, facts, b.handed)
	for _, name := range unconfirmed {
		c.log.Warn("escrow webhook: delivery dropped as unconfirmed: the transaction does not show it",
			"transaction_id", id, "event", name)
	}
	for _, p := range plan {
		p.ev.Claim = Claim{TransactionID: id, Facts: p.keys, Owner: c.opt.Replica, Expires: b.lease.Expires}
		if err := c.observedCallback(ctx, b, p.ev); err != nil {
			return fmt.Errorf("callback: %w", err)
		}
		markAll(b.handed, p.keys)
		b.done = append(b.done, p.keys...)
		b.found = foundNew
	}
	// Finished only when the fetched state is terminal and every fact it shows was handed
	// over: a late delivery of an earlier event must not end the reconciler's interest.
	b.finish = b.finish || (terminal(b.tx) && allIn(keysOf(facts), b.handed))
	c.observeOutcomes(b, unconfirmed)
	return nil
}

// read fetches the transaction if the batch needs it, and passes the batch's hints on
// from the state it reads first: fetched, or listed after they were delivered.
func (c *confirmer) read(b *batch) error {
	listed := b.listed
	b.listed = false
	if !b.fetch {
		if listed { // read for the turn, as a fetch: it paces the next claims
			b.note(foundNothing)
			c.hints(c.ctx, b)
		}
		return nil
	}
	b.note(foundNothing)
	tx, err := c.observedGet(c.ctx, b)
	if errors.Is(err, escrow.ErrNotFound) || errors.Is(err, escrow.ErrForbidden) {
		c.dropUnreadable(b)
		return nil
	}
	if err != nil {
		return fmt.Errorf("confirming: %w", err)
	}
	b.tx, b.fetch = tx, false // a retry reuses it: the facts it shows stay true
	c.hints(c.ctx, b)
	return nil
}

// dropUnreadable ends a batch whose fetch the API answered 404 or 403: its deliveries are
// dropped unconfirmed, and a tracked transaction is no longer tracked.
func (c *confirmer) dropUnreadable(b *batch) {
	b.note(foundUnreadable)
	c.acct.unreadable(b.id, b.kind)
	if len(b.events) > 0 {
		c.log.Warn("escrow webhook: unconfirmed deliveries dropped: the account cannot read the transaction",
			"transaction_id", b.id, "events", b.events)
	}
	if b.tracked {
		c.log.Warn("escrow webhook: no longer readable; no longer tracked", "transaction_id", b.id)
		b.finish = true
	}
	b.fetch = false
	c.observeOutcomes(b, b.events) // unreadable: none confirmed
}

// hints passes the batch's unconfirmable names to OnUnconfirmedHint, once per fetch.
func (c *confirmer) hints(ctx context.Context, b *batch) {
	for _, name := range b.events {
		if confirmable(name) {
			continue
		}
		if c.opt.OnUnconfirmedHint == nil {
			c.log.Debug("escrow webhook: unconfirmable event dropped", "transaction_id", b.id, "event", name)
			continue
		}
		c.opt.OnUnconfirmedHint(ctx, Hint{Event: name, TransactionID: b.id, Transaction: b.tx})
	}
}

// planBatch decides what a batch hands over: every fact the state shows that was not
// handed over before, in order, so that the callback sees a transaction's state changes
// in order and as soon as one fetch shows them. Facts of the batch's delivered events come
// FromWebhook; the others FromReconcile: their delivery was lost, or is on its way and
// will be dropped as a replay (Replayed) without a fetch. unconfirmed lists the delivered
// confirmable names the state does not show.
func planBatch(id int64, events []escrow.EventName, tx *escrow.Transaction, facts []fact, handed map[string]bool) (plan []handover, unconfirmed []escrow.EventName) {
	delivered := make(map[escrow.EventName]bool, len(events))
	for _, name := range events {
		if !confirmable(name) {
			continue
		}
		delivered[name] = true
		if !slices.ContainsFunc(facts, func(f fact) bool { return f.event == name }) {
			unconfirmed = append(unconfirmed, name)
		}
	}
	return pending(id, tx, delivered, facts, handed), unconfirmed
}

// handover is one event to give the callback, and the keys that record it.
type handover struct {
	ev   ConfirmedEvent
	keys []string
}

// pending groups the facts not handed over into events, in order: facts of a delivered
// event come FromWebhook, the others FromReconcile.
func pending(id int64, tx *escrow.Transaction, delivered map[escrow.EventName]bool, facts []fact, handed map[string]bool) []handover {
	var plan []handover
	for _, f := range facts {
		if handed[f.key] {
			continue
		}
		if n := len(plan); n == 0 || plan[n-1].ev.Name != f.event {
			src := FromReconcile
			if delivered[f.event] {
				src = FromWebhook
			}
			plan = append(plan, handover{ev: ConfirmedEvent{
				Event:       escrow.Event{Name: f.event, EventType: escrow.EventTypeTransaction, TransactionID: id},
				Transaction: tx, Source: src,
			}})
		}
		p := &plan[len(plan)-1]
		p.keys = append(p.keys, f.key)
		if f.itemID != 0 {
			p.ev.ItemIDs = append(p.ev.ItemIDs, f.itemID)
		}
	}
	return plan
}

func keysOf(facts []fact) []string {
	out := make([]string, len(facts))
	for i, f := range facts {
		out[i] = f.key
	}
	return out
}

func allIn(keys []string, set map[string]bool) bool {
	for _, k := range keys {
		if !set[k] {
			return false
		}
	}
	return true
}

func markAll(set map[string]bool, keys []string) {
	for _, k := range keys {
		set[k] = true
	}
}

// batchObservation is what a batch carries for the Observer: when its deliveries came,
// the confirming fetch's context, and the delivered names handed over.
type batchObservation struct {
	received time.Time       // when the oldest delivery of the batch arrived here; zero for none
	ctx      context.Context // as ConfirmStart returned it; nil before the fetch
	handed   map[escrow.EventName]bool
}

// observedGet is the confirming fetch, reported to the Observer.
func (c *confirmer) observedGet(ctx context.Context, b *batch) (*escrow.Transaction, error) {
	cf := &Confirm{TransactionID: b.id, Events: b.events, Received: b.obs.received, Start: time.Now()}
	b.obs.ctx = c.obs.ConfirmStart(ctx, cf)
	tx, err := c.acct.get(b.obs.ctx, b.id)
	cf.End, cf.Err = time.Now(), err
	c.obs.ConfirmEnd(b.obs.ctx, cf)
	return tx, err
}

// observedCallback hands ev to the callback, reported to the Observer; the callback runs in
// the context HandoverStart returns, derived from ctx.
func (c *confirmer) observedCallback(ctx context.Context, b *batch, ev ConfirmedEvent) error {
	ho := &Handover{Event: ev.Name, TransactionID: b.id, Source: ev.Source, Start: time.Now()}
	if ev.Source == FromWebhook {
		ho.Delivered = b.obs.received
	}
	if b.obs.ctx != nil {
		ctx = b.obs.ctx // the confirming fetch's, derived from ctx: linked to it
	}
	ctx = c.obs.HandoverStart(ctx, ho)
	err := c.fn(ctx, ev)
	ho.End, ho.Err = time.Now(), err
	c.obs.HandoverEnd(ctx, ho)
	if err == nil && ev.Source == FromWebhook {
		if b.obs.handed == nil {
			b.obs.handed = map[escrow.EventName]bool{}
		}
		b.obs.handed[ev.Name] = true
	}
	return err
}

// observeOutcomes reports what the state confirm read made of the batch's delivered names:
// handed over now (confirmed), shown but handed over before (duplicate), or not shown,
// unreadable (tx nil) or never showable (unconfirmed).
func (c *confirmer) observeOutcomes(b *batch, unconfirmed []escrow.EventName) {
	ctx := b.obs.ctx
	if ctx == nil {
		ctx = c.ctx
	}
	for _, name := range b.events {
		out := DeliveryDuplicate
		switch {
		case b.tx == nil || !confirmable(name) || slices.Contains(unconfirmed, name):
			out = DeliveryUnconfirmed
		case b.obs.handed[name]:
			out = DeliveryConfirmed
		}
		c.obs.Delivery(ctx, Delivery{Event: name, TransactionID: b.id, Received: receivedOr(b.obs.received), Outcome: out, StatusCode: http.StatusOK})
	}
	b.obs.handed = nil
}

// observeGivenUp reports the names of a batch given up on: those whose event reached the
// callback in an earlier attempt as confirmed, the others as dropped (the reconciler hands
// over what they missed). Without it they would never be reported.
func (c *confirmer) observeGivenUp(b *batch) {
	for _, name := range b.events {
		out := DeliveryDropped
		if b.obs.handed[name] {
			out = DeliveryConfirmed
		}
		c.obs.Delivery(c.ctx, Delivery{Event: name, TransactionID: b.id, Received: receivedOr(b.obs.received), Outcome: out, StatusCode: http.StatusOK})
	}
	b.obs.handed = nil
}

// observeDropped reports a batch's names dropped without a fetch (its transaction was
// finished and pruned).
func (c *confirmer) observeDropped(b *batch) {
	for _, name := range b.events {
		c.obs.Delivery(c.ctx, Delivery{Event: name, TransactionID: b.id, Received: receivedOr(b.obs.received), Outcome: DeliveryDropped, StatusCode: http.StatusOK})
	}
}

// observeReplays reports a batch's names dropped as replays without a fetch.
func (c *confirmer) observeReplays(b *batch) {
	for _, name := range b.events {
		c.obs.Delivery(c.ctx, Delivery{Event: name, TransactionID: b.id, Received: receivedOr(b.obs.received), Outcome: DeliveryDuplicate, StatusCode: http.StatusOK})
	}
}

// receivedOr is t, or now for names that reached this replica through the store (delivered
// to another), whose arrival is not known here.
func receivedOr(t time.Time) time.Time {
	if t.IsZero() {
		return time.Now()
	}
	return t
}
