package bench

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	escrow "github.com/escrowkit/escrow-go"
	"github.com/escrowkit/escrow-go/escrowtest"
	"github.com/escrowkit/escrow-go/webhook"
)

// FloodConfig is a forger's flood of deliveries naming distinct made-up transactions,
// against a webhook.Handler at its default options (with a secret or without).
type FloodConfig struct {
	// Forged is how many forged deliveries are sent, each naming another made-up id;
	// Senders how many goroutines send them.
	Forged, Senders int
	// Secret registers the handler's DeliveryURL; the forgeries, who do not know it, are
	// sent to the plain URL with a guessed last segment.
	Secret bool
	// Leaked: the forger knows the secret: forgeries go to the registered URL.
	Leaked bool
	// Replays real transactions, made and handed over before the flood, are named by
	// replayed deliveries at ReplayRate a second for ReplayFor, sent to the registered
	// URL, with event names their state does not show (reject, cancel, ...); the real
	// events are made halfway through.
	Replays    int
	ReplayRate float64
	ReplayFor  time.Duration
	// Window is how long from the flood's start the fetches spent on forgeries are
	// counted (the first 10 s); MaxWait bounds the wait for the real events.
	Window, MaxWait time.Duration
}

// DefaultFlood is the flood: 16,000 made-up ids from 32 senders, past the
// handler's default queue of 10,000.
var DefaultFlood = FloodConfig{Forged: 16_000, Senders: 32, Window: 10 * time.Second, MaxWait: 60 * time.Second}

// FloodResult is what a flood cost and what it did to the real events.
type FloodResult struct {
	Forged int
	Secret bool
	Leaked bool
	// Replays, ReplayRate: as configured; Replayed the replayed deliveries sent and
	// ReplayFetches the fetches of the replayed transactions.
	Replays       int
	ReplayRate    float64
	Replayed      int64
	ReplayFetches int64
	// Sending is how long the forgeries took to send and be answered.
	Sending time.Duration
	// ForgedRefused are forgeries answered outside 2xx (404 at the door, 503 queue full).
	ForgedRefused int64
	// KnownLatency is how long a real event of a transaction handed over before the
	// flood took from its action's request to the callback; -1 if not within MaxWait.
	KnownLatency time.Duration
	// NewLatency is the same for the creation of a transaction made during the flood,
	// an id the handler had never seen.
	NewLatency time.Duration
	// RealNon2xx counts the emulator's real deliveries not answered 2xx.
	RealNon2xx int
	// ForgedFetches are GET /transaction/{id} of made-up ids within Window of the flood's
	// start, Limit the endpoint's limit per window (RateLimit-Limit) and LimitShare the
	// first as a share of the second.
	ForgedFetches, Limit int64
	LimitShare           float64
	// ForgedFetchesTotal counts them until the end of the run.
	ForgedFetchesTotal int64
	// PeakGoroutines is the most goroutines the whole process held during the flood,
	// emulator and senders included.
	PeakGoroutines int
}

func (r FloodResult) String() string {
	return fmt.Sprintf("flood forged=%d secret=%v leaked=%v replays=%d replay_rate=%.0f/s replayed=%d replay_fetches=%d sending=%s forged_refused=%d known_event_latency=%s new_event_latency=%s real_non_2xx=%d forged_fetches_first_window=%d limit=%d limit_share=%.1f%% forged_fetches_total=%d peak_goroutines=%d",
		r.Forged, r.Secret, r.Leaked, r.Replays, r.ReplayRate, r.Replayed, r.ReplayFetches, r.Sending.Round(time.Millisecond), r.ForgedRefused, latency(r.KnownLatency),
		latency(r.NewLatency), r.RealNon2xx, r.ForgedFetches, r.Limit, 100*r.LimitShare,
		r.ForgedFetchesTotal, r.PeakGoroutines)
}

// latency prints a latency, or "never" for one that did not end within MaxWait.
func latency(d time.Duration) string {
	if d < 0 {
		return "never"
	}
	return d.Round(time.Millisecond).String()
}

