package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	escrow "github.com/escrowkit/escrow-go"
	"github.com/escrowkit/escrow-go/escrowtest"
)

// ChaosConfig describes one reliability run: Workers goroutines drive transactions through
// their lifecycle with the SDK until Ops calls have been made, while the emulator injects
// a fault into FaultRate of all requests.
type ChaosConfig struct {
	Ops       int
	FaultRate float64
	Workers   int
	// Timeout bounds each attempt (the http.Client's Timeout); injected latencies are
	// three times as long, so that they always outlast it.
	Timeout time.Duration
	// Seed seeds the emulator's choice of faulted requests.
	Seed int64
	// RateLimit is the emulator's limit per endpoint per second. It is far above what the
	// run sends, so that no real 429 occurs, but it makes every answer carry the
	// RateLimit-* headers, as the live API's do. 0 turns limiting off: injected 429s
	// then carry no rate-limit headers, as from a proxy.
	RateLimit int
}

// DefaultChaos is what `go run ./bench/chaos` uses without flags.
var DefaultChaos = ChaosConfig{Ops: 2000, FaultRate: 0.2, Workers: 8, Timeout: 200 * time.Millisecond, Seed: 1, RateLimit: 1_000_000}

// ChaosResult is what a chaos run found. Every count but Ops is checked against the
// emulator's own state, read without faults after the run, not against what the SDK said.
type ChaosResult struct {
	// Ops is the number of SDK calls made.
	Ops int
	// Creates is the number of Create calls; Created the number of distinct references
	// the emulator holds; Duplicates the transactions beyond the first for a reference.
	Creates, Created, Duplicates int
	// Lost counts calls that returned success whose effect the emulator does not show:
	// a created transaction missing or different, an action not applied.
	Lost int
	// Phantoms counts calls that returned an error saying they were not performed whose
	// effect the emulator nevertheless shows.
	Phantoms int
	// Unknown counts calls whose error said the outcome is unknown (either way is right).
	Unknown int
	// Inconsistent counts fundings the emulator refused although the SDK had confirmed
	// that both parties agreed.
	Inconsistent int
	// UntypedErrors counts errors that are none of the SDK's error types.
	UntypedErrors int
	// GoroutinesLeaked is how many more goroutines run after the run, its server closed
	// and connections released, than before it.
	GoroutinesLeaked int
	// Errors counts the errors returned, by type.
	Errors map[string]int
	// Untyped holds up to five untyped errors' texts, to say what they were.
	Untyped []string
	// Completed counts transactions whose goods were accepted.
	Completed int
	// Attempts are requests the SDK sent, retries included; NoAnswer those that got no
	// HTTP answer (dropped or timed out).
	Attempts, NoAnswer int64
	Elapsed            time.Duration
}

// String is the result as one line of key=value pairs, the required ones first.
func (r ChaosResult) String() string {
	kinds := make([]string, 0, len(r.Errors))
	for k, n := range r.Errors {
		kinds = append(kinds, fmt.Sprintf("%s:%d", k, n))
	}
	sort.Strings(kinds)
	return fmt.Sprintf("ops=%d created=%d duplicates=%d lost=%d untyped_errors=%d goroutines_leaked=%d creates=%d phantoms=%d inconsistent=%d unknown_outcome=%d accepted=%d attempts=%d no_answer=%d errors=%s elapsed_s=%.1f",
		r.Ops, r.Created, r.Duplicates, r.Lost, r.UntypedErrors, r.GoroutinesLeaked,
		r.Creates, r.Phantoms, r.Inconsistent, r.Unknown, r.Completed, r.Attempts, r.NoAnswer, strings.Join(kinds, ","), r.Elapsed.Seconds())
}

// faultKinds are the faults a chaos run injects, each on every API request with the
// same probability. Latencies are multiples of the attempt timeout, set in RunChaos.
func faultKinds(timeout time.Duration) []escrowtest.Fault {
	return []escrowtest.Fault{
		{Endpoint: "*", Status: http.StatusServiceUnavailable},
		{Endpoint: "*", Status: http.StatusInternalServerError},
		{Endpoint: "*", Status: http.StatusTooManyRequests},
		{Endpoint: "*", Drop: escrowtest.DropBefore},
		{Endpoint: "*", Drop: escrowtest.DropAfter},
		{Endpoint: "*", Latency: 3 * timeout},      // slow to start: the client leaves, nothing happens
		{Endpoint: "*", LatencyAfter: 3 * timeout}, // slow to answer: the client leaves, the change is made
	}
}

// step is one stage of the lifecycle a chaos worker drives a transaction through.
type step int

const (
	stepCreated step = iota
	stepBuyerAgreed
	stepSellerAgreed
	stepFunded
	stepShipped
	stepReceived
	stepAccepted
)

