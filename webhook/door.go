package webhook

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	escrow "github.com/escrowkit/escrow-go"
)

// door is where a delivery comes in, and where most that need no work end: it refuses a
// delivery whose URL does not carry a secret, before any other work; parses the rest; and
// answers at once those that can lead to nothing: a name no state can show that nobody
// receives (no OnUnconfirmedHint), and a replay of what the facts recorded already show
// (replayMemo). What passes is queued (scheduler.go).
type door struct {
	on      bool       // Options.Secrets was set: a delivery needs one of them
	digests [][32]byte // SHA-256 of each usable secret; compared whole, every one
	refused atomic.Int64
	warned  atomic.Int64 // unix nanoseconds of the last warning about refusals
	hints   bool         // Options.OnUnconfirmedHint is set: unconfirmable names are queued
	log     *slog.Logger
	obs     Observer

	mu      sync.Mutex
	replays *replayMemo // names known to be replays, per transaction
}

// refusalWarnEvery spaces the warnings about refused deliveries: a flood of forgeries
// must not become a flood of log lines.
const refusalWarnEvery = time.Minute

// newDoor keeps the usable secrets. An unusable one is logged (never quoted) and never
// accepted; when none is usable every delivery is refused: a misconfigured door stays shut.
func newDoor(opt *Options, log *slog.Logger) *door {
	d := &door{on: len(opt.Secrets) > 0, hints: opt.OnUnconfirmedHint != nil, log: log, obs: opt.Observer, replays: newReplayMemo(100_000)}
	for i, s := range opt.Secrets {
		if err := checkSecret(s); err != nil {
			log.Error("escrow webhook: a secret is never accepted", "index", i, "error", err)
			continue
		}
		d.digests = append(d.digests, sha256.Sum256([]byte(s)))
	}
	return d
}

// admits reports whether r's last path segment is one of the secrets, or whether no
// secret is required. Comparing digests of equal length, all of them without stopping
// at a match, takes the same time whatever was sent and whichever secret matches.
func (d *door) admits(r *http.Request) bool {
	if !d.on {
		return true
	}
	p := r.URL.Path
	got := sha256.Sum256([]byte(p[strings.LastIndexByte(p, '/')+1:]))
	match := 0
	for i := range d.digests {
		match |= subtle.ConstantTimeCompare(got[:], d.digests[i][:])
	}
	return match == 1
}

// refuse answers a delivery without a valid secret with 404, as if nothing were there,
// before its body is read: no store, API call or goroutine is spent on it. It is counted,
// and a warning (without the URL, which may hold a near-miss of a secret) is logged at
// most once a minute.
func (d *door) refuse(w http.ResponseWriter, r *http.Request) {
	n := d.refused.Add(1)
	now := time.Now().UnixNano()
	if last := d.warned.Load(); (last == 0 || now-last >= int64(refusalWarnEvery)) && d.warned.CompareAndSwap(last, now) {
		d.log.Warn("escrow webhook: refused deliveries without a valid secret in their URL", "refused_total", n, "remote", r.RemoteAddr)
	}
	http.NotFound(w, r)
}

// admit answers the deliveries that need no work (refused, malformed, of a name nothing
// can take, or a known replay) and returns the others' event to be queued (ok).
func (d *door) admit(w http.ResponseWriter, r *http.Request) (ev *escrow.Event, ok bool) {
	if !d.admits(r) {
		d.refuse(w, r)
		d.arrived(r.Context(), 0, "", DeliveryRefused, http.StatusNotFound)
		return nil, false
	}
	ev, err := escrow.ParseEvent(r)
	if err != nil {
		var pe *escrow.EventError
		errors.As(err, &pe)
		d.log.Warn("escrow webhook: refused delivery", "reason", pe.Reason, "remote", r.RemoteAddr)
		http.Error(w, pe.Reason, pe.StatusCode)
		d.arrived(r.Context(), 0, "", DeliveryRefused, pe.StatusCode)
		return nil, false
	}
	if out, ok := d.pointless(ev); !ok {
		// Answered 200 like any delivery, so a sender learns nothing; never queued or kept.
		w.WriteHeader(http.StatusOK)
		name := ev.Name
		if out == DeliveryDropped {
			name = "" // an invalid name is never repeated
		}
		d.arrived(r.Context(), ev.TransactionID, name, out, http.StatusOK)
		return nil, false
	}
	return ev, true
}

// pointless decides a parsed delivery that can lead to nothing, and what became of it;
// ok for one to queue.
func (d *door) pointless(ev *escrow.Event) (out DeliveryOutcome, ok bool) {
	switch {
	case !validHintName(ev.Name) && !confirmable(ev.Name):
		d.log.Warn("escrow webhook: delivery dropped: invalid event name", "transaction_id", ev.TransactionID, "name_length", len(ev.Name))
		return DeliveryDropped, false
	case !confirmable(ev.Name) && !d.hints: // no state shows it, and nobody receives it
		d.log.Debug("escrow webhook: unconfirmable event dropped", "transaction_id", ev.TransactionID, "event", ev.Name)
		return DeliveryUnconfirmed, false
	case d.replay(ev.TransactionID, ev.Name):
		d.log.Debug("escrow webhook: replayed delivery dropped as it arrived", "transaction_id", ev.TransactionID, "event", ev.Name)
		return DeliveryDuplicate, false
	}
	return "", true
}

// arrived reports a delivery decided as it arrived: refused, dropped, coalesced with one
// of the same name waiting (duplicate), or refused for want of room (503).
func (d *door) arrived(ctx context.Context, id int64, name escrow.EventName, out DeliveryOutcome, status int) {
	reportArrival(ctx, d.obs, id, name, out, status)
}

// replay reports whether a delivery of name for transaction id is known to be a replay.
func (d *door) replay(id int64, name escrow.EventName) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.replays.replay(id, name)
}

// learn notes which names the facts recorded of a transaction make replays, and names
// found to be replays, so that their deliveries are dropped as they arrive.
func (d *door) learn(id int64, handed map[string]bool, names []escrow.EventName) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.replays.learn(id, handed)
	d.replays.learnNames(id, names)
}

// learnPruned notes that every name of a pruned transaction is a replay.
func (d *door) learnPruned(id int64) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.replays.learnAll(id)
}
