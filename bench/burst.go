package bench

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	escrow "github.com/escrowkit/escrow-go"
	"github.com/escrowkit/escrow-go/escrowtest"
	"github.com/escrowkit/escrow-go/webhook"
)

// BurstConfig is a burst of first deliveries of new transactions to one Handler at its
// default options, with no reconciler: the transactions are made first, with no webhook
// registered, then their create deliveries are posted at once by Senders goroutines.
type BurstConfig struct {
	// N transactions; Senders goroutines post their deliveries.
	N, Senders int
	// Partner makes the account an approved partner (its listing by ids confirms a page
	// of never-seen ids a call); otherwise each is fetched.
	Partner bool
	// RateLimit is the emulator's requests per account and endpoint a minute; 0 for none
	// (the transactions are made through the same account, so a limit slows their making).
	RateLimit int
	// APILatency delays each of the receiver's API calls, as a network to the live API does.
	APILatency time.Duration
	// MaxWait bounds the wait for every creation to be handed over.
	MaxWait time.Duration
}

// DefaultBurst is the partner burst: 5,000 new transactions from 32 senders.
var DefaultBurst = BurstConfig{N: 5_000, Senders: 32, Partner: true, MaxWait: 2 * time.Minute}

// BurstResult is how long the burst took to be handed over and what it cost the API.
type BurstResult struct {
	N       int
	Partner bool
	Latency time.Duration
	// All is how long from the first delivery until every creation was handed over; -1
	// if not within MaxWait, Handed then saying how many were.
	All    time.Duration
	Handed int
	// Fetches are GET /transaction/{id}, Listings GET /partner/transactions and the pages
	// of GET /transaction; PerTx is both per transaction.
	Fetches, Listings int64
	PerTx             float64
	// Dropped is the handler's Stats().UnseenDropped; Non2xx the deliveries answered
	// outside 2xx.
	Dropped, Non2xx int64
}

func (r BurstResult) String() string {
	return fmt.Sprintf("burst n=%d partner=%v api_latency=%s all_handed_over=%s handed=%d fetches=%d listings=%d calls_per_tx=%.3f unseen_dropped=%d non_2xx=%d",
		r.N, r.Partner, r.Latency, latency(r.All), r.Handed, r.Fetches, r.Listings, r.PerTx, r.Dropped, r.Non2xx)
}

// burstCounter counts the receiver's fetches and listings and delays each call.
type burstCounter struct {
	next              http.RoundTripper
	fetches, listings atomic.Int64
	latency           time.Duration
}

func (c *burstCounter) RoundTrip(r *http.Request) (*http.Response, error) {
	switch {
	case strings.HasSuffix(r.URL.Path, "/partner/transactions"), strings.HasSuffix(r.URL.Path, "/transaction"):
		c.listings.Add(1) // a partner's listing by id, or a page of the account's own list
	case fetchPath.MatchString(r.URL.Path):
		c.fetches.Add(1)
	}
	return apiTransport{next: c.next, n: new(atomic.Int64), latency: c.latency}.RoundTrip(r)
}

