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
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-retryablehttp"
	"github.com/redis/go-redis/v9"

	escrow "github.com/escrowkit/escrow-go"
	"github.com/escrowkit/escrow-go/escrowtest"
	"github.com/escrowkit/escrow-go/redislimit"
)

// The clients RunPacing can drive.
const (
	ClientSDK           = "sdk"           // escrow.Client, at its defaults: each replica paces on its own memory
	ClientSDKRedis      = "sdk-redis"     // escrow.Client whose replicas share their memory in Redis (redislimit)
	ClientRetryableHTTP = "retryablehttp" // retryablehttp.NewClient(), at its defaults
)

// PacingConfig describes one pacing run: Replicas clients of one account, each with its own
// connections and Workers goroutines, call GET /transaction/{id} as fast as their client
// lets them for Duration, against an emulator that allows the account Limit requests per
// Window to the endpoint.
type PacingConfig struct {
	Limit    int
	Window   time.Duration
	Replicas int // separate clients of one account, as separate processes would have (0: 1)
	Workers  int // goroutines per replica
	Duration time.Duration
	// RedisURL is the Redis that ClientSDKRedis's replicas share, such as
	// "redis://127.0.0.1:6379/0".
	RedisURL string
}

// DefaultPacing is what `go run ./bench/pacing` uses without flags: a limit well below
// what 16 goroutines could send, so that the run measures pacing and not the server.
var DefaultPacing = PacingConfig{Limit: 50, Window: time.Second, Replicas: 1, Workers: 16, Duration: 10 * time.Second}

// PacingResult is what one client achieved.
type PacingResult struct {
	Client   string
	Replicas int
	// Successes are calls that returned the transaction; Errors are calls that returned an
	// error to the caller (or, for retryablehttp, a status other than 200). Cut are calls
	// still waiting when the run ended; they count as neither.
	Successes, Errors, Cut int64
	// Attempts are requests that reached the transport, retries included; Status429 is how
	// many of them were answered 429.
	Attempts, Status429 int64
	// Allowed is the most the limit admits in Duration: windows are fixed and begin with
	// the first request after the last one ended, so at most ceil(Duration/Window) of
	// them begin during the run, each admitting Limit.
	Allowed float64
	// P99 is the 99th percentile of the duration of completed calls, waits included.
	P99 time.Duration
	// For ClientSDKRedis: RedisAttemptP50 and RedisAttemptP99 are what Redis adds to an
	// attempt, its reservation and its record (two round trips); RedisRoundTripP50 and
	// RedisRoundTripP99 are those of one call to Redis, refused reservations included.
	RedisAttemptP50, RedisAttemptP99     time.Duration
	RedisRoundTripP50, RedisRoundTripP99 time.Duration
	// RedisErrors counts calls to Redis that failed or timed out; each sent its replica
	// back to pacing on its own memory for a second.
	RedisErrors int64
}

// GoodputRatio is successful calls over what the limit allowed.
func (r PacingResult) GoodputRatio() float64 { return float64(r.Successes) / r.Allowed }

// Rate429 is the fraction of attempts answered 429.
func (r PacingResult) Rate429() float64 {
	if r.Attempts == 0 {
		return 0
	}
	return float64(r.Status429) / float64(r.Attempts)
}

// String is the result as one line of key=value pairs.
func (r PacingResult) String() string {
	line := fmt.Sprintf("client=%s replicas=%d goodput_ratio=%.3f rate429=%.4f errors=%d p99_ms=%d successes=%d allowed=%.0f attempts=%d status429=%d cut=%d",
		r.Client, r.Replicas, r.GoodputRatio(), r.Rate429(), r.Errors, r.P99.Milliseconds(), r.Successes, r.Allowed, r.Attempts, r.Status429, r.Cut)
	if r.Client == ClientSDKRedis {
		line += fmt.Sprintf(" redis_attempt_p50_us=%d redis_attempt_p99_us=%d redis_rtt_p50_us=%d redis_rtt_p99_us=%d redis_errors=%d",
			r.RedisAttemptP50.Microseconds(), r.RedisAttemptP99.Microseconds(), r.RedisRoundTripP50.Microseconds(), r.RedisRoundTripP99.Microseconds(), r.RedisErrors)
	}
	return line
}

