package bench

import (
	"context"
	"testing"
)

// TestStorm runs the storm briefly: replays of a create already handed over cost no fetch
// (the store's record shows them as replays), nor do invented names (no state shows them,
// and no OnUnconfirmedHint would take them); neither is handed over, and neither holds up
// a real event of another transaction. Only counts are asserted; the latency is logged.
func TestStorm(t *testing.T) {
	for _, unique := range []bool{false, true} {
		res, err := RunStorm(context.Background(), StormConfig{Deliveries: 1500, Senders: 8, Unique: unique})
		if err != nil {
			t.Fatal(err)
		}
		t.Log(res)
		if res.Fetches != 0 || res.Status429 != 0 || res.Refused != 0 || res.HandedOver != 1 {
			t.Errorf("unique=%v: %v", unique, res)
		}
	}
}

func TestStormRefusesBadConfig(t *testing.T) {
	if _, err := RunStorm(context.Background(), StormConfig{}); err == nil {
		t.Error("empty config accepted")
	}
}