// forgedBase is the first made-up id: far above the emulator's (200001 and up).
const forgedBase = 900_000_000

// forgeryCounter counts the GET /transaction/{id} of made-up ids passing through it,
// within the window from start and in all, and notes the endpoint's limit.
type forgeryCounter struct {
	next          http.RoundTripper
	start         atomic.Int64 // unix nanoseconds; 0 before the flood
	window        time.Duration
	inWindow, all atomic.Int64
	limit         atomic.Int64
	replayIDs     map[int64]bool // set before the flood starts, read-only after
	replays       atomic.Int64   // fetches of replayed ids
}

func (f *forgeryCounter) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := f.next.RoundTrip(req)
	i := strings.LastIndex(req.URL.Path, "/transaction/")
	if req.Method != http.MethodGet || i < 0 {
		return resp, err
	}
	id, perr := strconv.ParseInt(req.URL.Path[i+len("/transaction/"):], 10, 64)
	if perr != nil {
		return resp, err
	}
	if err == nil {
		if l, lerr := strconv.ParseInt(resp.Header.Get("RateLimit-Limit"), 10, 64); lerr == nil {
			f.limit.Store(l)
		}
	}
	if start := f.start.Load(); start != 0 && f.replayIDs[id] {
		f.replays.Add(1)
	}
	if start := f.start.Load(); id >= forgedBase && start != 0 {
		f.all.Add(1)
		if time.Since(time.Unix(0, start)) <= f.window {
			f.inWindow.Add(1)
		}
	}
	return resp, err
}

// floodWorld is the emulator, the application's client and the receiver of a flood.
type floodWorld struct {
	srv     *escrowtest.Server
	app     *escrow.Client
	counter *forgeryCounter
	h       *webhook.Handler
	hook    *httptest.Server
	log     *eventLog
	target  string // where forgeries are sent: the plain URL, or the registered one if leaked
	// registered is the URL registered with the API: replays are sent there.
	registered string
}

// eventLog records when each transaction's events were handed over.
type eventLog struct {
	mu   sync.Mutex
	when map[string]time.Time // "id event"
}

func (l *eventLog) callback(_ context.Context, ev webhook.ConfirmedEvent) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	k := fmt.Sprintf("%d %s", ev.TransactionID, ev.Name)
	if _, ok := l.when[k]; !ok {
		l.when[k] = time.Now()
	}
	return nil
}

func (l *eventLog) at(id int64, name escrow.EventName) (time.Time, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	t, ok := l.when[fmt.Sprintf("%d %s", id, name)]
	return t, ok
}

func newFloodWorld(ctx context.Context, cfg FloodConfig) (*floodWorld, error) {
	w := &floodWorld{srv: escrowtest.NewServer(), log: &eventLog{when: map[string]time.Time{}}}
	partner := w.srv.AddPartner("market@example.com")
	w.srv.AddCustomer("buyer@example.com")
	w.srv.AddCustomer("seller@example.com")
	var err error
	if w.app, err = escrow.NewClient(partner.Email, partner.APIKey, escrow.WithBaseURL(w.srv.URL), escrow.WithHTTPClient(w.srv.Client())); err != nil {
		return w, err
	}
	w.counter = &forgeryCounter{next: w.srv.Client().Transport, window: cfg.Window}
	receiver, err := escrow.NewClient(partner.Email, partner.APIKey, escrow.WithBaseURL(w.srv.URL), escrow.WithHTTPClient(&http.Client{Transport: w.counter}))
	if err != nil {
		return w, err
	}
	opt := webhook.Options{}
	if cfg.Secret {
		opt.Secrets = []string{webhook.NewSecret()}
	}
	w.h = webhook.NewHandler(receiver, w.log.callback, opt)
	w.hook = httptest.NewServer(w.h)
	w.target = w.hook.URL + "/escrow"
	registered := w.target
	if cfg.Secret {
		if registered, err = w.h.DeliveryURL(w.target); err != nil {
			return w, err
		}
	}
	w.registered = registered
	if cfg.Leaked {
		w.target = registered
	}
	_, err = w.app.Webhooks.Create(ctx, escrow.Me, registered)
	return w, err
}

