package bench

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
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

// ChaosResult is what a chaos run found. Every count but Ops, Unknown and Errors is checked
// against the emulator's own state, read without faults after the run, not against what the
// SDK said.
type ChaosResult struct {
	// Ops is the number of SDK calls made.
	Ops int
	// Creates is the number of Create calls; Created the number of distinct references
	// the emulator holds; Duplicates the effects beyond one per write: transactions per
	// reference, webhooks per URL, saved disbursement methods per account, wires marked
	// per transaction.
	Creates, Created, Duplicates int
	// Lost counts calls that returned success whose effect the emulator does not show.
	Lost int
	// Phantoms counts writes whose every call returned an error saying it was not
	// performed, whose effect the emulator nevertheless shows.
	Phantoms int
	// Unknown counts calls whose error said the outcome is unknown: an
	// escrow.ErrOutcomeUnknown, a 5xx or a transport error that may have been performed.
	Unknown int
	// Inconsistent counts fundings the emulator refused although the SDK had confirmed
	// that both parties agreed.
	Inconsistent int
	// UntypedErrors counts errors that are none of the SDK's error types.
	UntypedErrors int
	// GoroutinesLeaked is how many more goroutines run after the run, its server closed
	// and connections released, than before it.
	GoroutinesLeaked int
	// Errors counts the errors returned to the caller, by type; ErrorCalls is their sum.
	Errors     map[string]int
	ErrorCalls int
	// Writes counts the calls of each covered write.
	Writes map[string]int
	// Untyped holds up to five untyped errors' texts, to say what they were.
	Untyped []string
	// Completed counts transactions whose flow reached its last step.
	Completed int
	// Attempts are requests the SDK sent, retries and settling reads included; NoAnswer
	// those that got no HTTP answer (dropped or timed out).
	Attempts, NoAnswer int64
	Elapsed            time.Duration
}