// RunPacing measures one client against a fresh rate-limited emulator. The emulator is
// fresh for each client so that neither inherits the other's spent window.
func RunPacing(ctx context.Context, cfg PacingConfig, client string) (PacingResult, error) {
	if cfg.Replicas == 0 {
		cfg.Replicas = 1
	}
	if cfg.Limit <= 0 || cfg.Window <= 0 || cfg.Replicas < 0 || cfg.Workers <= 0 || cfg.Duration <= 0 {
		return PacingResult{}, fmt.Errorf("bench: pacing: limit, window, replicas, workers and duration must be positive: %+v", cfg)
	}
	switch client {
	case ClientSDK, ClientRetryableHTTP:
	case ClientSDKRedis:
		if cfg.RedisURL == "" {
			return PacingResult{}, fmt.Errorf("bench: pacing: %s needs a Redis URL", client)
		}
	default:
		return PacingResult{}, fmt.Errorf("bench: pacing: unknown client %q", client)
	}
	srv := escrowtest.NewServer(escrowtest.WithRateLimit(cfg.Limit, cfg.Window))
	defer srv.Close()
	acct := srv.AddCustomer("buyer@pacing.test")

	// The one transaction every call reads, created before counting starts.
	setup, err := escrow.NewClient(acct.Email, acct.APIKey, escrow.WithBaseURL(srv.URL), escrow.WithHTTPClient(srv.Client()))
	if err != nil {
		return PacingResult{}, err
	}
	tx, err := setup.Transactions.Create(ctx, merchandise(escrow.Me, "seller@pacing.test", ""))
	if err != nil {
		return PacingResult{}, fmt.Errorf("bench: pacing: creating the transaction: %w", err)
	}

	// Each replica has its own connections, as a separate process would.
	base, ok := srv.Client().Transport.(*http.Transport)
	if !ok {
		return PacingResult{}, fmt.Errorf("bench: pacing: the emulator's transport is a %T", srv.Client().Transport)
	}
	counters := make([]*countingTransport, cfg.Replicas)
	gets := make([]func(ctx context.Context) error, cfg.Replicas)
	var timed *timedStore
	if client == ClientSDKRedis {
		timed = &timedStore{pending: map[string]time.Duration{}}
	}
	for i := range cfg.Replicas {
		counters[i] = &countingTransport{next: base.Clone()}
		defer counters[i].CloseIdleConnections()
		switch client {
		case ClientSDK, ClientSDKRedis:
			opts := []escrow.Option{escrow.WithBaseURL(srv.URL), escrow.WithHTTPClient(&http.Client{Transport: counters[i]})}
			if client == ClientSDKRedis {
				ropts, err := redis.ParseURL(cfg.RedisURL)
				if err != nil {
					return PacingResult{}, fmt.Errorf("bench: pacing: -redis: %w", err)
				}
				rdb := redis.NewClient(ropts)
				defer rdb.Close()
				opts = append(opts, escrow.WithRateLimitStore(timed.wrap(redislimit.New(rdb))))
			}
			c, err := escrow.NewClient(acct.Email, acct.APIKey, opts...)
			if err != nil {
				return PacingResult{}, err
			}
			gets[i] = func(ctx context.Context) error {
				_, err := c.Transactions.Get(ctx, tx.ID)
				return err
			}
		case ClientRetryableHTTP:
			gets[i] = retryableGet(counters[i], srv.URL+"transaction/"+strconv.FormatInt(tx.ID, 10), acct)
		}
	}

	windows := math.Ceil(cfg.Duration.Seconds() / cfg.Window.Seconds())
	res := PacingResult{Client: client, Replicas: cfg.Replicas, Allowed: float64(cfg.Limit) * windows}
	var lat latencies
	var successes, failures, cut atomic.Int64
	// Calls still waiting at the end are cancelled rather than awaited: a client that is
	// sleeping until the next window would otherwise stretch the run past Duration and
	// be credited with requests the limit did not allow within it.
	runCtx, cancel := context.WithTimeout(ctx, cfg.Duration)
	defer cancel()
	var wg sync.WaitGroup
	for _, get := range gets {
		for range cfg.Workers {
			wg.Go(func() {
				for runCtx.Err() == nil {
					start := time.Now()
					err := get(runCtx)
					switch {
					case err == nil:
						successes.Add(1)
					case runCtx.Err() != nil && errors.Is(err, context.DeadlineExceeded):
						cut.Add(1)
						continue
					default:
						failures.Add(1)
					}
					lat.add(time.Since(start))
				}
			})
		}
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return PacingResult{}, err
	}
	res.Successes, res.Errors, res.Cut = successes.Load(), failures.Load(), cut.Load()
	for _, c := range counters {
		res.Attempts += c.attempts.Load()
		res.Status429 += c.status429.Load()
	}
	res.P99 = lat.quantile(0.99)
	if timed != nil {
		res.RedisAttemptP50, res.RedisAttemptP99 = timed.attempt.quantile(0.5), timed.attempt.quantile(0.99)
		res.RedisRoundTripP50, res.RedisRoundTripP99 = timed.roundTrip.quantile(0.5), timed.roundTrip.quantile(0.99)
		res.RedisErrors = timed.errors.Load()
	}
	return res, nil
}

