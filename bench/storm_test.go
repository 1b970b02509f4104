package bench

import (
	"context"
	"testing"
)

// TestStorm runs the storm briefly: replays and invented names alike cost a handful of
// confirming fetches, are never handed over, and do not hold up a real event of another
// transaction. Only counts are asserted; the latency is logged.
func TestStorm(t *testing.T) {
	for _, unique := range []bool{false, true} {
		res, err := RunStorm(context.Background(), StormConfig{Deliveries: 1500, Senders: 8, Unique: unique})
		if err != nil {
			t.Fatal(err)
		}
		t.Log(res)
		if res.Fetches > 5 || res.Fetches == 0 || res.Status429 != 0 || res.Refused != 0 || res.HandedOver != 1 {
			t.Errorf("unique=%v: %v", unique, res)
		}
	}
}

func TestStormRefusesBadConfig(t *testing.T) {
	if _, err := RunStorm(context.Background(), StormConfig{}); err == nil {
		t.Error("empty config accepted")
	}
}