// String is the result as one line of key=value pairs, the required ones first.
func (r ChaosResult) String() string {
	kv := func(m map[string]int) string {
		kinds := make([]string, 0, len(m))
		for k, n := range m {
			kinds = append(kinds, fmt.Sprintf("%s:%d", k, n))
		}
		sort.Strings(kinds)
		return strings.Join(kinds, ",")
	}
	return fmt.Sprintf("ops=%d created=%d duplicates=%d lost=%d phantoms=%d unknown_outcome=%d errors_to_caller=%d untyped_errors=%d goroutines_leaked=%d creates=%d inconsistent=%d finished=%d attempts=%d no_answer=%d errors=%s writes=%s elapsed_s=%.1f",
		r.Ops, r.Created, r.Duplicates, r.Lost, r.Phantoms, r.Unknown, r.ErrorCalls, r.UntypedErrors, r.GoroutinesLeaked,
		r.Creates, r.Inconsistent, r.Completed, r.Attempts, r.NoAnswer, kv(r.Errors), kv(r.Writes), r.Elapsed.Seconds())
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

// flow is the path a transaction takes, chosen by its number.
type flow int

const (
	flowAccept    flow = iota // pay by wire or card, ship, receive, accept
	flowReturn                // ... reject, ship back, receive back, accept or reject the return
	flowCancel                // agree, then cancelled by the partner
	flowMilestone             // two milestones, each shipped, received and accepted as an item
)

func flowOf(n int64) flow {
	switch {
	case n%10 == 3:
		return flowCancel
	case n%10 == 5 || n%10 == 8:
		return flowMilestone
	case n%4 == 1:
		return flowReturn
	}
	return flowAccept
}

// stepRecord is what the harness saw of one write of one transaction: how its calls
// ended, and how to tell from the emulator's state whether it took effect (nil when the
// state does not show it).
type stepRecord struct {
	name string
	has  func(w *wireState) bool
	// ok counts calls that returned success, refused those whose error said the write
	// was not performed, other the rest (outcome unknown).
	ok, refused, other int
}

// chaosTx is what the harness believes about one transaction, from the SDK's answers.
type chaosTx struct {
	n     int64
	ref   string
	flow  flow
	id    int64 // 0 until known
	steps []*stepRecord
	// finished is set when the last step of the flow returned success.
	finished bool
	// webhook is the URL registered for this transaction, "" when none was, by hookAcct.
	webhook  string
	hookAcct escrowtest.Account
	// account is the bank account number of the disbursement method added for it.
	account string
	wire    bool // MarkWireSent was called
}

// chaosRun holds a run's shared state.
type chaosRun struct {
	cfg                   ChaosConfig
	srv                   *escrowtest.Server
	partner, buyer, sell  *escrow.Client
	buyerEmail, sellEmail string
	partnerAcct, sellAcct escrowtest.Account
	opts                  []escrow.Option
	ops                   atomic.Int64

	mu           sync.Mutex
	txs          []*chaosTx
	errKinds     map[string]int
	errCalls     int
	writes       map[string]int
	untyped      []string
	nUntyped     int
	unknown      int
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
	r := &chaosRun{cfg: cfg, srv: srv, buyerEmail: "buyer@chaos.test", sellEmail: "seller@chaos.test", errKinds: map[string]int{}, writes: map[string]int{}}
	r.partnerAcct = srv.AddPartner("partner@chaos.test")
	buyerAcct := srv.AddCustomer(r.buyerEmail)
	r.sellAcct = srv.AddCustomer(r.sellEmail)

	counter := &countingTransport{next: srv.Client().Transport}
	defer counter.CloseIdleConnections()
	hc := &http.Client{Transport: counter, Timeout: cfg.Timeout}
	r.opts = []escrow.Option{escrow.WithBaseURL(srv.URL), escrow.WithHTTPClient(hc), escrow.WithMaxWait(2 * time.Second)}
	for _, c := range []struct {
		dst  **escrow.Client
		acct escrowtest.Account
	}{{&r.partner, r.partnerAcct}, {&r.buyer, buyerAcct}, {&r.sell, r.sellAcct}} {
		var err error
		if *c.dst, err = escrow.NewClient(c.acct.Email, c.acct.APIKey, r.opts...); err != nil {
			return ChaosResult{}, err
		}
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
				n := next.Add(1)
				t := &chaosTx{n: n, ref: fmt.Sprintf("chaos-%06d", n), flow: flowOf(n)}
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
	res, err := r.verify(ctx)
	res.Attempts, res.NoAnswer = counter.attempts.Load(), counter.noAnswer.Load()
	return res, err
}

// op reserves one SDK call from the budget.
func (r *chaosRun) op() bool { return r.ops.Add(1) <= int64(r.cfg.Ops) }

// do makes one SDK call for a write of t, once: the SDK settles ambiguous failures itself,
// so a user has nothing to add. It reports whether the call succeeded, and false with
// stop when the budget is spent.
func (r *chaosRun) do(t *chaosTx, name string, has func(*wireState) bool, call func() error) (ok, stop bool) {
	if !r.op() {
		return false, true
	}
	rec := &stepRecord{name: name, has: has}
	r.mu.Lock()
	t.steps = append(t.steps, rec)
	r.writes[name]++
	r.mu.Unlock()
	err := call()
	notPerformed := r.classify(err)
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case err == nil:
		rec.ok++
	case notPerformed:
		rec.refused++
	default:
		rec.other++
	}
	return err == nil, false
}

// drive takes one transaction as far as it goes; it reports false when the budget is spent.
func (r *chaosRun) drive(ctx context.Context, t *chaosTx) bool {
	r.mu.Lock()
	r.txs = append(r.txs, t)
	r.mu.Unlock()
	as := func(email string) []escrow.RequestOption { return []escrow.RequestOption{escrow.AsCustomer(email)} }
	tx := func(f func() (*escrow.Transaction, error)) func() error {
		return func() error { _, err := f(); return err }
	}

	// One transaction in five registers a webhook first, each in an account of its own:
	// the emulator allows 20 per customer.
	if t.n%5 == 0 {
		url := "https://hooks.chaos.test/" + t.ref
		t.hookAcct = r.srv.AddCustomer("hooks-" + t.ref + "@chaos.test")
		hc, err := escrow.NewClient(t.hookAcct.Email, t.hookAcct.APIKey, r.opts...)
		if err != nil {
			r.untypedf("client for %s: %v", t.hookAcct.Email, err)
			return true
		}
		t.webhook = url
		if _, stop := r.do(t, "webhook", func(w *wireState) bool { return w.webhooks[url] > 0 }, func() error {
			_, err := hc.Webhooks.Create(ctx, escrow.Me, url)
			return err
		}); stop {
			return false
		}
	}

	req := merchandise(r.buyerEmail, r.sellEmail, t.ref)
	if t.flow == flowMilestone {
		req = milestones(r.buyerEmail, r.sellEmail, t.ref)
	}
	var created *escrow.Transaction
	ok, stop := r.do(t, "create", func(w *wireState) bool { return w.tx != nil }, func() error {
		var err error
		created, err = r.partner.Transactions.Create(ctx, req)
		return err
	})
	if stop || !ok {
		return !stop
	}
	if created.Reference != t.ref {
		r.untypedf("create %s answered reference %q", t.ref, created.Reference)
		return true
	}
	t.id = created.ID
	id := t.id

	steps := []struct {
		name string
		has  func(*wireState) bool
		call func() error
	}{
		{"agree", agreedBy("buyer"), tx(func() (*escrow.Transaction, error) { return r.partner.Transactions.Agree(ctx, id, as(r.buyerEmail)...) })},
	}
	if t.flow == flowCancel {
		steps = append(steps, struct {
			name string
			has  func(*wireState) bool
			call func() error
		}{"cancel", func(w *wireState) bool { return w.tx.IsCancelled }, tx(func() (*escrow.Transaction, error) {
			return r.partner.Transactions.Cancel(ctx, id, "chaos")
		})})
		return r.run(t, steps)
	}
	steps = append(steps, struct {
		name string
		has  func(*wireState) bool
		call func() error
	}{"agree", agreedBy("seller"), tx(func() (*escrow.Transaction, error) { return r.partner.Transactions.Agree(ctx, id, as(r.sellEmail)...) })})
	if t.n%2 == 0 {
		t.wire = true
		steps = append(steps, struct {
			name string
			has  func(*wireState) bool
			call func() error
		}{"mark_wire_sent", func(w *wireState) bool { return w.wiresSent > 0 }, func() error {
			_, err := r.partner.Transactions.MarkWireSent(ctx, id, as(r.buyerEmail)...)
			return err
		}})
	} else {
		// The choice leaves nothing in the state to check: its outcomes are counted only.
		steps = append(steps, struct {
			name string
			has  func(*wireState) bool
			call func() error
		}{"choose_payment_method", nil, func() error {
			_, err := r.partner.Transactions.ChoosePaymentMethod(ctx, id, escrow.PaymentCreditCard, nil, as(r.buyerEmail)...)
			return err
		}})
	}
	if !r.run(t, steps) || !t.lastOK() {
		return r.ops.Load() <= int64(r.cfg.Ops)
	}
	// Funding is the emulator's, not an API call.
	if err := r.srv.ApprovePayment(id); err != nil {
		r.mu.Lock()
		r.inconsistent++ // both agreements were confirmed through the SDK
		r.mu.Unlock()
		return true
	}
	t.account = fmt.Sprintf("9%09d", t.n)
	account := t.account
	steps = steps[:0]
	steps = append(steps, struct {
		name string
		has  func(*wireState) bool
		call func() error
	}{"select_disbursement_method", func(w *wireState) bool { return w.selected == account }, func() error {
		_, err := r.sell.Transactions.SelectDisbursementMethod(ctx, id, &escrow.DisbursementMethod{
			Type: escrow.DisbursementWireTransfer, AccountName: "Chaos Seller", BankName: "Chaos Bank",
			BankSwiftCode: "CHAOUS33", BankAccountNumber: account,
		})
		return err
	}})
	type stepT = struct {
		name string
		has  func(*wireState) bool
		call func() error
	}
	goods := func(name string, item int, flag string, c *escrow.Client, opts []escrow.RequestOption) stepT {
		act := escrow.Action(name)
		has := func(w *wireState) bool { return len(w.tx.Items) > item && w.tx.Items[item].Status[flag] }
		if t.flow == flowMilestone {
			return stepT{"item_" + name, has, tx(func() (*escrow.Transaction, error) {
				return c.Transactions.ActOnItem(ctx, id, created.Items[item].ID, &escrow.ActionRequest{Action: act}, opts...)
			})}
		}
		return stepT{name, has, tx(func() (*escrow.Transaction, error) {
			return c.Transactions.Act(ctx, id, &escrow.ActionRequest{Action: act}, opts...)
		})}
	}
	items := 1
	if t.flow == flowMilestone {
		items = len(created.Items)
	}
	for i := range items {
		steps = append(steps,
			goods("ship", i, "shipped", r.partner, as(r.sellEmail)),
			goods("receive", i, "received", r.partner, as(r.buyerEmail)))
		if t.flow != flowReturn {
			// The API refuses accept As-Customer: the buyer accepts with its own key.
			steps = append(steps, goods("accept", i, "accepted", r.buyer, nil))
			continue
		}
		steps = append(steps,
			goods("reject", i, "rejected", r.partner, as(r.buyerEmail)),
			goods("ship_return", i, "shipped_returned", r.partner, as(r.buyerEmail)),
			goods("receive_return", i, "received_returned", r.partner, as(r.sellEmail)))
		// accept_return and reject_return are the seller's own: not delegable.
		if t.n%8 == 1 {
			steps = append(steps, goods("reject_return", i, "rejected_returned", r.sell, nil))
		} else {
			steps = append(steps, goods("accept_return", i, "accepted_returned", r.sell, nil))
		}
	}
	return r.run(t, steps)
}

// run makes the calls of steps in order until one fails; it reports false when the budget
// is spent, and marks the transaction finished when the last succeeded.
func (r *chaosRun) run(t *chaosTx, steps []struct {
	name string
	has  func(*wireState) bool
	call func() error
}) bool {
	for i, s := range steps {
		ok, stop := r.do(t, s.name, s.has, s.call)
		if stop {
			return false
		}
		if !ok {
			return true // a user stops at an error: the SDK already settled what it could
		}
		if i == len(steps)-1 {
			r.mu.Lock()
			t.finished = t.flow == flowCancel || s.name == "accept" || s.name == "item_accept" ||
				s.name == "accept_return" || s.name == "reject_return" || s.name == "item_accept_return" || s.name == "item_reject_return"
			r.mu.Unlock()
		}
	}
	return true
}

// lastOK reports whether the last step recorded succeeded.
func (t *chaosTx) lastOK() bool { return len(t.steps) > 0 && t.steps[len(t.steps)-1].ok > 0 }

func agreedBy(role string) func(*wireState) bool {
	return func(w *wireState) bool {
		for _, p := range w.tx.Parties {
			if p.Role == role {
				return p.Agreed
			}
		}
		return false
	}
}

// classify counts an error returned to the caller by type; it reports whether the error
// says for certain that the request was not performed.
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
	case errors.Is(err, escrow.ErrOutcomeUnknown):
		kind = "outcome_unknown"
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
	r.errCalls++
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
	ID          int64  `json:"id"`
	Reference   string `json:"reference"`
	IsCancelled bool   `json:"is_cancelled"`
	Parties     []struct {
		Role   string `json:"role"`
		Agreed bool   `json:"agreed"`
	} `json:"parties"`
	Items []struct {
		ID       int64 `json:"id"`
		Schedule []struct {
			Status struct {
				Secured bool `json:"secured"`
			} `json:"status"`
		} `json:"schedule"`
		Status map[string]bool `json:"status"`
	} `json:"items"`
}

