package escrowtest

import (
	"net/http"
	"slices"
	"sync"
	"testing"
)

// TestConcurrentClients drives the emulator from many goroutines at once (run with
// -race): ids stay unique and every transaction reaches its end.
func TestConcurrentClients(t *testing.T) {
	w := newWorld(t)
	hook := newReceiver(t, http.StatusOK)
	w.s.must(http.StatusOK, http.MethodPost, "customer/me/webhook", body{"url": hook.URL})
	const n = 16
	ids := make([]int64, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			id := w.b.create(merchandise())
			ids[i] = id
			w.s.act(http.StatusOK, id, 0, action("agree"))
			if err := w.srv.ApprovePayment(id); err != nil {
				t.Error(err)
				return
			}
			w.accepted(id, 0)
			w.s.must(http.StatusOK, http.MethodPatch, txPath(id, "disbursement_methods"), ach())
		})
	}
	w.s.must(http.StatusOK, http.MethodPost, "customer/me/api_key", body{"name": "x"}) // meanwhile
	wg.Wait()
	slices.Sort(ids)
	if len(slices.Compact(slices.Clone(ids))) != n || ids[0] != firstTransactionID || ids[n-1] != firstTransactionID+n-1 {
		t.Errorf("ids %v", ids)
	}
	flush(t, w.srv)
	if got := len(w.srv.Deliveries()); got != n*9 {
		t.Errorf("%d deliveries, want %d", got, n*9)
	}
}
