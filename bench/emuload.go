package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/escrowkit/escrow-go/escrowtest"
)

// EmulatorLoadConfig describes an emulator throughput run.
type EmulatorLoadConfig struct {
	// Stored is how many transactions the emulator holds before reads are measured.
	Stored int
	// Workers is the number of concurrent client goroutines, each with its own keep-alive
	// connection.
	Workers int
	// Duration is how long each of the four measurements lasts.
	Duration time.Duration
}

// DefaultEmulatorLoad is what `go run ./bench/emulator` uses without flags.
var DefaultEmulatorLoad = EmulatorLoadConfig{Stored: 10_000, Workers: 4, Duration: 5 * time.Second}

// EmulatorLoadResult compares the emulator with a bare TLS handler for one operation.
type EmulatorLoadResult struct {
	Op                   string
	Stored               int // transactions stored when the measurement began
	EmulatorRPS, BareRPS float64
	// Errors are answers other than the operation's success status, or none at all.
	Errors int64
}

// Ratio is the emulator's throughput over the bare handler's.
func (r EmulatorLoadResult) Ratio() float64 { return r.EmulatorRPS / r.BareRPS }

// String is the result as one line of key=value pairs.
func (r EmulatorLoadResult) String() string {
	return fmt.Sprintf("op=%s stored=%d emulator_rps=%.0f bare_rps=%.0f ratio=%.3f errors=%d",
		r.Op, r.Stored, r.EmulatorRPS, r.BareRPS, r.Ratio(), r.Errors)
}

// loadRequest builds the i-th request of a measurement.
type loadRequest func(i int64) (*http.Request, error)

// RunEmulatorLoad measures requests per second of the emulator for GET /transaction/{id}
// and POST /transaction, each beside a bare TLS handler that answers the bytes the
// emulator answered, with the same status and headers. The load is generated in the same
// process, so both figures include the client's cost; the ratio is the emulator's share.
func RunEmulatorLoad(ctx context.Context, cfg EmulatorLoadConfig) ([]EmulatorLoadResult, error) {
	if cfg.Stored <= 0 || cfg.Workers <= 0 || cfg.Duration <= 0 {
		return nil, fmt.Errorf("bench: emulator: stored, workers and duration must be positive: %+v", cfg)
	}
	// No rate limit: the subject is the emulator's own cost per request.
	srv := escrowtest.NewServer(escrowtest.WithRateLimit(0, 0))
	defer srv.Close()
	acct := srv.AddCustomer("buyer@load.test")
	tr := loadTransport(srv.Client(), cfg.Workers)
	defer tr.CloseIdleConnections()
	hc := &http.Client{Transport: tr}

	createBody, err := json.Marshal(merchandise("me", "seller@load.test", ""))
	if err != nil {
		return nil, err
	}
	newCreate := func(base string) loadRequest {
		return func(int64) (*http.Request, error) {
			req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"transaction", bytes.NewReader(createBody))
			if err != nil {
				return nil, err
			}
			req.SetBasicAuth(acct.Email, acct.APIKey)
			req.Header.Set("Content-Type", "application/json")
			return req, nil
		}
	}

	// Seed the store through the API, as a user's tests would.
	ids := make([]int64, cfg.Stored)
	var seedErr atomic.Value
	var next atomic.Int64
	var wg sync.WaitGroup
	for range cfg.Workers {
		wg.Go(func() {
			for i := next.Add(1) - 1; i < int64(cfg.Stored) && ctx.Err() == nil; i = next.Add(1) - 1 {
				var tx struct {
					ID int64 `json:"id"`
				}
				if _, _, err := roundTrip(hc, newCreate(srv.URL), http.StatusCreated, &tx); err != nil {
					seedErr.CompareAndSwap(nil, err)
					return
				}
				ids[i] = tx.ID
			}
		})
	}
	wg.Wait()
	if err, _ := seedErr.Load().(error); err != nil {
		return nil, fmt.Errorf("bench: emulator: seeding: %w", err)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}

	newGet := func(base string) loadRequest {
		return func(i int64) (*http.Request, error) {
			id := ids[rand.N(len(ids))]
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"transaction/"+strconv.FormatInt(id, 10), nil)
			if err != nil {
				return nil, err
			}
			req.SetBasicAuth(acct.Email, acct.APIKey)
			return req, nil
		}
	}

	var results []EmulatorLoadResult
	for _, op := range []struct {
		name   string
		status int
		build  func(base string) loadRequest
	}{
		{"get_transaction", http.StatusOK, newGet},
		{"create_transaction", http.StatusCreated, newCreate},
	} {
		// The bare handler answers exactly what the emulator answered to one request.
		header, body, err := roundTrip(hc, op.build(srv.URL), op.status, nil)
		if err != nil {
			return nil, fmt.Errorf("bench: emulator: %s: %w", op.name, err)
		}
		bare := bareServer(op.status, header, body)
		bareTr := loadTransport(bare.Client(), cfg.Workers)
		res := EmulatorLoadResult{Op: op.name, Stored: len(ids)}
		if op.name == "create_transaction" {
			res.Stored++ // the one created above
		}
		var emuErrs, bareErrs int64
		res.EmulatorRPS, emuErrs = measure(ctx, hc, op.build(srv.URL), op.status, cfg)
		res.BareRPS, bareErrs = measure(ctx, &http.Client{Transport: bareTr}, op.build(bare.URL+"/2017-09-01/"), op.status, cfg)
		res.Errors = emuErrs + bareErrs
		bareTr.CloseIdleConnections()
		bare.Close()
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		results = append(results, res)
	}
	return results, nil
}

