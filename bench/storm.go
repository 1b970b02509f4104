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
	"strings"
	"sync"
	"sync/atomic"
	"time"

	escrow "github.com/escrowkit/escrow-go"
	"github.com/escrowkit/escrow-go/escrowtest"
	"github.com/escrowkit/escrow-go/webhook"
)

// StormConfig is a delivery storm against a webhook.Handler at its default options.
type StormConfig struct {
	// Deliveries is how many copies are sent; Senders how many goroutines send them.
	Deliveries, Senders int
	// Unique sends a different invented event name in each copy instead of replaying the
	// real delivery: a forger growing the receiver's memory.
	Unique bool
}

// DefaultStorm is the storm: 10,000 replays of one real delivery.
var DefaultStorm = StormConfig{Deliveries: 10_000, Senders: 32}

// StormResult is what a storm cost.
type StormResult struct {
	Deliveries int
	Unique     bool
	Duration   time.Duration // from the first copy sent to the last answered
	// Fetches are the handler's GET /transaction/{id} of the stormed transaction, from the
	// storm's start until the handler is idle after it; Status429 the handler's 429s.
	Fetches, Status429 int64
	// Refused are copies not answered 200 (a full queue answers 503).
	Refused int64
	// Unrelated is how long a real event of another transaction, made while the storm
	// lasts, took from its creation to the callback.
	Unrelated time.Duration
	// HandedOver counts callbacks during the storm: only the unrelated transaction's
	// create belongs there.
	HandedOver int
	// HeapGrowth is the live heap after the storm minus before it, in bytes.
	HeapGrowth int64
}

func (r StormResult) String() string {
	return fmt.Sprintf("storm deliveries=%d unique_names=%v duration=%s fetches=%d status429=%d refused=%d unrelated_event_latency=%s handed_over=%d heap_growth_kb=%d",
		r.Deliveries, r.Unique, r.Duration.Round(time.Millisecond), r.Fetches, r.Status429, r.Refused,
		r.Unrelated.Round(time.Millisecond), r.HandedOver, r.HeapGrowth/1024)
}

// fetchCounter counts the GETs of one transaction that pass through it.
type fetchCounter struct {
	next      http.RoundTripper
	path      atomic.Value // string: the path counted
	fetches   atomic.Int64
	status429 atomic.Int64
}

func (f *fetchCounter) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := f.next.RoundTrip(req)
	if p, _ := f.path.Load().(string); p != "" && req.Method == http.MethodGet && strings.HasSuffix(req.URL.Path, p) {
		f.fetches.Add(1)
	}
	if err == nil && resp.StatusCode == http.StatusTooManyRequests {
		f.status429.Add(1)
	}
	return resp, err
}

func (f *fetchCounter) CloseIdleConnections() {
	if c, ok := f.next.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

// handedLog records callbacks with their time.
type handedLog struct {
	mu   sync.Mutex
	when map[int64]time.Time // first callback per transaction
	n    int
}

func (h *handedLog) callback(_ context.Context, ev webhook.ConfirmedEvent) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.n++
	if _, ok := h.when[ev.TransactionID]; !ok {
		h.when[ev.TransactionID] = time.Now()
	}
	return nil
}

func (h *handedLog) at(id int64) (time.Time, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	t, ok := h.when[id]
	return t, ok
}

