package webhook_test

import (
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/escrowkit/escrow-go/webhook"
)

// allReads counts the fetches of every transaction the fake API was asked about.
func (f *fakeAPI) allReads() (n int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, r := range f.reads {
		n += r
	}
	return n
}

func (f *fakeAPI) listsServed() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.lists
}

// TestBurstOfAnAccountNotAPartnerIsConfirmedByPagesOfItsList: an account that is no
// partner has no listing by id, but its list of transactions, newest first, names a
// page of a burst of new ones in one call: 1,500 new transactions delivered while the one
// worker is busy (so that they come faster than they are taken), most past MaxUnseen and
// so owed a look in the Store (more than a round first asks it for), are all handed over
// with a page per hundred and no fetch of their own.
func TestBurstOfAnAccountNotAPartnerIsConfirmedByPagesOfItsList(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const n = 1500
		api := newFakeAPI()
		api.header = http.Header{"Ratelimit-Limit": {"1000"}, "Ratelimit-Remaining": {"999"}, "Ratelimit-Reset": {"60"}}
		for id := int64(1); id <= n; id++ {
			api.txs[id] = created(id)
		}
		busy := &heldReads{api: api, id: 1, gate: make(chan struct{})}
		got := &calls{}
		h := webhook.NewHandler(clientOver(t, busy), got.fn, webhook.Options{MaxUnseen: 100, Workers: 1})
		defer shutdown(t, h)
		for id := int64(1); id <= n; id++ {
			if code := deliver(h, "create", id); code != http.StatusOK {
				t.Fatalf("delivery %d answered %d", id, code)
			}
			synctest.Wait() // the first is fetched, and its fetch hangs
		}
		close(busy.gate)
		time.Sleep(5 * time.Second)
		flushed(t, h)
		if l := got.list(); len(l) != n {
			t.Fatalf("%d of %d new transactions handed over", len(l), n)
		}
		if reads, pages := api.allReads(), api.listsServed(); reads != 1 || pages != n/100 {
			t.Errorf("%d fetches and %d pages for %d new transactions; want the first's fetch and %d pages", reads, pages, n, n/100)
		}
		if s := h.Stats(); s.UnseenDropped != 0 {
			t.Errorf("Stats %+v, want none dropped", s)
		}
	})
}

// TestFloodCostsAnAccountNotAPartnerAPageABurst: made-up ids that no page of the list can
// name cost a round of listings when they come, not a page a second while they wait for
// the never-seen share (a fetch a minute here): the list's rate-limit window is the
// application's too. A new burst of ids gets a round of its own.
func TestFloodCostsAnAccountNotAPartnerAPageABurst(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		api := newFakeAPI()
		api.header = rateLimited // a fetch of a forgery a minute
		api.txs[1] = created(1)
		h := webhook.NewHandler(api.client(t), (&calls{}).fn, webhook.Options{})
		defer shutdown(t, h)
		flood := func(from int64) int {
			for i := range int64(30) {
				deliver(h, "create", from+i)
			}
			time.Sleep(3 * time.Second)
			synctest.Wait()
			return api.listsServed()
		}
		first := flood(forgedBase)
		if first == 0 {
			t.Fatal("no page listed for a burst of never-seen ids")
		}
		time.Sleep(30 * time.Second) // the forgeries wait for the share
		synctest.Wait()
		if n := api.listsServed(); n != first {
			t.Errorf("%d pages listed while the same forgeries waited 30 s, want %d", n, first)
		}
		if n := flood(forgedBase + 1000); n == first {
			t.Errorf("no page listed for a new burst")
		}
	})
}