func (w *floodWorld) close() {
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	w.h.Shutdown(sctx) // gives up the forgeries still queued
	w.hook.Close()
	w.srv.Close()
}

// RunFlood hands a real transaction's creation to a Handler, then floods it with
// cfg.Forged deliveries of distinct made-up ids from cfg.Senders goroutines. With the
// flood in flight, both parties agree to the real transaction (an event of a known
// transaction) and a new transaction is made (an id never seen); it measures how long
// each took to be handed over, what the forgeries cost in fetches and goroutines, and
// whether any real delivery was answered outside 2xx.
func RunFlood(ctx context.Context, cfg FloodConfig) (FloodResult, error) {
	if cfg.Forged < 0 || cfg.Senders <= 0 || cfg.Window <= 0 || cfg.MaxWait <= 0 || (cfg.Replays > 0 && (cfg.ReplayRate <= 0 || cfg.ReplayFor <= 0)) {
		return FloodResult{}, errors.New("flood: Senders, Window and MaxWait must be positive, Forged not negative, and ReplayRate and ReplayFor positive with Replays")
	}
	w, err := newFloodWorld(ctx, cfg)
	defer w.close()
	if err != nil {
		return FloodResult{}, err
	}
	known, err := w.app.Transactions.Create(ctx, merchandise("buyer@example.com", "seller@example.com", ""))
	if err != nil {
		return FloodResult{}, err
	}
	if err := w.settled(ctx, known.ID, escrow.EventCreate); err != nil {
		return FloodResult{}, err
	}

	replayed, err := w.replayed(ctx, cfg.Replays)
	if err != nil {
		return FloodResult{}, err
	}
	res := FloodResult{Forged: cfg.Forged, Secret: cfg.Secret, Leaked: cfg.Leaked, Replays: cfg.Replays, ReplayRate: cfg.ReplayRate, KnownLatency: -1, NewLatency: -1}
	peak := sampleGoroutines()
	start := time.Now()
	w.counter.start.Store(start.UnixNano())
	sent, replaysSent := make(chan struct{}), make(chan struct{})
	var next, refused, replays atomic.Int64
	go func() {
		defer close(sent)
		refused.Store(sendForgeries(ctx, w.target, cfg, &next))
	}()
	go func() {
		defer close(replaysSent)
		sendReplays(ctx, w.registered, replayed, cfg, &replays)
	}()
	// The flood in flight: three quarters sent, past the default queue of 10,000, and
	// halfway through the replays.
	for (next.Load() < int64(cfg.Forged)*3/4 || (cfg.Replays > 0 && time.Since(start) < cfg.ReplayFor/2)) && ctx.Err() == nil {
		time.Sleep(time.Millisecond)
	}
	agreed, created, err := w.realEvents(ctx, known.ID)
	if err != nil {
		<-sent
		<-replaysSent
		return res, err
	}
	<-sent
	res.Sending, res.ForgedRefused = time.Since(start), refused.Load()

	res.KnownLatency = w.waitFor(ctx, known.ID, escrow.EventAgree, agreed, start.Add(cfg.MaxWait))
	res.NewLatency = w.waitFor(ctx, created.id, escrow.EventCreate, created.at, start.Add(cfg.MaxWait))
	for time.Since(start) < cfg.Window && ctx.Err() == nil { // the whole window counted
		time.Sleep(10 * time.Millisecond)
	}
	<-replaysSent
	res.PeakGoroutines = peak()
	res.Replayed, res.ReplayFetches = replays.Load(), w.counter.replays.Load()
	w.count(&res)
	return res, ctx.Err()
}