// RunStorm hands one real transaction's delivery to a Handler, then sends cfg.Deliveries
// copies of it (or of invented names) to the Handler's URL as fast as cfg.Senders
// goroutines can, and creates an unrelated transaction while the storm lasts. The
// emulator's rate limit is its default, 1,000 requests a minute per endpoint.
func RunStorm(ctx context.Context, cfg StormConfig) (StormResult, error) {
	if cfg.Deliveries <= 0 || cfg.Senders <= 0 {
		return StormResult{}, errors.New("storm: Deliveries and Senders must be positive")
	}
	srv := escrowtest.NewServer()
	defer srv.Close()
	partner := srv.AddPartner("market@example.com")
	srv.AddCustomer("buyer@example.com")
	srv.AddCustomer("seller@example.com")
	app, err := escrow.NewClient(partner.Email, partner.APIKey, escrow.WithBaseURL(srv.URL), escrow.WithHTTPClient(srv.Client()))
	if err != nil {
		return StormResult{}, err
	}
	counter := &fetchCounter{next: srv.Client().Transport}
	defer counter.CloseIdleConnections()
	hc := &http.Client{Transport: counter}
	receiverClient, err := escrow.NewClient(partner.Email, partner.APIKey, escrow.WithBaseURL(srv.URL), escrow.WithHTTPClient(hc))
	if err != nil {
		return StormResult{}, err
	}
	log := &handedLog{when: make(map[int64]time.Time)}
	h := webhook.NewHandler(receiverClient, log.callback, webhook.Options{})
	hook := httptest.NewServer(h)
	defer hook.Close()
	defer func() {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		h.Shutdown(sctx)
	}()
	if _, err := app.Webhooks.Create(ctx, escrow.Me, hook.URL+"/escrow"); err != nil {
		return StormResult{}, err
	}

	// The real event, handed over before the storm.
	real, err := app.Transactions.Create(ctx, merchandise("buyer@example.com", "seller@example.com", ""))
	if err != nil {
		return StormResult{}, err
	}
	if err := srv.FlushWebhooks(ctx); err != nil {
		return StormResult{}, err
	}
	if err := h.Flush(ctx); err != nil {
		return StormResult{}, err
	}
	if _, ok := log.at(real.ID); !ok {
		return StormResult{}, errors.New("storm: the real delivery was not handed over")
	}
	handedBefore := log.n
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	heapBefore := int64(ms.HeapAlloc)
	counter.path.Store(fmt.Sprintf("/transaction/%d", real.ID))

	sender := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: cfg.Senders}}
	defer sender.CloseIdleConnections()
	var next, refused atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	for range cfg.Senders {
		wg.Go(func() {
			for {
				i := next.Add(1)
				if i > int64(cfg.Deliveries) || ctx.Err() != nil {
					return
				}
				event := "create"
				if cfg.Unique {
					event = fmt.Sprintf("forged_%d", i)
				}
				body := fmt.Sprintf(`{"event": %q, "event_type": "transaction", "transaction_id": %d}`, event, real.ID)
				resp, err := sender.Post(hook.URL+"/escrow", "application/json", strings.NewReader(body))
				if err != nil {
					refused.Add(1)
					continue
				}
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					refused.Add(1)
				}
			}
		})
	}
	// While the storm lasts: a real event of another transaction.
	for next.Load() < int64(cfg.Deliveries)/4 && ctx.Err() == nil {
		time.Sleep(time.Millisecond)
	}
	made := time.Now()
	other, err := app.Transactions.Create(ctx, merchandise("buyer@example.com", "seller@example.com", ""))
	if err != nil {
		wg.Wait()
		return StormResult{}, err
	}
	wg.Wait()
	res := StormResult{Deliveries: cfg.Deliveries, Unique: cfg.Unique, Duration: time.Since(start), Refused: refused.Load()}
	if err := srv.FlushWebhooks(ctx); err != nil {
		return res, err
	}
	if err := h.Flush(ctx); err != nil {
		return res, err
	}
	at, ok := log.at(other.ID)
	if !ok {
		return res, errors.New("storm: the unrelated event was never handed over")
	}
	res.Unrelated = at.Sub(made)
	res.Fetches, res.Status429 = counter.fetches.Load(), counter.status429.Load()
	log.mu.Lock()
	res.HandedOver = log.n - handedBefore
	log.mu.Unlock()
	runtime.GC()
	runtime.ReadMemStats(&ms)
	res.HeapGrowth = int64(ms.HeapAlloc) - heapBefore
	return res, nil
}

// stormProgram is the flags and output of `go run ./bench/storm`.
func stormProgram(fs *flag.FlagSet) func(context.Context, io.Writer, io.Writer) error {
	cfg := DefaultStorm
	fs.IntVar(&cfg.Deliveries, "deliveries", cfg.Deliveries, "copies to send")
	fs.IntVar(&cfg.Senders, "senders", cfg.Senders, "goroutines sending them")
	fs.BoolVar(&cfg.Unique, "unique", false, "send a different invented event name in each copy")
	return func(ctx context.Context, stdout, _ io.Writer) error {
		res, err := RunStorm(ctx, cfg)
		if err != nil {
			return err
		}
		fmt.Fprintln(stdout, res)
		return nil
	}
}