// loadTransport is a copy of hc's transport that keeps a connection per worker: the
// default of two idle connections per host would make the others handshake again and
// again, and measure TLS instead of the server.
func loadTransport(hc *http.Client, workers int) *http.Transport {
	t := hc.Transport.(*http.Transport).Clone()
	t.MaxIdleConnsPerHost = workers
	return t
}

// bareServer answers every request with status, header and body, after reading the
// request body as the emulator does.
func bareServer(status int, header http.Header, body []byte) *httptest.Server {
	return httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		for k, v := range header {
			switch k {
			case "Date", "Content-Length":
				continue // net/http sets them itself
			}
			w.Header()[k] = v
		}
		w.WriteHeader(status)
		_, _ = w.Write(body)
	}))
}

// roundTrip sends one request and checks its status; it decodes the body into out when out
// is not nil, and returns the answer's header and body.
func roundTrip(hc *http.Client, build loadRequest, status int, out any) (http.Header, []byte, error) {
	req, err := build(0)
	if err != nil {
		return nil, nil, err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, nil, err
	}
	if resp.StatusCode != status {
		return nil, nil, fmt.Errorf("%s %s: %s: %s", req.Method, req.URL.Path, resp.Status, body)
	}
	if out != nil {
		if err := json.Unmarshal(body, out); err != nil {
			return nil, nil, err
		}
	}
	return resp.Header, body, nil
}

// measure sends requests from cfg.Workers goroutines for cfg.Duration and returns the
// rate of answers with the expected status, and how many answers were not that.
func measure(ctx context.Context, hc *http.Client, build loadRequest, status int, cfg EmulatorLoadConfig) (rps float64, failures int64) {
	var ok, bad atomic.Int64
	deadline := time.Now().Add(cfg.Duration)
	start := time.Now()
	var wg sync.WaitGroup
	for range cfg.Workers {
		wg.Go(func() {
			for i := int64(0); time.Now().Before(deadline) && ctx.Err() == nil; i++ {
				req, err := build(i)
				if err != nil {
					bad.Add(1)
					return
				}
				resp, err := hc.Do(req)
				if err != nil {
					bad.Add(1)
					continue
				}
				// Drain the body so that the connection is reused.
				_, err = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if err != nil || resp.StatusCode != status {
					bad.Add(1)
					continue
				}
				ok.Add(1)
			}
		})
	}
	wg.Wait()
	return float64(ok.Load()) / time.Since(start).Seconds(), bad.Load()
}

// emulatorProgram is the flags and output of `go run ./bench/emulator`.
func emulatorProgram(fs *flag.FlagSet) func(context.Context, io.Writer, io.Writer) error {
	cfg := DefaultEmulatorLoad
	fs.IntVar(&cfg.Stored, "stored", cfg.Stored, "transactions stored before reads are measured")
	fs.IntVar(&cfg.Workers, "workers", cfg.Workers, "concurrent client goroutines")
	fs.DurationVar(&cfg.Duration, "duration", cfg.Duration, "length of each measurement")
	return func(ctx context.Context, stdout, _ io.Writer) error {
		results, err := RunEmulatorLoad(ctx, cfg)
		if err != nil {
			return err
		}
		for _, r := range results {
			fmt.Fprintln(stdout, r)
		}
		return nil
	}
}