// replayed makes n transactions and waits until each creation was handed over: the real
// ids a replayer names.
func (w *floodWorld) replayed(ctx context.Context, n int) ([]int64, error) {
	ids := make([]int64, 0, n)
	w.counter.replayIDs = make(map[int64]bool, n)
	for range n {
		tx, err := w.app.Transactions.Create(ctx, merchandise("buyer@example.com", "seller@example.com", ""))
		if err != nil {
			return nil, err
		}
		ids = append(ids, tx.ID)
		w.counter.replayIDs[tx.ID] = true
	}
	for _, id := range ids {
		if err := w.settled(ctx, id, escrow.EventCreate); err != nil {
			return nil, err
		}
	}
	return ids, nil
}

// replayNames are events a transaction just created does not show: each replay of one
// is a claim its fetch does not confirm.
var replayNames = []string{"reject", "ship_return", "cancel", "accept", "receive", "ship", "agree", "payment_approved", "complete", "accept_return", "receive_return", "reject_return"}

// sendReplays posts deliveries naming ids with replayNames to target, in turn, at
// cfg.ReplayRate a second for cfg.ReplayFor, counting them in sent.
func sendReplays(ctx context.Context, target string, ids []int64, cfg FloodConfig, sent *atomic.Int64) {
	if len(ids) == 0 {
		return
	}
	hc := &http.Client{Timeout: 10 * time.Second}
	defer hc.CloseIdleConnections()
	every := time.Duration(float64(time.Second) / cfg.ReplayRate)
	t := time.NewTicker(every)
	defer t.Stop()
	var wg sync.WaitGroup
	defer wg.Wait()
	for i, end := 0, time.Now().Add(cfg.ReplayFor); time.Now().Before(end); i++ {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		body := fmt.Sprintf(`{"event": %q, "event_type": "transaction", "transaction_id": %d}`, replayNames[(i/len(ids))%len(replayNames)], ids[i%len(ids)])
		wg.Go(func() {
			if resp, err := hc.Post(target, "application/json", strings.NewReader(body)); err == nil {
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		})
		sent.Add(1)
	}
}

// count fills in the fetches spent on forgeries and the real deliveries not answered 2xx.
func (w *floodWorld) count(res *FloodResult) {
	res.ForgedFetches, res.ForgedFetchesTotal, res.Limit = w.counter.inWindow.Load(), w.counter.all.Load(), w.counter.limit.Load()
	if res.Limit > 0 {
		res.LimitShare = float64(res.ForgedFetches) / float64(res.Limit)
	}
	for _, d := range w.srv.Deliveries() {
		if d.StatusCode < 200 || d.StatusCode > 299 {
			res.RealNon2xx++
		}
	}
}

// settled waits until the event of id was handed over.
func (w *floodWorld) settled(ctx context.Context, id int64, name escrow.EventName) error {
	if err := w.srv.FlushWebhooks(ctx); err != nil {
		return err
	}
	if err := w.h.Flush(ctx); err != nil {
		return err
	}
	if _, ok := w.log.at(id, name); !ok {
		return fmt.Errorf("flood: %s of %d was not handed over before the flood", name, id)
	}
	return nil
}

// made is a transaction created, and when.
type made struct {
	id int64
	at time.Time
}

// realEvents makes the real events during the flood: both parties agree to the known
// transaction, and a new one is made. Each is timed from just before the call that makes
// it (agreed: the second agreement), since its delivery may be handed over before the
// call's answer arrives.
func (w *floodWorld) realEvents(ctx context.Context, known int64) (agreed time.Time, created made, err error) {
	for _, who := range []string{"buyer@example.com", "seller@example.com"} {
		agreed = time.Now()
		if _, err := w.app.Transactions.Agree(ctx, known, escrow.AsCustomer(who)); err != nil {
			return agreed, created, err
		}
	}
	at := time.Now()
	tx, err := w.app.Transactions.Create(ctx, merchandise("buyer@example.com", "seller@example.com", ""))
	if err != nil {
		return agreed, created, err
	}
	return agreed, made{id: tx.ID, at: at}, nil
}

// waitFor waits until the event is handed over, or the deadline, and returns how long it
// took from since; -1 when it was not handed over in time.
func (w *floodWorld) waitFor(ctx context.Context, id int64, name escrow.EventName, since, deadline time.Time) time.Duration {
	for ctx.Err() == nil && time.Now().Before(deadline) {
		if at, ok := w.log.at(id, name); ok {
			return at.Sub(since)
		}
		time.Sleep(5 * time.Millisecond)
	}
	return -1
}

// sendForgeries posts cfg.Forged deliveries of made-up ids to target (with a guessed
// secret segment when cfg.Secret and not cfg.Leaked) and returns how many were answered
// outside 2xx; next counts those taken by a sender.
func sendForgeries(ctx context.Context, target string, cfg FloodConfig, next *atomic.Int64) int64 {
	return postEach(ctx, cfg.Forged, cfg.Senders, next, func(i int64) (string, string) {
		u := target
		if cfg.Secret && !cfg.Leaked {
			u += "/guess" + strconv.FormatInt(i, 36)
		}
		return u, fmt.Sprintf(`{"event": "payment_approved", "event_type": "transaction", "transaction_id": %d}`, forgedBase+i)
	})
}

// postEach posts n deliveries from senders goroutines, the i-th (1 to n) to the URL and
// with the body delivery gives, and returns how many were answered outside 2xx or not at
// all; next counts those taken by a sender.
func postEach(ctx context.Context, n, senders int, next *atomic.Int64, delivery func(i int64) (url, body string)) int64 {
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: senders}, Timeout: 10 * time.Second}
	defer hc.CloseIdleConnections()
	var refused atomic.Int64
	var wg sync.WaitGroup
	for range senders {
		wg.Go(func() {
			for i := next.Add(1); i <= int64(n) && ctx.Err() == nil; i = next.Add(1) {
				u, body := delivery(i)
				resp, err := hc.Post(u, "application/json", strings.NewReader(body))
				if err != nil {
					refused.Add(1)
					continue
				}
				io.Copy(io.Discard, resp.Body) // so that the connection is reused
				resp.Body.Close()
				if resp.StatusCode < 200 || resp.StatusCode > 299 {
					refused.Add(1)
				}
			}
		})
	}
	wg.Wait()
	return refused.Load()
}

