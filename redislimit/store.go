package redislimit

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	escrow "github.com/escrowkit/escrow-go"
)

// Defaults of a [Store]; see the options of the same names.
const (
	DefaultPrefix  = "escrow:ratelimit:"
	DefaultTimeout = 250 * time.Millisecond
	DefaultLease   = 10 * time.Second
	DefaultTTL     = 10 * time.Minute
)

// The probe intervals of an exhausted endpoint whose reset time is unknown, as a client at
// its defaults spaces them: the first after 250ms, doubling up to 5s.
const (
	probeStep = 250 * time.Millisecond
	probeMax  = 5 * time.Second
)

//go:embed budget.lua
var budgetLua string

// Store is an [escrow.RateLimitStore] in Redis. Every client given the same Store, or a
// Store on the same Redis, shares each endpoint's budget with the other clients of its
// account and base URL. It is safe for concurrent use.
//
// Each endpoint of each account has two keys, both under one hash tag (so that a Redis
// Cluster keeps them in one slot): "<prefix>{<account>}:<endpoint>", a hash of the
// allowance, and the same with ":inflight", the reservations whose answers are awaited.
// <account> is [escrow.RateLimitKey].Account, a hash: neither the e-mail address nor the API
// key appears in a key or a value. Every key has a TTL.
type Store struct {
	rdb     redis.Scripter
	script  *redis.Script
	prefix  string
	timeout time.Duration
	lease   time.Duration
	ttl     time.Duration
	maxHold time.Duration
}

// Option configures a [Store] in [New].
type Option func(*Store)

// WithPrefix sets the prefix of every key (default "escrow:ratelimit:").
func WithPrefix(prefix string) Option { return func(s *Store) { s.prefix = prefix } }

// WithTimeout bounds each round trip to Redis (default 250ms), whether or not the go-redis
// client was made with ContextTimeoutEnabled. When Redis does not answer in time, the
// client paces on its own memory until Redis answers again. Non-positive values are ignored.
//
// A round trip takes well under a millisecond on a LAN, but a replica whose CPU is
// throttled (a container over its quota stalls for up to a 100ms period) or overloaded sees
// far longer ones: too short a timeout sends a healthy replica off the shared budget. The
// default is two such periods and a half; BENCHMARKS.md has what 100ms did on a loaded
// machine.
func WithTimeout(d time.Duration) Option {
	return func(s *Store) {
		if d > 0 {
			s.timeout = d
		}
	}
}

// WithLease sets how long a reservation counts as in flight when its client never reports
// the answer, because it died or lost Redis (default 10s). It should cover most requests'
// duration: a request still in flight after its lease no longer holds back the others.
// Non-positive values are ignored.
func WithLease(d time.Duration) Option {
	return func(s *Store) {
		if d > 0 {
			s.lease = d
		}
	}
}

// WithTTL sets how long an endpoint's state outlives its last use (default 10m), or a known
// window reset if that is later. Non-positive values are ignored; a TTL under a second is
// taken as a second.
func WithTTL(d time.Duration) Option {
	return func(s *Store) {
		if d > 0 {
			s.ttl = max(d, time.Second)
		}
	}
}

// WithMaxHold bounds how long one answer may hold an endpoint in the shared budget
// (default [escrow.DefaultMaxHold], 10 minutes), whatever its RateLimit-Reset or
// Retry-After says and whatever hold a client reports: when the bound passes, one request
// probes the endpoint and its answer says whether the others may follow. A hold kept from
// before (by a Store with a longer bound) is cut to it too. Non-positive values are ignored.
func WithMaxHold(d time.Duration) Option {
	return func(s *Store) {
		if d > 0 {
			s.maxHold = d
		}
	}
}

// New returns a Store on rdb: a *redis.Client, *redis.ClusterClient, *redis.Ring or any
// other Scripter. The caller keeps rdb and closes it when done.
//
// go-redis retries a command after some network errors (rdb's MaxRetries). A retried
// reservation may be counted twice; the extra one expires after the lease. Set MaxRetries
// to -1 to rule that out.
func New(rdb redis.Scripter, opts ...Option) *Store {
	s := &Store{rdb: rdb, script: redis.NewScript(budgetLua), prefix: DefaultPrefix, timeout: DefaultTimeout, lease: DefaultLease, ttl: DefaultTTL, maxHold: escrow.DefaultMaxHold}
	for _, opt := range opts {
		opt(s)
	}
	return s
}

