package webhook_test

import (
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/escrowkit/escrow-go/webhook"
)

// TestPartnersClaimsAreConfirmedByListingsNotFetches: a partner's replays of real ids with
// names their state does not show cost listings by id, not a GET each, and no more than a
// listing a second: 20 replayed transactions, one replay every 100 ms for ten seconds, take
// no fetch past their first, and a real event among them is handed over at once.
func TestPartnersClaimsAreConfirmedByListingsNotFetches(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const replayed = 20
		partner := rateLimitedPartner()
		partner.api.header = http.Header{"Ratelimit-Limit": {"1000"}, "Ratelimit-Remaining": {"999"}, "Ratelimit-Reset": {"60"}}
		close(partner.gate)
		for id := int64(1); id <= replayed+1; id++ {
			partner.api.txs[id] = created(id)
		}
		got := &calls{}
		h := webhook.NewHandler(clientOver(t, partner), got.fn, webhook.Options{})
		defer shutdown(t, h)
		if err := h.Reconcile(t.Context()); err != nil { // known to be a partner, its transactions known
			t.Fatal(err)
		}
		flushed(t, h)
		for id := int64(1); id <= replayed; id++ {
			deliver(h, "agree", id) // not tried yet: fetched, shows nothing new
		}
		flushed(t, h)
		before := partner.api.allReads()
		listings := partner.listings.Load()
		for i := range 100 { // ten seconds of replays, one every 100 ms
			time.Sleep(100 * time.Millisecond)
			deliver(h, "agree", int64(i%replayed)+1) // tried: a claim
			synctest.Wait()
		}
		if n := partner.listings.Load() - listings; n > 11 {
			t.Errorf("%d listings for ten seconds of claims, want one a second at most", n)
		}
		partner.api.set(agreed(replayed + 1))
		deliver(h, "agree", replayed+1)
		synctest.Wait()
		if l := got.list(); l[len(l)-1] != "agree:21" {
			t.Errorf("handed over %v; want the real agree at once", l)
		}
		time.Sleep(10 * time.Second)
		flushed(t, h)
		if n := partner.api.allReads() - before; n > 1 {
			t.Errorf("%d fetches for %d transactions' claims over ten seconds, want none but the real agree's", n, replayed)
		}
		if n := partner.listings.Load() - listings; n == 0 {
			t.Error("no listing for the claims")
		}
	})
}