// sampleGoroutines samples the process's goroutines every 10 ms until the returned
// function is called, which returns the most seen.
func sampleGoroutines() func() int {
	var most atomic.Int64
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(10 * time.Millisecond)
		defer t.Stop()
		for {
			if n := int64(runtime.NumGoroutine()); n > most.Load() {
				most.Store(n)
			}
			select {
			case <-stop:
				return
			case <-t.C:
			}
		}
	}()
	return func() int {
		close(stop)
		<-done
		return int(most.Load())
	}
}

// floodProgram is the flags and output of `go run ./bench/flood`.
func floodProgram(fs *flag.FlagSet) func(context.Context, io.Writer, io.Writer) error {
	cfg := DefaultFlood
	fs.IntVar(&cfg.Forged, "forged", cfg.Forged, "forged deliveries, each of another made-up id")
	fs.IntVar(&cfg.Senders, "senders", cfg.Senders, "goroutines sending them")
	fs.BoolVar(&cfg.Secret, "secret", false, "the handler requires a delivery secret; the forger guesses")
	fs.BoolVar(&cfg.Leaked, "leaked", false, "the forger knows the delivery URL: forgeries are sent to it")
	fs.IntVar(&cfg.Replays, "replays", 0, "real transactions named by replayed deliveries with events their state does not show")
	fs.Float64Var(&cfg.ReplayRate, "replay-rate", 100, "replayed deliveries a second")
	fs.DurationVar(&cfg.ReplayFor, "replay-for", 30*time.Second, "how long the replays go on")
	fs.DurationVar(&cfg.Window, "window", cfg.Window, "count the fetches spent on forgeries this long from the flood's start")
	fs.DurationVar(&cfg.MaxWait, "max-wait", cfg.MaxWait, "give up waiting for the real events after this long")
	return func(ctx context.Context, stdout, _ io.Writer) error {
		res, err := RunFlood(ctx, cfg)
		if err != nil {
			return err
		}
		fmt.Fprintln(stdout, res)
		return nil
	}
}