// chaosTx is what the harness believes about one transaction, from the SDK's answers.
type chaosTx struct {
	ref string
	id  int64 // 0 until known
	// done is the last step whose call returned success.
	done    step
	hasDone bool
	// refused counts, per step, calls that returned an error saying they were not
	// performed; other counts the rest (successes and unknown outcomes). A step with
	// refusals only must not show in the emulator.
	refused, other map[step]int
}

// chaosRun holds a run's shared state.
type chaosRun struct {
	cfg            ChaosConfig
	srv            *escrowtest.Server
	partner, buyer *escrow.Client
	buyerEmail     string
	sellerEmail    string
	ops            atomic.Int64

	mu       sync.Mutex
	txs      []*chaosTx
	errKinds map[string]int
	untyped  []string
	nUntyped int
	unknown  int
	// inconsistent counts fundings the emulator refused after the SDK confirmed both
	// agreements.
	inconsistent int
}

// RunChaos runs the reliability harness once and checks its outcome against the emulator.
func RunChaos(ctx context.Context, cfg ChaosConfig) (ChaosResult, error) {
	if cfg.Ops <= 0 || cfg.Workers <= 0 || cfg.Timeout <= 0 || cfg.FaultRate < 0 || cfg.FaultRate >= 1 {
		return ChaosResult{}, fmt.Errorf("bench: chaos: ops, workers and timeout must be positive and fault rate in [0, 1): %+v", cfg)
	}
	started := time.Now()
	before := runtime.NumGoroutine()
	res, err := runChaos(ctx, cfg)
	if err != nil {
		return res, err
	}
	res.GoroutinesLeaked = settleGoroutines(before, 5*time.Second)
	res.Elapsed = time.Since(started)
	return res, nil
}

