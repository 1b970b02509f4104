package bench

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"
)

// TestReceive runs the receiving measurement briefly over the memory and SQLite stores
// with one and two replicas: every fact of every sale is handed over once, live and
// catching up, and pruning leaves one tombstone row per finished sale. Only counts are
// asserted; the rates are logged.
func TestReceive(t *testing.T) {
	for _, store := range []string{"memory", "sqlite"} {
		for _, replicas := range []int{1, 2} {
			res, err := RunReceive(context.Background(), ReceiveConfig{Replicas: replicas, Store: store, Dir: t.TempDir(), Lifecycles: 6, Workers: 3})
			if err != nil {
				t.Fatal(err)
			}
			t.Log(res)
			for name, p := range map[string]ReceivePhase{"live": res.Live, "catch-up": res.CatchUp} {
				if p.Facts != 6*factsPerSale || p.Duplicates != 0 || p.Lost != 0 || p.Fetches == 0 {
					t.Errorf("%s, %d replicas, %s: %+v", store, replicas, name, p)
				}
			}
			if res.Undelivered != 0 {
				t.Errorf("%s, %d replicas: %d of the emulator's calls got no 2xx", store, replicas, res.Undelivered)
			}
			if store == "sqlite" && (res.RowsPruned != 6 || res.RowsKept <= res.RowsPruned) {
				t.Errorf("sqlite: %d rows kept, %d after pruning; want 6 tombstones after", res.RowsKept, res.RowsPruned)
			}
		}
	}
}

// TestReceiveWithTxCallbacks: with the replicas' callbacks recording an order in the
// store's database (-tx-callback), every fact is still handed over once, live and
// catching up.
func TestReceiveWithTxCallbacks(t *testing.T) {
	res, err := RunReceive(context.Background(), ReceiveConfig{Replicas: 2, Store: "sqlite", Dir: t.TempDir(), Lifecycles: 4, Workers: 2, TxCallback: true})
	if err != nil {
		t.Fatal(err)
	}
	for name, p := range map[string]ReceivePhase{"live": res.Live, "catch-up": res.CatchUp} {
		if p.Facts != 4*factsPerSale || p.Duplicates != 0 || p.Lost != 0 {
			t.Errorf("%s: %+v", name, p)
		}
	}
}

func TestReceiveRefusesBadConfig(t *testing.T) {
	if _, err := RunReceive(context.Background(), ReceiveConfig{}); err == nil {
		t.Error("empty config accepted")
	}
	if _, err := RunReceive(context.Background(), ReceiveConfig{Replicas: 1, Lifecycles: 1, Workers: 1, Store: "mysql"}); err == nil {
		t.Error("unknown store accepted")
	}
	if _, err := RunReceive(context.Background(), ReceiveConfig{Replicas: 1, Lifecycles: 1, Workers: 1, Store: "memory", TxCallback: true}); err == nil {
		t.Error("TxCallbacks over the memory store accepted")
	}
}

// TestAPITransportCountsFetchesAndDelaysEveryCall pins what -api-latency does: every call
// of the replicas waits the latency before it is sent (and gives up with its context),
// and only GETs of one transaction count as fetches.
func TestAPITransportCountsFetchesAndDelaysEveryCall(t *testing.T) {
	var sent atomic.Int64
	next := roundTripFunc(func(*http.Request) (*http.Response, error) {
		sent.Add(1)
		return &http.Response{StatusCode: http.StatusOK, Body: http.NoBody}, nil
	})
	var fetches atomic.Int64
	const latency = 30 * time.Millisecond
	tr := apiTransport{next: next, n: &fetches, latency: latency}
	for _, c := range []struct{ method, path string }{
		{http.MethodGet, "/2017-09-01/transaction/42"},
		{http.MethodGet, "/2017-09-01/customer/me"},
		{http.MethodPatch, "/2017-09-01/transaction/42"},
	} {
		start := time.Now()
		res, err := tr.RoundTrip(httptest.NewRequest(c.method, "https://api.example.com"+c.path, nil))
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if took := time.Since(start); took < latency {
			t.Errorf("%s %s sent after %s, before the latency of %s", c.method, c.path, took, latency)
		}
	}
	if fetches.Load() != 1 || sent.Load() != 3 {
		t.Errorf("fetches %d, sent %d; want 1 and 3", fetches.Load(), sent.Load())
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	tr.latency = 5 * time.Second
	req := httptest.NewRequest(http.MethodGet, "https://api.example.com/2017-09-01/transaction/42", nil).WithContext(ctx)
	if _, err := tr.RoundTrip(req); !errors.Is(err, context.Canceled) {
		t.Errorf("a call whose context ended while it waited: %v, want context.Canceled", err)
	}
	if sent.Load() != 3 {
		t.Error("a call whose context ended while it waited was sent")
	}
}
