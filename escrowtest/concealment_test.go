package escrowtest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// concealedCommission: the buyer, an approved partner, creates a brokered sale in which
// the seller is hidden from the buyer and pays the broker a 51.37 commission. The buyer
// must read that amount nowhere.
func concealedCommission() body {
	return body{
		"currency": "usd", "description": "Brokered sale", "reference": "conceal-1",
		"parties": []any{
			body{"role": "buyer", "customer": "me"},
			body{"role": "seller", "customer": "seller@example.com", "visibility": body{"hidden_from": []any{"buyer@example.com"}}},
			body{"role": "broker", "customer": "broker@example.com"},
		},
		"items": []any{
			body{"title": "Guitar", "type": "general_merchandise",
				"schedule": []any{body{"amount": 1000, "payer_customer": "me", "beneficiary_customer": "seller@example.com"}}},
			body{"type": "broker_fee",
				"schedule": []any{body{"amount": "51.37", "payer_customer": "seller@example.com", "beneficiary_customer": "broker@example.com"}}},
		},
	}
}

// TestConcealmentCoversAmountsInEveryView walks every view the buyer has of the
// transaction, through its lifecycle, and finds the seller's commission in none. The
// seller and the broker, whose amount it is, still see it.
func TestConcealmentCoversAmountsInEveryView(t *testing.T) {
	w := newWorld(t)
	w.srv.AddPartner("buyer@example.com") // the buyer is also the transaction's partner
	hook := newReceiver(t, http.StatusOK)
	w.b.must(http.StatusOK, http.MethodPost, "customer/me/webhook", body{"url": hook.URL})
	const secret = "51.37"
	var views []string
	look := func(name string, r reply) {
		t.Helper()
		views = append(views, name)
		if strings.Contains(string(r.raw), secret) || strings.Contains(string(r.raw), "1051.37") {
			t.Errorf("%s shows the concealed commission: %s", name, r.raw)
		}
	}
	id := w.b.create(concealedCommission())
	look("GET", w.b.must(http.StatusOK, http.MethodGet, txPath(id), nil))
	w.s.act(http.StatusOK, id, 0, action("agree"))
	w.k.act(http.StatusOK, id, 0, action("agree"))
	look("payment methods", w.b.must(http.StatusOK, http.MethodGet, txPath(id, "payment_methods"), nil))
	look("wire marked sent", w.b.must(http.StatusOK, http.MethodPost, txPath(id, "payment_methods", "wire_transfer"), nil))
	payment(w, id)
	ships(w, id)
	look("receive answer", w.b.act(http.StatusOK, id, 0, action("receive")))
	look("accept answer", w.b.act(http.StatusOK, id, 0, action("accept")))
	w.s.must(http.StatusOK, http.MethodPost, txPath(id, "disbursement_methods"), ach())
	w.k.must(http.StatusOK, http.MethodPost, txPath(id, "disbursement_methods"), ach())

	look("GET after completion", w.b.must(http.StatusOK, http.MethodGet, txPath(id), nil))
	look("list", w.b.must(http.StatusOK, http.MethodGet, "transaction", nil))
	look("by reference", w.b.must(http.StatusOK, http.MethodGet, "transaction/reference/conceal-1", nil))
	look("timeline", w.b.must(http.StatusOK, http.MethodGet, txPath(id, "timeline-entries"), nil))
	look("partner listing", w.b.must(http.StatusOK, http.MethodGet, "partner/transactions", nil))
	// Filters compare with the amount the partner sees (1000.00), so probing them
	// reveals nothing either.
	if r := w.b.must(http.StatusOK, http.MethodGet, "partner/transactions?min_amount=1000.01", nil); len(r.list("transactions")) != 0 {
		t.Errorf("min_amount matched on the concealed commission: %s", r.raw)
	}
	report := w.b.must(http.StatusOK, http.MethodPost, "partner/reports", nil)
	look("report", report)
	look("report download", w.b.must(http.StatusOK, http.MethodGet, "/_emulator/reports/"+report.str("task_id")+".csv", nil))
	look("payments in", w.b.must(http.StatusOK, http.MethodGet, fmt.Sprintf("partner/customer/%d/payments_in", w.seller.ID), nil))
	look("disbursement methods (not the buyer's)", w.b.must(http.StatusForbidden, http.MethodGet, txPath(id, "disbursement_methods"), nil))
	flush(t, w.srv)
	hook.mu.Lock()
	data, _ := json.Marshal(hook.bodies)
	hook.mu.Unlock()
	look("webhooks", reply{raw: data})
	if len(views) != 15 {
		t.Errorf("%d views checked", len(views))
	}

	// Those whose amount it is see it: the seller pays it, the broker receives it.
	for _, c := range []*client{w.s, w.k} {
		if r := c.must(http.StatusOK, http.MethodGet, txPath(id), nil); !strings.Contains(string(r.raw), secret) {
			t.Errorf("%s does not see the commission: %s", c.user, r.raw)
		}
	}
	// The seller's disbursement view nets its own commission: 1000.00 - 51.37.
	if r := w.s.must(http.StatusOK, http.MethodGet, txPath(id, "disbursement_methods"), nil); !strings.Contains(string(r.raw), `"total":948.63`) {
		t.Errorf("seller's disbursement view: %s", r.raw)
	}
}

// TestBrokerFeeCannotBeHiddenFromItsPayer: the spec lets a broker hide broker_fee items
// from parties; hiding one from the party that pays it would take money unseen.
func TestBrokerFeeCannotBeHiddenFromItsPayer(t *testing.T) {
	w := newWorld(t)
	b := set(concealedCommission(), "items.1.visibility", body{"hidden_from": []any{"seller@example.com"}})
	set(b, "parties.2.visibility", body{"hidden_from": []any{"seller@example.com"}})
	set(b, "parties.0.customer", "buyer@example.com")
	set(b, "parties.2.customer", "me")
	set(b, "items.0.schedule.0.payer_customer", "buyer@example.com")
	set(b, "items.1.schedule.0.beneficiary_customer", "me")
	r := w.k.must(http.StatusUnprocessableEntity, http.MethodPost, "transaction", b)
	if strings.Join(r.errorPaths(), ",") != "items.1.visibility" {
		t.Errorf("errors: %s", r.raw)
	}
}
