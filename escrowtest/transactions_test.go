package escrowtest

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestCreateRecordsPartiesAndAccounts(t *testing.T) {
	w := newWorld(t)
	r := w.b.must(http.StatusCreated, http.MethodPost, "transaction", withSeller(merchandise(), "newcomer@example.com"))
	want := []any{
		map[string]any{"id": float64(firstPartyID), "role": "buyer", "customer": "buyer@example.com", "agreed": true, "initiator": true, "disbursement_method_selected": false},
		map[string]any{"id": float64(firstPartyID + 1), "role": "seller", "customer": "newcomer@example.com", "agreed": false, "initiator": false, "disbursement_method_selected": false},
		map[string]any{"id": float64(firstPartyID + 2), "role": "partner", "customer": "buyer@example.com", "agreed": true, "initiator": true, "disbursement_method_selected": false},
	}
	if !jsonEqual(r.get("parties"), want) {
		t.Errorf("parties = %v", r.get("parties"))
	}
	if r.id("id") != firstTransactionID || r.id("items.0.id") != firstItemID {
		t.Errorf("ids %d, %d", r.id("id"), r.id("items.0.id"))
	}
	if r.str("creation_date") != "2024-05-01T12:00:00.000000+00:00" || r.get("close_date") != nil || r.get("is_cancelled") != false {
		t.Errorf("dates: %s", r.raw)
	}
	if r.str("items.0.schedule.0.amount") != "1000.00" || r.get("items.0.schedule.0.status.secured") != false {
		t.Errorf("schedule: %v", r.get("items.0.schedule"))
	}
	// The new party got an account; AddCustomer hands out credentials for it.
	seller := w.srv.AddCustomer("newcomer@example.com")
	if seller.Password == "" || seller.APIKey == "" || seller.ID != firstCustomerID+5 {
		t.Errorf("credentials for the auto-created account: %+v", seller)
	}
	got := as(t, w.srv, seller).must(http.StatusOK, http.MethodGet, txPath(r.id("id")), nil)
	if got.str("parties.0.customer") != "buyer@example.com" || got.str("parties.1.customer") != "newcomer@example.com" {
		t.Errorf("the seller's view: %v", got.get("parties"))
	}
	// AddCustomer again: the same account, a fresh key, no new password.
	again := w.srv.AddCustomer("newcomer@example.com")
	if again.ID != seller.ID || again.APIKey == seller.APIKey || again.Password != "" {
		t.Errorf("second AddCustomer: %+v", again)
	}
	as(t, w.srv, again).must(http.StatusOK, http.MethodGet, "customer/me", nil)
	as(t, w.srv, seller).must(http.StatusOK, http.MethodGet, "customer/me", nil)
}

func TestTransactionVisibleToPartiesOnly(t *testing.T) {
	w := newWorld(t)
	id := w.b.create(merchandise())
	w.b.must(http.StatusOK, http.MethodGet, txPath(id), nil)
	w.s.must(http.StatusOK, http.MethodGet, txPath(id), nil)
	for _, path := range []string{txPath(id), txPath(id, "timeline-entries"), txPath(id, "payment_methods"), txPath(id, "disbursement_methods"), txPath(id, "web_link", "view")} {
		r := w.x.must(http.StatusNotFound, http.MethodGet, path, nil)
		if r.str("error") != "not_found" {
			t.Errorf("%s: %s", path, r.raw)
		}
	}
	w.x.must(http.StatusNotFound, http.MethodPatch, txPath(id), action("agree"))
	w.b.must(http.StatusNotFound, http.MethodGet, "transaction/999", nil)
	w.b.must(http.StatusNotFound, http.MethodGet, "transaction/abc", nil)
	w.b.must(http.StatusNotFound, http.MethodPatch, txPath(id, "item", "999"), action("ship"))
}

func TestListTransactionsPaged(t *testing.T) {
	w := newWorld(t)
	var ids []int64
	for range 12 {
		ids = append(ids, w.b.create(merchandise()))
	}
	w.s.create(domain()) // the buyer is a party too
	w.x.create(withSeller(merchandise(), "other@example.com"))

	tests := []struct {
		query             string
		page, pages, size int
		first, count      int64
	}{
		{"", 1, 2, 10, ids[11] + 1, 10},
		{"?page=2", 2, 2, 10, ids[2], 3},
		{"?per_page=5&page=3&sort_direction=asc&sort_by=id", 3, 3, 5, ids[10], 3},
		{"?page=9", 9, 2, 10, 0, 0},
	}
	for _, tc := range tests {
		r := w.b.must(http.StatusOK, http.MethodGet, "transaction"+tc.query, nil)
		txs := r.list("transactions")
		if r.id("page") != int64(tc.page) || r.id("page_count") != int64(tc.pages) || r.id("per_page") != int64(tc.size) || int64(len(txs)) != tc.count {
			t.Errorf("%q: page %v of %v, per_page %v, %d transactions", tc.query, r.get("page"), r.get("page_count"), r.get("per_page"), len(txs))
		}
		if tc.count > 0 && r.id("transactions.0.id") != tc.first {
			t.Errorf("%q: first id %d, want %d", tc.query, r.id("transactions.0.id"), tc.first)
		}
	}
	for query, path := range map[string]string{
		"?page=0": "page", "?per_page=101": "per_page", "?per_page=x": "per_page",
		"?sort_by=date": "sort_by", "?sort_direction=up": "sort_direction",
	} {
		r := w.b.must(http.StatusUnprocessableEntity, http.MethodGet, "transaction"+query, nil)
		if got := r.errorPaths(); !slices.Equal(got, []string{path}) {
			t.Errorf("%s: %v", query, got)
		}
	}
	if r := w.k.must(http.StatusOK, http.MethodGet, "transaction", nil); r.id("page_count") != 0 || len(r.list("transactions")) != 0 {
		t.Errorf("no transactions: %s", r.raw)
	}
}