// timedStore measures the rate-limit stores it wraps: each round trip, and the two of each
// granted attempt together, matched by the grant's ID.
type timedStore struct {
	attempt, roundTrip latencies
	errors             atomic.Int64
	mu                 sync.Mutex
	pending            map[string]time.Duration // reservation time of grants not yet recorded
}

func (t *timedStore) wrap(s escrow.RateLimitStore) escrow.RateLimitStore {
	return &timedClient{next: s, t: t}
}

// timedClient is one replica's store, timed.
type timedClient struct {
	next escrow.RateLimitStore
	t    *timedStore
}

func (c *timedClient) Reserve(ctx context.Context, key escrow.RateLimitKey) (escrow.RateLimitGrant, error) {
	start := time.Now()
	g, err := c.next.Reserve(ctx, key)
	d := time.Since(start)
	c.t.roundTrip.add(d)
	if err != nil {
		c.t.errors.Add(1)
	}
	if err == nil && g.OK {
		c.t.mu.Lock()
		c.t.pending[g.ID] = d
		c.t.mu.Unlock()
	}
	return g, err
}

func (c *timedClient) Record(ctx context.Context, key escrow.RateLimitKey, g escrow.RateLimitGrant, a escrow.RateLimitAnswer) error {
	start := time.Now()
	err := c.next.Record(ctx, key, g, a)
	d := time.Since(start)
	c.t.roundTrip.add(d)
	if err != nil {
		c.t.errors.Add(1)
	}
	c.t.mu.Lock()
	reserved, ok := c.t.pending[g.ID]
	delete(c.t.pending, g.ID)
	c.t.mu.Unlock()
	if ok {
		c.t.attempt.add(reserved + d)
	}
	return err
}

// retryableGet is GET /transaction/{id} as a user of go-retryablehttp would write it:
// the client from retryablehttp.NewClient() with its retry policy and backoff untouched.
// Two things differ from a bare NewClient(): the transport trusts the emulator's
// certificate (and counts attempts), and Logger is nil, because the default logger writes
// a line per attempt to stderr, which would drown the result lines.
func retryableGet(rt http.RoundTripper, url string, acct escrowtest.Account) func(context.Context) error {
	rc := retryablehttp.NewClient()
	rc.HTTPClient.Transport = rt
	rc.Logger = nil
	return func(ctx context.Context) error {
		req, err := retryablehttp.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		req.SetBasicAuth(acct.Email, acct.APIKey)
		req.Header.Set("Accept", "application/json")
		resp, err := rc.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			_, _ = io.Copy(io.Discard, resp.Body)
			return fmt.Errorf("GET %s: %s", url, resp.Status)
		}
		var tx struct {
			ID int64 `json:"id"`
		}
		if err := json.NewDecoder(resp.Body).Decode(&tx); err != nil {
			return err
		}
		if tx.ID == 0 {
			return errors.New("no transaction in the answer")
		}
		return nil
	}
}

// pacingProgram is the flags and output of `go run ./bench/pacing`.
func pacingProgram(fs *flag.FlagSet) func(context.Context, io.Writer, io.Writer) error {
	cfg := DefaultPacing
	fs.IntVar(&cfg.Limit, "limit", cfg.Limit, "requests the emulator allows per window and endpoint")
	fs.DurationVar(&cfg.Window, "window", cfg.Window, "the emulator's rate-limit window")
	fs.IntVar(&cfg.Replicas, "replicas", cfg.Replicas, "separate clients of the one account")
	fs.IntVar(&cfg.Workers, "workers", cfg.Workers, "concurrent goroutines per replica")
	fs.StringVar(&cfg.RedisURL, "redis", "", "a Redis URL (redis://host:port/db): also run the SDK's replicas sharing their rate-limit memory there")
	fs.DurationVar(&cfg.Duration, "duration", cfg.Duration, "how long each client runs")
	return func(ctx context.Context, stdout, _ io.Writer) error {
		clients := []string{ClientSDK, ClientRetryableHTTP}
		if cfg.RedisURL != "" {
			clients = []string{ClientSDK, ClientSDKRedis, ClientRetryableHTTP}
		}
		for _, client := range clients {
			res, err := RunPacing(ctx, cfg, client)
			if err != nil {
				return err
			}
			fmt.Fprintln(stdout, res)
		}
		return nil
	}
}
