package storetest

import (
	"sync"
	"testing"

	"github.com/escrowkit/escrow-go/webhook"
)

// RunSettings checks a store's webhook.Settings: a value is kept, the first of concurrent
// InitSettings wins for every caller, and PutSetting replaces. replica returns a second
// view of the same store (another process's connection), or s itself.
func RunSettings(t *testing.T, s webhook.Settings, replica webhook.Settings) {
	if _, ok, err := s.Setting(t.Context(), "delivery_secrets"); ok || err != nil {
		t.Fatalf("empty store: Setting = %v, %v", ok, err)
	}
	firstInitWins(t, s, replica)
	putReplaces(t, s, replica)
}

// firstInitWins: of concurrent InitSettings on both views, one value is kept and every
// caller is told it; a later InitSetting keeps it too.
func firstInitWins(t *testing.T, s, replica webhook.Settings) {
	ctx := t.Context()
	const n = 8
	kept := make([]string, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		on := s
		if i%2 == 1 {
			on = replica
		}
		wg.Go(func() { kept[i], errs[i] = on.InitSetting(ctx, "delivery_secrets", string(rune('a'+i))) })
	}
	wg.Wait()
	for i := range n {
		if errs[i] != nil || kept[i] != kept[0] || kept[0] == "" {
			t.Fatalf("concurrent InitSetting: caller %d kept %q (%v), caller 0 kept %q", i, kept[i], errs[i], kept[0])
		}
	}
	if v, err := s.InitSetting(ctx, "delivery_secrets", "later"); v != kept[0] || err != nil {
		t.Errorf("InitSetting over a kept value = %q, %v; want %q", v, err, kept[0])
	}
}

// putReplaces: PutSetting on one view replaces the value the other reads, and no other key.
func putReplaces(t *testing.T, s, replica webhook.Settings) {
	ctx := t.Context()
	if err := replica.PutSetting(ctx, "delivery_secrets", "new,old"); err != nil {
		t.Fatal(err)
	}
	if v, ok, err := s.Setting(ctx, "delivery_secrets"); v != "new,old" || !ok || err != nil {
		t.Errorf("after PutSetting: Setting = %q, %v, %v", v, ok, err)
	}
	if _, ok, err := s.Setting(ctx, "other"); ok || err != nil {
		t.Errorf("another key: Setting = %v, %v", ok, err)
	}
}