func TestTimelineRecordsEveryEvent(t *testing.T) {
	w := newWorld(t)
	id, _ := w.funded(merchandise())
	w.s.act(http.StatusOK, id, 0, body{"action": "ship", "shipping_information": body{"tracking_information": body{"carrier": "UPS", "tracking_id": "1Z9"}}})
	w.srv.Advance(2 * 24 * time.Hour)
	r := w.s.must(http.StatusOK, http.MethodGet, txPath(id, "timeline-entries"), nil)
	var events []string
	for i, e := range r.list("timeline_entries") {
		m := e.(map[string]any)
		events = append(events, m["event"].(string))
		if m["id"].(float64) != float64(i+1) || m["event_type"] != "transaction" || m["date"] == "" || m["message"] == "" {
			t.Errorf("entry %d: %v", i, m)
		}
	}
	if got := strings.Join(events, " "); got != "create agree payment_received payment_approved ship" {
		t.Errorf("events: %s", got)
	}
	if r.str("timeline_entries.0.customer") != "buyer@example.com" || r.str("timeline_entries.1.customer") != "seller@example.com" || r.get("timeline_entries.2.customer") != nil {
		t.Errorf("actors: %s", r.raw)
	}
	if !strings.Contains(r.str("timeline_entries.4.message"), "UPS, 1Z9") {
		t.Errorf("ship entry: %s", r.str("timeline_entries.4.message"))
	}
}

// TestWebLinks: a web link is a page on the emulator's host, for the transaction or an
// item, and an action's page only for a party whose role takes the action.
func TestWebLinks(t *testing.T) {
	w := newWorld(t)
	id := w.b.create(merchandise())
	r := w.b.must(http.StatusOK, http.MethodGet, txPath(id, "web_link", "agree"), nil)
	host := strings.TrimSuffix(w.srv.URL, "/2017-09-01/")
	if want := fmt.Sprintf("%s/_emulator/pages/transaction/%d/agree", host, id); r.str("landing_page") != want {
		t.Errorf("landing page %q, want %q", r.str("landing_page"), want)
	}
	r = w.b.must(http.StatusOK, http.MethodGet, txPath(id, "item", fmt.Sprint(firstItemID), "web_link", "view"), nil)
	if !strings.HasSuffix(r.str("landing_page"), fmt.Sprintf("/transaction/%d/item/%d/view", id, firstItemID)) {
		t.Errorf("item landing page %q", r.str("landing_page"))
	}
	w.b.must(http.StatusNotFound, http.MethodGet, txPath(id, "web_link", "dance"), nil)
	// The page exists.
	page := anonymous(t, w.srv).must(http.StatusOK, http.MethodGet, strings.TrimPrefix(r.str("landing_page"), host), nil)
	if !strings.Contains(string(page.raw), "escrowtest") {
		t.Errorf("page: %s", page.raw)
	}
	// The creator that is only the partner party, asking without As-Customer, is refused
	// the agree page in the live API's words; a party is refused the page of an action its
	// role never takes.
	b := merchandise()
	set(b, "parties.0.customer", "buyer@example.com")
	set(b, "items.0.schedule.0.payer_customer", "buyer@example.com")
	pid := w.p.create(b)
	r = w.p.must(http.StatusBadRequest, http.MethodGet, txPath(pid, "web_link", "agree"), nil)
	if r.str("message") != "Buyer is unable to agree at this stage in the transaction" || r.str("error") != "invalid_state" {
		t.Errorf("the agree page for a creator that is no buyer: %s", r.raw)
	}
	r = w.b.must(http.StatusBadRequest, http.MethodGet, txPath(id, "web_link", "ship"), nil)
	if r.str("message") != "Buyer is unable to ship at this stage in the transaction" {
		t.Errorf("the ship page for the buyer: %s", r.raw)
	}
	w.p.asCustomer("buyer@example.com").must(http.StatusOK, http.MethodGet, txPath(pid, "web_link", "agree"), nil)
	w.p.must(http.StatusOK, http.MethodGet, txPath(pid, "web_link", "view"), nil)
}
