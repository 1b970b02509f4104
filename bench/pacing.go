package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-retryablehttp"

	escrow "github.com/escrowkit/escrow-go"
	"github.com/escrowkit/escrow-go/escrowtest"
)

// The clients RunPacing can drive.
const (
	ClientSDK           = "sdk"           // escrow.Client, at its defaults
	ClientRetryableHTTP = "retryablehttp" // retryablehttp.NewClient(), at its defaults
)

// PacingConfig describes one pacing run: Workers goroutines call GET /transaction/{id} as
// fast as their client lets them for Duration, against an emulator that allows Limit
// requests per Window to the endpoint.
type PacingConfig struct {
	Limit    int
	Window   time.Duration
	Workers  int
	Duration time.Duration
}

// DefaultPacing is what `go run ./bench/pacing` uses without flags: a limit well below
// what 16 goroutines could send, so that the run measures pacing and not the server.
var DefaultPacing = PacingConfig{Limit: 50, Window: time.Second, Workers: 16, Duration: 10 * time.Second}

// PacingResult is what one client achieved.
type PacingResult struct {
	Client string
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
	return fmt.Sprintf("client=%s goodput_ratio=%.3f rate429=%.4f errors=%d p99_ms=%d successes=%d allowed=%.0f attempts=%d status429=%d cut=%d",
		r.Client, r.GoodputRatio(), r.Rate429(), r.Errors, r.P99.Milliseconds(), r.Successes, r.Allowed, r.Attempts, r.Status429, r.Cut)
}

// RunPacing measures one client against a fresh rate-limited emulator. The emulator is
// fresh for each client so that neither inherits the other's spent window.
func RunPacing(ctx context.Context, cfg PacingConfig, client string) (PacingResult, error) {
	if cfg.Limit <= 0 || cfg.Window <= 0 || cfg.Workers <= 0 || cfg.Duration <= 0 {
		return PacingResult{}, fmt.Errorf("bench: pacing: limit, window, workers and duration must be positive: %+v", cfg)
	}
	srv := escrowtest.NewServer(escrowtest.WithRateLimit(cfg.Limit, cfg.Window))
	defer srv.Close()
	acct := srv.AddCustomer("buyer@pacing.test")
	counter := &countingTransport{next: srv.Client().Transport}

	// The one transaction every call reads, created before counting starts.
	setup, err := escrow.NewClient(acct.Email, acct.APIKey, escrow.WithBaseURL(srv.URL), escrow.WithHTTPClient(srv.Client()))
	if err != nil {
		return PacingResult{}, err
	}
	tx, err := setup.Transactions.Create(ctx, merchandise(escrow.Me, "seller@pacing.test", ""))
	if err != nil {
		return PacingResult{}, fmt.Errorf("bench: pacing: creating the transaction: %w", err)
	}

	var get func(ctx context.Context) error
	switch client {
	case ClientSDK:
		c, err := escrow.NewClient(acct.Email, acct.APIKey, escrow.WithBaseURL(srv.URL), escrow.WithHTTPClient(&http.Client{Transport: counter}))
		if err != nil {
			return PacingResult{}, err
		}
		get = func(ctx context.Context) error {
			_, err := c.Transactions.Get(ctx, tx.ID)
			return err
		}
	case ClientRetryableHTTP:
		get = retryableGet(counter, srv.URL+"transaction/"+strconv.FormatInt(tx.ID, 10), acct)
	default:
		return PacingResult{}, fmt.Errorf("bench: pacing: unknown client %q", client)
	}

	windows := math.Ceil(cfg.Duration.Seconds() / cfg.Window.Seconds())
	res := PacingResult{Client: client, Allowed: float64(cfg.Limit) * windows}
	var lat latencies
	var successes, failures, cut atomic.Int64
	// Calls still waiting at the end are cancelled rather than awaited: a client that is
	// sleeping until the next window would otherwise stretch the run past Duration and
	// be credited with requests the limit did not allow within it.
	runCtx, cancel := context.WithTimeout(ctx, cfg.Duration)
	defer cancel()
	var wg sync.WaitGroup
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
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return PacingResult{}, err
	}
	counter.CloseIdleConnections()
	res.Successes, res.Errors, res.Cut = successes.Load(), failures.Load(), cut.Load()
	res.Attempts, res.Status429 = counter.attempts.Load(), counter.status429.Load()
	res.P99 = lat.quantile(0.99)
	return res, nil
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