// RunBurst makes cfg.N transactions, then posts their create deliveries at once to a
// Handler, and measures how long until every one was handed over and the API calls spent.
func RunBurst(ctx context.Context, cfg BurstConfig) (BurstResult, error) {
	if cfg.N <= 0 || cfg.Senders <= 0 || cfg.MaxWait <= 0 {
		return BurstResult{}, errors.New("burst: N, Senders and MaxWait must be positive")
	}
	srv := escrowtest.NewServer(escrowtest.WithRateLimit(cfg.RateLimit, time.Minute))
	defer srv.Close()
	acct := srv.AddCustomer("market@example.com")
	if cfg.Partner {
		acct = srv.AddPartner("partner@example.com")
	}
	srv.AddCustomer("buyer@example.com")
	srv.AddCustomer("seller@example.com")
	// The sales are made first, waiting for the windows a rate limit allows.
	app, err := escrow.NewClient(acct.Email, acct.APIKey, escrow.WithBaseURL(srv.URL), escrow.WithHTTPClient(srv.Client()), escrow.WithMaxWait(2*time.Minute))
	if err != nil {
		return BurstResult{}, err
	}
	ids, err := makeSales(ctx, app, cfg.N)
	if err != nil {
		return BurstResult{}, err
	}
	counter := &burstCounter{next: srv.Client().Transport, latency: cfg.APILatency}
	receiver, err := escrow.NewClient(acct.Email, acct.APIKey, escrow.WithBaseURL(srv.URL), escrow.WithHTTPClient(&http.Client{Transport: counter}))
	if err != nil {
		return BurstResult{}, err
	}
	var handed atomic.Int64
	h := webhook.NewHandler(receiver, func(_ context.Context, ev webhook.ConfirmedEvent) error {
		if ev.Name == escrow.EventCreate {
			handed.Add(1)
		}
		return nil
	}, webhook.Options{})
	defer func() {
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		h.Shutdown(sctx)
	}()
	hook := httptest.NewServer(h)
	defer hook.Close()
	res := BurstResult{N: cfg.N, Partner: cfg.Partner, Latency: cfg.APILatency, All: -1}
	start := time.Now()
	res.Non2xx = postCreates(ctx, hook.URL+"/escrow", ids, cfg.Senders)
	for deadline := start.Add(cfg.MaxWait); handed.Load() < int64(cfg.N) && time.Now().Before(deadline) && ctx.Err() == nil; {
		time.Sleep(5 * time.Millisecond)
	}
	if handed.Load() >= int64(cfg.N) {
		res.All = time.Since(start)
	}
	res.Handed = int(handed.Load())
	res.Fetches, res.Listings = counter.fetches.Load(), counter.listings.Load()
	res.PerTx = float64(res.Fetches+res.Listings) / float64(cfg.N)
	res.Dropped = h.Stats().UnseenDropped
	return res, ctx.Err()
}

// makeSales creates n transactions through app, 8 at a time, and returns their ids.
func makeSales(ctx context.Context, app *escrow.Client, n int) ([]int64, error) {
	ids := make([]int64, n)
	var next atomic.Int64
	errs := make(chan error, 8)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for i := next.Add(1) - 1; i < int64(n); i = next.Add(1) - 1 {
				tx, err := app.Transactions.Create(ctx, merchandise("buyer@example.com", "seller@example.com", ""))
				if err != nil {
					errs <- err
					return
				}
				ids[i] = tx.ID
			}
		})
	}
	wg.Wait()
	close(errs)
	return ids, <-errs
}

// postCreates posts a create delivery of each id to target from senders goroutines and
// returns how many were answered outside 2xx.
func postCreates(ctx context.Context, target string, ids []int64, senders int) int64 {
	return postEach(ctx, len(ids), senders, new(atomic.Int64), func(i int64) (string, string) {
		return target, fmt.Sprintf(`{"event": "create", "event_type": "transaction", "transaction_id": %d}`, ids[i-1])
	})
}

// burstProgram is the flags and output of `go run ./bench/burst`.
func burstProgram(fs *flag.FlagSet) func(context.Context, io.Writer, io.Writer) error {
	cfg := DefaultBurst
	fs.IntVar(&cfg.N, "n", cfg.N, "new transactions whose first deliveries come at once")
	fs.IntVar(&cfg.Senders, "senders", cfg.Senders, "goroutines posting them")
	fs.BoolVar(&cfg.Partner, "partner", cfg.Partner, "the account is an approved partner")
	fs.IntVar(&cfg.RateLimit, "rate-limit", 0, "the emulator's requests per account and endpoint a minute (0: none)")
	fs.DurationVar(&cfg.APILatency, "api-latency", 0, "delay before each of the receiver's API calls")
	fs.DurationVar(&cfg.MaxWait, "max-wait", cfg.MaxWait, "give up waiting after this long")
	return func(ctx context.Context, stdout, _ io.Writer) error {
		res, err := RunBurst(ctx, cfg)
		if err != nil {
			return err
		}
		fmt.Fprintln(stdout, res)
		return nil
	}
}