// settleGoroutines waits up to limit for the goroutine count to fall back to before, as
// connections' readers and writers notice their close, and returns the excess left.
func settleGoroutines(before int, limit time.Duration) int {
	deadline := time.Now().Add(limit)
	for {
		n := runtime.NumGoroutine() - before
		if n <= 0 || time.Now().After(deadline) {
			return max(n, 0)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func runChaos(ctx context.Context, cfg ChaosConfig) (ChaosResult, error) {
	// The window is one second: an injected 429 carries the window's RateLimit-Reset,
	// which the SDK honours for the whole endpoint, and the emulator's default minute
	// would hold every worker for up to a minute. Pacing is RunPacing's subject.
	srv := escrowtest.NewServer(escrowtest.WithRateLimit(cfg.RateLimit, time.Second), escrowtest.WithSeed(cfg.Seed))
	defer srv.Close()
	r := &chaosRun{cfg: cfg, srv: srv, buyerEmail: "buyer@chaos.test", sellerEmail: "seller@chaos.test", errKinds: map[string]int{}}
	partnerAcct := srv.AddPartner("partner@chaos.test")
	buyerAcct := srv.AddCustomer(r.buyerEmail)
	srv.AddCustomer(r.sellerEmail)

	counter := &countingTransport{next: srv.Client().Transport}
	defer counter.CloseIdleConnections()
	hc := &http.Client{Transport: counter, Timeout: cfg.Timeout}
	var err error
	opts := []escrow.Option{escrow.WithBaseURL(srv.URL), escrow.WithHTTPClient(hc), escrow.WithMaxWait(2 * time.Second)}
	if r.partner, err = escrow.NewClient(partnerAcct.Email, partnerAcct.APIKey, opts...); err != nil {
		return ChaosResult{}, err
	}
	if r.buyer, err = escrow.NewClient(buyerAcct.Email, buyerAcct.APIKey, opts...); err != nil {
		return ChaosResult{}, err
	}

	if cfg.FaultRate > 0 {
		kinds := faultKinds(cfg.Timeout)
		// Faults are tried in order and the first that fires applies: each fires with the
		// probability q that makes 1-(1-q)^k, the chance that any fires, the fault rate.
		q := 1 - math.Pow(1-cfg.FaultRate, 1/float64(len(kinds)))
		for _, f := range kinds {
			f.Probability = q
			if err := srv.InjectFault(f); err != nil {
				return ChaosResult{}, err
			}
		}
	}

	var wg sync.WaitGroup
	var next atomic.Int64
	for range cfg.Workers {
		wg.Go(func() {
			for ctx.Err() == nil {
				t := &chaosTx{ref: fmt.Sprintf("chaos-%06d", next.Add(1)), refused: map[step]int{}, other: map[step]int{}}
				if !r.drive(ctx, t) {
					return
				}
			}
		})
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return ChaosResult{}, err
	}
	srv.ClearFaults()
	res, err := r.verify(ctx, srv, partnerAcct)
	res.Attempts, res.NoAnswer = counter.attempts.Load(), counter.noAnswer.Load()
	return res, err
}

// op reserves one SDK call from the budget.
func (r *chaosRun) op() bool { return r.ops.Add(1) <= int64(r.cfg.Ops) }

// drive takes one transaction as far as it goes; it reports false when the budget is spent.
func (r *chaosRun) drive(ctx context.Context, t *chaosTx) bool {
	if !r.op() {
		return false
	}
	r.mu.Lock()
	r.txs = append(r.txs, t)
	r.mu.Unlock()
	tx, err := r.partner.Transactions.Create(ctx, merchandise(r.buyerEmail, r.sellerEmail, t.ref))
	if r.record(t, stepCreated, err) {
		t.id = tx.ID
		if tx.Reference != t.ref {
			// The SDK handed back some other transaction: as good as lost.
			t.hasDone = false
			r.untypedf("create %s answered reference %q", t.ref, tx.Reference)
			return true
		}
	} else {
		if !r.op() {
			return false
		}
		// The create may have happened: find it, as a user would, before moving on.
		found, err := r.partner.Transactions.GetByReference(ctx, t.ref)
		if r.classify(err); err != nil {
			return true
		}
		t.id = found.ID
	}

	as := func(email string) []escrow.RequestOption { return []escrow.RequestOption{escrow.AsCustomer(email)} }
	actions := []struct {
		s  step
		do func() error
	}{
		{stepBuyerAgreed, func() error { _, err := r.partner.Transactions.Agree(ctx, t.id, as(r.buyerEmail)...); return err }},
		{stepSellerAgreed, func() error { _, err := r.partner.Transactions.Agree(ctx, t.id, as(r.sellerEmail)...); return err }},
		{stepFunded, nil},
		{stepShipped, func() error {
			info := &escrow.ShippingInformation{TrackingInformation: &escrow.TrackingInformation{Carrier: "UPS", TrackingID: "1Z" + t.ref}}
			_, err := r.partner.Transactions.Ship(ctx, t.id, info, as(r.sellerEmail)...)
			return err
		}},
		{stepReceived, func() error { _, err := r.partner.Transactions.Receive(ctx, t.id, as(r.buyerEmail)...); return err }},
		// The API refuses accept As-Customer: the buyer accepts with its own key.
		{stepAccepted, func() error { _, err := r.buyer.Transactions.Accept(ctx, t.id); return err }},
	}
	for _, a := range actions {
		if a.do == nil { // funding is the emulator's, not an API call
			if err := r.srv.ApprovePayment(t.id); err != nil {
				// Both agreements were confirmed through the SDK, yet the emulator
				// disagrees: the SDK's answer was wrong.
				r.mu.Lock()
				r.inconsistent++
				r.mu.Unlock()
				return true
			}
			continue
		}
		done := false
		for try := 0; try < 3 && !done; try++ {
			if !r.op() {
				return false
			}
			if r.record(t, a.s, a.do()) {
				done = true
				break
			}
			// The action may have been performed although it failed: look before trying
			// again, since a repeated action is refused (400) once it has been done.
			if !r.op() {
				return false
			}
			cur, err := r.partner.Transactions.Get(ctx, t.id)
			r.classify(err)
			done = err == nil && reached(cur, a.s)
		}
		if !done {
			return true
		}
	}
	return true
}

// reached reports whether a transaction, as the SDK decoded it, shows step s done.
func reached(tx *escrow.Transaction, s step) bool {
	if len(tx.Items) == 0 {
		return false
	}
	buyer, _ := tx.Party(escrow.RoleBuyer)
	seller, _ := tx.Party(escrow.RoleSeller)
	st := tx.Items[0].Status
	switch s {
	case stepBuyerAgreed:
		return buyer.Agreed
	case stepSellerAgreed:
		return seller.Agreed
	case stepShipped:
		return st.Shipped
	case stepReceived:
		return st.Received
	case stepAccepted:
		return st.Accepted
	}
	return false
}

// record notes the outcome of the call for step s and reports whether it succeeded.
func (r *chaosRun) record(t *chaosTx, s step, err error) bool {
	known := r.classify(err)
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case err == nil:
		t.done, t.hasDone = s, true
		t.other[s]++
		return true
	case known:
		t.refused[s]++
	default:
		t.other[s]++
	}
	return false
}

// classify counts an error by type; it reports whether the error says for certain that
// the request was not performed.
func (r *chaosRun) classify(err error) (notPerformed bool) {
	if err == nil {
		return false
	}
	var (
		rl *escrow.RateLimitError
		ve *escrow.ValidationError
		ae *escrow.APIError
		te *escrow.TransportError
		de *escrow.DecodeError
	)
	kind := ""
	switch {
	case errors.As(err, &rl):
		kind, notPerformed = "ratelimit", true // refused, never performed
	case errors.As(err, &ve):
		kind, notPerformed = "validation", true
	case errors.As(err, &ae):
		kind = fmt.Sprintf("api%d", ae.StatusCode)
		// A 5xx may come after the work was done; any other answer means it was not.
		notPerformed = ae.StatusCode < 500
	case errors.As(err, &te):
		kind, notPerformed = "transport", !te.OutcomeUnknown
	case errors.As(err, &de):
		kind = "decode"
	default:
		r.untypedf("%T: %v", err, err)
		return false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errKinds[kind]++
	if !notPerformed {
		r.unknown++
	}
	return notPerformed
}

func (r *chaosRun) untypedf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.nUntyped++
	if len(r.untyped) < 5 {
		r.untyped = append(r.untyped, fmt.Sprintf(format, args...))
	}
}

// wireTx is a transaction as the emulator renders it to the partner, decoded here with
// encoding/json rather than the SDK, so that the check does not trust the code it checks.
type wireTx struct {
	ID        int64  `json:"id"`
	Reference string `json:"reference"`
	Parties   []struct {
		Role   string `json:"role"`
		Agreed bool   `json:"agreed"`
	} `json:"parties"`
	Items []struct {
		Schedule []struct {
			Status struct {
				Secured bool `json:"secured"`
			} `json:"status"`
		} `json:"schedule"`
		Status map[string]bool `json:"status"`
	} `json:"items"`
}

// has reports whether the emulator's transaction shows step s done.
func (w wireTx) has(s step) bool {
	if len(w.Items) == 0 {
		return false
	}
	agreed := func(role string) bool {
		for _, p := range w.Parties {
			if p.Role == role {
				return p.Agreed
			}
		}
		return false
	}
	st := w.Items[0].Status
	switch s {
	case stepCreated:
		return true
	case stepBuyerAgreed:
		return agreed("buyer")
	case stepSellerAgreed:
		return agreed("seller")
	case stepFunded:
		return len(w.Items[0].Schedule) > 0 && w.Items[0].Schedule[0].Status.Secured
	case stepShipped:
		return st["shipped"]
	case stepReceived:
		return st["received"]
	case stepAccepted:
		return st["accepted"]
	}
	return false
}

// verify reads every transaction the partner created, with plain net/http and no faults,
// and compares the emulator's state with what the SDK's answers claimed.
func (r *chaosRun) verify(ctx context.Context, srv *escrowtest.Server, acct escrowtest.Account) (ChaosResult, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"partner/transactions", nil)
	if err != nil {
		return ChaosResult{}, err
	}
	req.SetBasicAuth(acct.Email, acct.APIKey)
	resp, err := srv.Client().Do(req)
	if err != nil {
		return ChaosResult{}, fmt.Errorf("bench: chaos: listing: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<10))
		return ChaosResult{}, fmt.Errorf("bench: chaos: listing: %s: %s", resp.Status, b)
	}
	var list struct {
		Transactions []wireTx `json:"transactions"`
		NextCursor   *int64   `json:"next_cursor"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&list); err != nil {
		return ChaosResult{}, fmt.Errorf("bench: chaos: listing: %w", err)
	}
	if list.NextCursor != nil {
		return ChaosResult{}, errors.New("bench: chaos: the listing without a limit was paged")
	}

	byRef := map[string][]wireTx{}
	for _, w := range list.Transactions {
		byRef[w.Reference] = append(byRef[w.Reference], w)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	res := ChaosResult{
		Ops:     int(min(r.ops.Load(), int64(r.cfg.Ops))),
		Creates: len(r.txs), Created: len(byRef),
		UntypedErrors: r.nUntyped, Untyped: r.untyped, Unknown: r.unknown, Errors: r.errKinds,
		Inconsistent: r.inconsistent,
	}
	for _, ws := range byRef {
		res.Duplicates += len(ws) - 1
	}
	for _, t := range r.txs {
		ws := byRef[t.ref]
		if len(ws) == 0 {
			if t.hasDone {
				res.Lost++ // a create that returned success made nothing
			}
			continue
		}
		w := ws[0]
		if t.hasDone && (t.id != w.ID || !w.has(t.done)) {
			res.Lost++
		}
		for s, n := range t.refused {
			if n > 0 && t.other[s] == 0 && w.has(s) {
				res.Phantoms++ // said not performed, every time, yet it shows
			}
		}
		if w.has(stepAccepted) {
			res.Completed++
		}
	}
	return res, nil
}
