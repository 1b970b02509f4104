package bench

import (
	"context"
	"testing"
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

func TestReceiveRefusesBadConfig(t *testing.T) {
	if _, err := RunReceive(context.Background(), ReceiveConfig{}); err == nil {
		t.Error("empty config accepted")
	}
	if _, err := RunReceive(context.Background(), ReceiveConfig{Replicas: 1, Lifecycles: 1, Workers: 1, Store: "mysql"}); err == nil {
		t.Error("unknown store accepted")
	}
}
