package webhook

import (
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"time"
)

// Options tune a Handler. The zero value is usable.
type Options struct {
	// Store records what was handed over; default a new MemoryStore (one process only).
	Store Store
	// Logger receives dropped deliveries and retries; default silent.
	Logger *slog.Logger
	// MaxAttempts bounds the tries of one batch of events (confirming and calling back);
	// default 8. What was given up on is handed over by the next reconciliation instead.
	MaxAttempts int
	// RetryWait is the first wait between tries, doubled each time up to MaxRetryWait;
	// defaults 500ms and 30s.
	RetryWait, MaxRetryWait time.Duration
	// MaxQueued bounds the transactions the account is known to have (handed over before,
	// found or tracked by the reconciler, listed, or in the Store) with work waiting; a
	// delivery about one more is answered 503. Deliveries about a transaction already
	// waiting are coalesced and always taken. Default 10,000.
	MaxQueued int
	// MaxUnseen bounds, apart from MaxQueued, the never-seen ids waiting to be confirmed
	// with their delivered names: past it an id is kept as owed a look in the Store, with
	// no name (its facts are handed over FromReconcile), answered 200 all the same and
	// never dropped (see doc.go, "Floods"). Default 1,000.
	MaxUnseen int
	// UnseenShare bounds the fetches of never-seen ids that the API answers 404 or 403
	// (forgeries) to this share of each rate-limit window of GET /transaction/{id}; once
	// spent, never-seen ids wait for the next window, known transactions do not. Default
	// 0.1.
	UnseenShare float64
	// ClaimShare bounds the fetches made for claims, deliveries about a transaction whose
	// last fetch found nothing new (replays of a real id with names its state does not
	// show), that find nothing new either, to this share of each rate-limit window of
	// GET /transaction/{id}; once spent, claims wait for the next window, of any number of
	// transactions, while deliveries about a transaction whose last fetch found something
	// (a real fact's, most likely) are fetched at once. Default 0.2.
	ClaimShare float64
	// Workers bounds the transactions confirmed at once, and the handler's goroutines
	// (one more schedules the waits). Default: the Store's connections if it states them
	// ([Pooled]: package sqlstore's Store does), else 8. A turn holds a store connection
	// through its fetch, so a replica's ceiling is min(Workers, connections) turns under
	// way, each as long as the API's latency: leave Workers unset and size the store's
	// connections, the one knob of a replica's capacity.
	Workers int
	// Refetch and MaxRefetch pace the confirming fetches of one transaction, across the
	// replicas sharing the Store: after a fetch that found nothing new (a replayed or
	// forged delivery) a delivery of a name already tried waits Refetch, then four times
	// longer each time, up to MaxRefetch; deliveries that arrive meanwhile are coalesced
	// into that one fetch. A delivery of a confirmable name not tried yet is fetched at
	// once, and a fetch that finds something new resets the pace. Defaults 250ms and 5s.
	Refetch, MaxRefetch time.Duration
	// Replica names this handler as the holder of its leases in a shared Store; default a
	// random name, so that a restarted process is a new holder.
	Replica string
	// ClaimLease is how long a transaction's lease is held for one turn: its confirming
	// fetch and the callbacks of the events it hands over. A lease whose holder died is
	// taken over after it. It must exceed the callbacks' longest run. Default 2 min.
	ClaimLease time.Duration
	// Retention is how long the Store keeps what it knows of a finished transaction:
	// RunReconciler prunes what finished longer ago (Store.Prune), one replica at a
	// time, and a tombstone of each is kept TombstoneHorizon longer. Default 30 days;
	// negative keeps everything.
	Retention time.Duration
	// Reserve is how many requests of each rate-limit window of GET /transaction/{id} the
	// handler leaves to the application: once an answer says no more than Reserve remain,
	// confirmations wait for the window's reset instead of spending them (and then 429s).
	// Default a tenth of the limit the API states (RateLimit-Limit); -1 for none. Fetches
	// already under way when an answer reaches the reserve still complete: up to
	// Workers-1 of the reserve can be spent.
	Reserve int
	// OnUnconfirmedHint, if set, receives the deliveries no state can confirm (see Hint).
	OnUnconfirmedHint HintFunc
	// Now is the clock of leases and of the pace; default time.Now.
	Now func() time.Time
	// Secrets, when set, make a delivery prove its origin: its URL's last path segment
	// must be one of them (see DeliveryURL), or it is refused with 404 before any work.
	// The first is current; the others are still accepted while a rotation is under way.
	// Each must be 22 to 128 characters of A-Z, a-z, 0-9, '-' and '_' (NewSecret).
	Secrets []string
	// Observer sees each step of receiving, for telemetry (escrowotel implements it);
	// default NopObserver.
	Observer Observer
}

// withDefaults returns opt with every unset option at its default.
func withDefaults(opt Options) Options {
	if opt.Store == nil {
		opt.Store = new(MemoryStore)
	}
	if opt.MaxAttempts <= 0 {
		opt.MaxAttempts = 8
	}
	if opt.RetryWait <= 0 {
		opt.RetryWait = 500 * time.Millisecond
	}
	if opt.MaxRetryWait <= 0 {
		opt.MaxRetryWait = 30 * time.Second
	}
	if opt.MaxQueued <= 0 {
		opt.MaxQueued = 10_000
	}
	workersDefault(&opt)
	floodDefaults(&opt)
	paceDefaults(&opt)
	if opt.Replica == "" {
		var b [8]byte
		rand.Read(b[:]) // never fails (crypto/rand)
		opt.Replica = "replica-" + hex.EncodeToString(b[:])
	}
	if opt.Now == nil {
		opt.Now = time.Now
	}
	return opt
}

// paceDefaults sets the defaults of the options of a transaction's turns.
func paceDefaults(opt *Options) {
	if opt.Refetch <= 0 {
		opt.Refetch = 250 * time.Millisecond
	}
	if opt.MaxRefetch < opt.Refetch {
		opt.MaxRefetch = max(opt.Refetch, 5*time.Second)
	}
	if opt.ClaimLease <= 0 {
		opt.ClaimLease = 2 * time.Minute
	}
	if opt.Retention == 0 {
		opt.Retention = 30 * 24 * time.Hour
	}
}

// workersDefault sets Options.Workers: the Store's connections if it states them, else 8.
func workersDefault(opt *Options) {
	if opt.Workers > 0 {
		return
	}
	opt.Workers = 8
	if p, ok := opt.Store.(Pooled); ok && p.MaxConns() > 0 {
		opt.Workers = p.MaxConns()
	}
}

// floodDefaults sets the defaults of the options of never-seen ids.
func floodDefaults(opt *Options) {
	if opt.MaxUnseen <= 0 {
		opt.MaxUnseen = 1_000
	}
	if opt.UnseenShare <= 0 || opt.UnseenShare > 1 {
		opt.UnseenShare = 0.1
	}
	if opt.ClaimShare <= 0 || opt.ClaimShare > 1 {
		opt.ClaimShare = 0.2
	}
}
