package bench

import (
	"context"
	"testing"
	"time"
)

// TestFloodWithASecret runs a short flood against a handler that requires a secret the
// forger does not know: every forgery is refused and none costs a fetch, and the real
// events are handed over. Only counts are asserted; latencies are logged.
func TestFloodWithASecret(t *testing.T) {
	res, err := RunFlood(context.Background(), FloodConfig{Forged: 1000, Senders: 8, Secret: true, Window: time.Second, MaxWait: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Log(res)
	if res.ForgedFetchesTotal != 0 || res.ForgedRefused != 1000 || res.RealNon2xx != 0 || res.KnownLatency < 0 || res.NewLatency < 0 {
		t.Errorf("%v", res)
	}
}

func TestFloodRefusesBadConfig(t *testing.T) {
	if _, err := RunFlood(context.Background(), FloodConfig{Forged: 1, Senders: 1}); err == nil {
		t.Error("a config without Window and MaxWait accepted")
	}
}