// wireState is what the emulator shows of one chaos transaction and its side effects.
type wireState struct {
	tx        *wireTx
	webhooks  map[string]int // registered URLs of the transaction's webhook account
	wiresSent int            // payment_sent entries in the timeline
	selected  string         // the account number of the seller's selected method
}

// getJSON reads a path of the emulator as acct, with plain net/http.
func (r *chaosRun) getJSON(ctx context.Context, acct escrowtest.Account, path string, out any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, r.srv.URL+path, nil)
	if err != nil {
		return err
	}
	req.SetBasicAuth(acct.Email, acct.APIKey)
	resp, err := r.srv.Client().Do(req)
	if err != nil {
		return fmt.Errorf("bench: chaos: %s: %w", path, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<10))
		return fmt.Errorf("bench: chaos: %s: %s: %s", path, resp.Status, b)
	}
	return json.NewDecoder(resp.Body).Decode(out)
}

// verify reads every transaction the partner created, the partner's webhooks, the
// seller's saved methods and, where the run touched them, timelines and selected methods,
// with plain net/http and no faults, and compares them with what the SDK's answers claimed.
func (r *chaosRun) verify(ctx context.Context) (ChaosResult, error) {
	var list struct {
		Transactions []wireTx `json:"transactions"`
		NextCursor   *int64   `json:"next_cursor"`
	}
	if err := r.getJSON(ctx, r.partnerAcct, "partner/transactions", &list); err != nil {
		return ChaosResult{}, err
	}
	if list.NextCursor != nil {
		return ChaosResult{}, errors.New("bench: chaos: the listing without a limit was paged")
	}
	var saved struct {
		Saved []struct {
			BankAccountNumber string `json:"bank_account_number"`
		} `json:"saved_disbursement_methods"`
	}
	if err := r.getJSON(ctx, r.sellAcct, "customer/me/disbursement_methods", &saved); err != nil {
		return ChaosResult{}, err
	}
	savedByAccount := map[string]int{}
	for _, m := range saved.Saved {
		savedByAccount[m.BankAccountNumber]++
	}

	byRef := map[string][]wireTx{}
	for _, w := range list.Transactions {
		byRef[w.Reference] = append(byRef[w.Reference], w)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	res := ChaosResult{
		Ops:     int(min(r.ops.Load(), int64(r.cfg.Ops))),
		Creates: 0, Created: len(byRef),
		UntypedErrors: r.nUntyped, Untyped: r.untyped, Unknown: r.unknown, Errors: r.errKinds, ErrorCalls: r.errCalls,
		Writes: r.writes, Inconsistent: r.inconsistent,
	}
	for _, ws := range byRef {
		res.Duplicates += len(ws) - 1
	}
	for _, n := range savedByAccount {
		res.Duplicates += n - 1
	}
	for _, t := range r.txs {
		st := &wireState{webhooks: map[string]int{}}
		if t.webhook != "" {
			var hooks struct {
				Webhooks []struct {
					URL string `json:"url"`
				} `json:"webhooks"`
			}
			if err := r.getJSON(ctx, t.hookAcct, "customer/me/webhook", &hooks); err != nil {
				return res, err
			}
			for _, h := range hooks.Webhooks {
				st.webhooks[h.URL]++
			}
			res.Duplicates += max(st.webhooks[t.webhook]-1, 0)
		}
		if ws := byRef[t.ref]; len(ws) > 0 {
			st.tx = &ws[0]
		}
		if t.id != 0 && st.tx != nil {
			if t.wire {
				var tl struct {
					Entries []struct {
						Event string `json:"event"`
					} `json:"timeline_entries"`
				}
				if err := r.getJSON(ctx, r.partnerAcct, fmt.Sprintf("transaction/%d/timeline-entries", t.id), &tl); err != nil {
					return res, err
				}
				for _, e := range tl.Entries {
					if e.Event == "payment_sent" {
						st.wiresSent++
					}
				}
				res.Duplicates += max(st.wiresSent-1, 0)
			}
			if t.account != "" {
				var dm struct {
					Selected *struct {
						BankAccountNumber string `json:"bank_account_number"`
					} `json:"selected_disbursement_method"`
				}
				if err := r.getJSON(ctx, r.sellAcct, fmt.Sprintf("transaction/%d/disbursement_methods", t.id), &dm); err != nil {
					return res, err
				}
				if dm.Selected != nil {
					st.selected = dm.Selected.BankAccountNumber
				}
			}
		}
		for _, s := range t.steps {
			if s.name == "create" {
				res.Creates++
			}
			if s.has == nil || (st.tx == nil && s.name != "webhook") {
				if s.ok > 0 && st.tx == nil && s.name != "webhook" {
					res.Lost++ // a success on a transaction that is not there
				}
				continue
			}
			shown := s.has(st)
			if s.name == "create" && shown && (t.id != 0 && t.id != st.tx.ID) {
				res.Lost++ // the SDK handed back another transaction
			}
			switch {
			case s.ok > 0 && !shown:
				res.Lost++
			case s.refused > 0 && s.ok == 0 && s.other == 0 && shown:
				res.Phantoms++ // said not performed, every time, yet it shows
			}
		}
		if t.finished {
			res.Completed++
		}
	}
	return res, nil
}

// chaosProgram is the flags and output of `go run ./bench/chaos`.
func chaosProgram(fs *flag.FlagSet) func(context.Context, io.Writer, io.Writer) error {
	cfg := DefaultChaos
	fs.IntVar(&cfg.Ops, "ops", cfg.Ops, "SDK calls to make")
	fs.Float64Var(&cfg.FaultRate, "fault-rate", cfg.FaultRate, "fraction of requests that meet a fault, in [0, 1)")
	fs.IntVar(&cfg.Workers, "workers", cfg.Workers, "concurrent goroutines")
	fs.DurationVar(&cfg.Timeout, "timeout", cfg.Timeout, "the http.Client timeout of each attempt")
	fs.Int64Var(&cfg.Seed, "seed", cfg.Seed, "seed of the emulator's fault injection")
	fs.IntVar(&cfg.RateLimit, "limit", cfg.RateLimit, "the emulator's rate limit per endpoint per second; 0 turns it off, and injected 429s then carry no rate-limit headers")
	return func(ctx context.Context, stdout, stderr io.Writer) error {
		res, err := RunChaos(ctx, cfg)
		if err != nil {
			return err
		}
		fmt.Fprintln(stdout, res)
		for _, u := range res.Untyped {
			fmt.Fprintln(stderr, "untyped error:", u)
		}
		return nil
	}
}
