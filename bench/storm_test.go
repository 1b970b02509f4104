package bench

import (
	"context"
	"testing"
)

// TestStorm runs the storm briefly: replays of a create already handed over cost no fetch
// (the store's record shows them as replays), invented names a handful of confirming
// fetches; neither is handed over, and neither holds up a real event of another
// transaction. Only counts are asserted; the latency is logged.
func TestStorm(t *testing.T) {
	for _, unique := range []bool{false, true} {
		res, err := RunStorm(context.Background(), StormConfig{Deliveries: 1500, Senders: 8, Unique: unique})
		if err != nil {
			t.Fatal(err)
		}
		t.Log(res)
		fetched := res.Fetches > 0 && res.Fetches <= 5
		if !unique {
			fetched = res.Fetches == 0
		}
		if !fetched || res.Status429 != 0 || res.Refused != 0 || res.HandedOver != 1 {
			t.Errorf("unique=%v: %v", unique, res)
		}
	}
}

func TestStormRefusesBadConfig(t *testing.T) {
	if _, err := RunStorm(context.Background(), StormConfig{}); err == nil {
		t.Error("empty config accepted")
	}
}
