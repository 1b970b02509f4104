package bench

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/escrowkit/escrow-go/internal/redisserver"
)

// The harnesses run here briefly so that `go test ./...` keeps them building and working.
// Only counters that do not depend on the machine's speed are asserted: timings flake on a
// shared two-core machine.

func TestPacing(t *testing.T) {
	// 2s: under -race on a loaded two-core machine a run of 800ms could end before the
	// first calls' TLS handshakes did. The run spans windows, so the bound is Allowed.
	cfg := PacingConfig{Limit: 20, Window: time.Second, Workers: 4, Duration: 2 * time.Second}
	for _, client := range []string{ClientSDK, ClientRetryableHTTP} {
		t.Run(client, func(t *testing.T) {
			res, err := RunPacing(context.Background(), cfg, client)
			if err != nil {
				t.Fatal(err)
			}
			t.Log(res)
			if res.Successes == 0 || float64(res.Successes) > res.Allowed || res.Attempts < res.Successes || res.Status429 > res.Attempts {
				t.Errorf("inconsistent counts: %v", res)
			}
			if client == ClientSDK && res.Errors != 0 {
				t.Errorf("the SDK surfaced %d errors: %v", res.Errors, res)
			}
			if !strings.HasPrefix(res.String(), "client="+client+" replicas=1 goodput_ratio=") {
				t.Errorf("line: %s", res)
			}
		})
	}
}

// TestPacingReplicasSharingRedis: replicas of one account, each on its own connections,
// pace together through Redis; the line reports them and what Redis cost.
func TestPacingReplicasSharingRedis(t *testing.T) {
	rs := redisserver.Start(t)
	cfg := PacingConfig{Limit: 20, Window: time.Second, Replicas: 3, Workers: 2, Duration: 2 * time.Second, RedisURL: rs.URL()}
	res, err := RunPacing(context.Background(), cfg, ClientSDKRedis)
	if err != nil {
		t.Fatal(err)
	}
	t.Log(res)
	if res.Successes == 0 || float64(res.Successes) > res.Allowed || res.Errors != 0 || res.Attempts < res.Successes {
		t.Errorf("inconsistent counts: %v", res)
	}
	if res.RedisAttemptP50 <= 0 || res.RedisAttemptP99 < res.RedisAttemptP50 || res.RedisRoundTripP50 <= 0 {
		t.Errorf("Redis's cost not measured: %v", res)
	}
	if !strings.HasPrefix(res.String(), "client=sdk-redis replicas=3 goodput_ratio=") || !strings.Contains(res.String(), " redis_attempt_p99_us=") {
		t.Errorf("line: %s", res)
	}
	if _, err := RunPacing(context.Background(), PacingConfig{Limit: 1, Window: time.Second, Workers: 1, Duration: time.Millisecond}, ClientSDKRedis); err == nil {
		t.Error("sdk-redis without a Redis URL accepted")
	}
}

func TestPacingRefusesBadConfig(t *testing.T) {
	if _, err := RunPacing(context.Background(), PacingConfig{}, ClientSDK); err == nil {
		t.Error("empty config accepted")
	}
	cfg := PacingConfig{Limit: 1, Window: time.Second, Workers: 1, Duration: time.Millisecond}
	if _, err := RunPacing(context.Background(), cfg, "curl"); err == nil {
		t.Error("unknown client accepted")
	}
}

func TestChaos(t *testing.T) {
	cfg := DefaultChaos
	cfg.Ops, cfg.Workers, cfg.Timeout = 80, 4, 100*time.Millisecond
	res, err := RunChaos(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Log(res)
	for _, u := range res.Untyped {
		t.Log("untyped:", u)
	}
	if res.Ops != cfg.Ops || res.Created == 0 || res.Duplicates != 0 || res.Lost != 0 || res.UntypedErrors != 0 ||
		res.Phantoms != 0 || res.Inconsistent != 0 || res.GoroutinesLeaked != 0 {
		t.Errorf("chaos: %v", res)
	}
	if !strings.HasPrefix(res.String(), "ops=80 created=") {
		t.Errorf("line: %s", res)
	}
}

// TestChaosWithoutFaults: with nothing injected every call succeeds, so the counters that
// only faults should move stay at zero, and most transactions finish.
func TestChaosWithoutFaults(t *testing.T) {
	cfg := DefaultChaos
	cfg.Ops, cfg.Workers, cfg.FaultRate = 60, 3, 0
	res, err := RunChaos(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Errors) != 0 || res.Unknown != 0 || res.Lost != 0 || res.Created != res.Creates || res.Completed < res.Created-cfg.Workers {
		t.Errorf("chaos without faults: %v", res)
	}
}

func TestEmulatorLoad(t *testing.T) {
	results, err := RunEmulatorLoad(context.Background(), EmulatorLoadConfig{Stored: 40, Workers: 2, Duration: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if len(results) != 2 {
		t.Fatalf("results: %v", results)
	}
	for _, r := range results {
		t.Log(r)
		if r.Errors != 0 || r.EmulatorRPS <= 0 || r.BareRPS <= 0 || r.Stored < 40 {
			t.Errorf("%v", r)
		}
	}
}

func TestLatencyQuantile(t *testing.T) {
	var l latencies
	if l.quantile(0.99) != 0 {
		t.Error("empty")
	}
	for i := 100; i >= 1; i-- {
		l.add(time.Duration(i) * time.Millisecond)
	}
	if got := l.quantile(0.99); got != 99*time.Millisecond {
		t.Errorf("p99 of 1..100 ms: %v", got)
	}
	if got := l.quantile(0.5); got != 50*time.Millisecond {
		t.Errorf("p50 of 1..100 ms: %v", got)
	}
}

// TestCountingTransport counts attempts, 429s and attempts without an answer.
func TestCountingTransport(t *testing.T) {
	statuses := []int{200, 429, 0}
	i := 0
	ct := &countingTransport{next: roundTripFunc(func(*http.Request) (*http.Response, error) {
		s := statuses[i]
		i++
		if s == 0 {
			return nil, http.ErrHandlerTimeout
		}
		return &http.Response{StatusCode: s, Body: http.NoBody}, nil
	})}
	for range statuses {
		req, _ := http.NewRequest(http.MethodGet, "https://example.test/", nil)
		if resp, err := ct.RoundTrip(req); err == nil {
			resp.Body.Close()
		}
	}
	if ct.attempts.Load() != 3 || ct.status429.Load() != 1 || ct.noAnswer.Load() != 1 {
		t.Errorf("attempts %d, 429 %d, no answer %d", ct.attempts.Load(), ct.status429.Load(), ct.noAnswer.Load())
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