// Error is a failed call to Redis, or an answer the Store did not understand.
type Error struct {
	Op  string // "reserve" or "record"
	Err error
}

func (e *Error) Error() string { return "redislimit: " + e.Op + ": " + e.Err.Error() }

// Unwrap returns the cause, such as a network error or context.DeadlineExceeded.
func (e *Error) Unwrap() error { return e.Err }

// ErrBadKey is returned for a RateLimitKey with an empty Account or Endpoint.
var ErrBadKey = errors.New("the key's account and endpoint must be non-empty")

// Keys returns the Redis keys of key's budget: its state and its reservations in flight.
func (s *Store) Keys(key escrow.RateLimitKey) (state, inflight string) {
	state = s.prefix + "{" + key.Account + "}:" + key.Endpoint
	return state, state + ":inflight"
}

// Reserve asks for one request on the key's endpoint, in one round trip.
func (s *Store) Reserve(ctx context.Context, key escrow.RateLimitKey) (escrow.RateLimitGrant, error) {
	if key.Account == "" || key.Endpoint == "" {
		return escrow.RateLimitGrant{}, &Error{Op: "reserve", Err: ErrBadKey}
	}
	id := strconv.FormatUint(rand.Uint64(), 36)
	state, inflight := s.Keys(key)
	cmd, err := s.run(ctx, []string{state, inflight}, s.args("reserve", id))
	var res []int64
	if err == nil {
		res, err = cmd.Int64Slice()
	}
	if err != nil {
		return escrow.RateLimitGrant{}, &Error{Op: "reserve", Err: err}
	}
	return grantOf(res, id)
}

// grantOf reads budget.lua's answer to reserve, {granted, wait in µs, probe, window}, into
// the grant of the reservation id.
func grantOf(res []int64, id string) (escrow.RateLimitGrant, error) {
	if len(res) != 4 || res[1] < 0 || res[3] < 0 {
		return escrow.RateLimitGrant{}, &Error{Op: "reserve", Err: fmt.Errorf("unexpected answer %v", res)}
	}
	g := escrow.RateLimitGrant{OK: res[0] == 1, Probe: res[2] == 1, Window: uint64(res[3])}
	if g.OK {
		g.ID = id
	} else {
		g.Wait = time.Duration(res[1]) * time.Microsecond
	}
	return g, nil
}

// Record reports the answer to a granted request, in one round trip.
func (s *Store) Record(ctx context.Context, key escrow.RateLimitKey, g escrow.RateLimitGrant, a escrow.RateLimitAnswer) error {
	if key.Account == "" || key.Endpoint == "" {
		return &Error{Op: "record", Err: ErrBadKey}
	}
	reset := int64(-1)
	if a.Reset >= 0 {
		reset = a.Reset.Microseconds()
	}
	remaining := -1
	if a.Remaining >= 0 {
		remaining = a.Remaining
	}
	state, inflight := s.Keys(key)
	args := append(s.args("record", g.ID), flag(g.Probe), g.Window, flag(a.Answered), a.Status, a.Limit, remaining, reset, flag(a.Capped))
	cmd, err := s.run(ctx, []string{state, inflight}, args)
	if err == nil {
		err = cmd.Err()
	}
	if err != nil {
		return &Error{Op: "record", Err: err}
	}
	return nil
}

// run runs the script, giving up after the Store's timeout or when ctx ends. go-redis
// ignores a context's deadline unless the client was made with ContextTimeoutEnabled, and
// then waits for its ReadTimeout (3s by default); the script runs in a goroutine of its own
// so that the caller never waits longer than the timeout, whatever the client's options.
// An abandoned script ends by go-redis's own timeouts.
func (s *Store) run(ctx context.Context, keys []string, args []any) (*redis.Cmd, error) {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel() // here, not in the goroutine: a done context must mean the timeout
	done := make(chan *redis.Cmd, 1)
	go func() { done <- s.script.Run(ctx, s.rdb, keys, args...) }()
	select {
	case cmd := <-done:
		return cmd, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// args are the script's arguments common to both operations, with room for record's.
func (s *Store) args(op, id string) []any {
	args := make([]any, 0, 15)
	return append(args, op, id, s.lease.Microseconds(), s.ttl.Milliseconds(), probeStep.Microseconds(), probeMax.Microseconds(), s.maxHold.Microseconds())
}

func flag(b bool) int {
	if b {
		return 1
	}
	return 0
}

var _ escrow.RateLimitStore = (*Store)(nil)
