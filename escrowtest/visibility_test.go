package escrowtest

import (
	"net/http"
	"testing"
)

// TestBrokerVisibility: the seller is hidden from the buyer, and the broker and the
// commission from the seller; the escrow fee is split between buyer and seller.
func TestBrokerVisibility(t *testing.T) {
	w := newWorld(t)
	b := set(brokered(), "items.0.fees", []any{
		body{"type": "escrow", "payer_customer": "buyer@example.com", "split": 0.5},
		body{"type": "escrow", "payer_customer": "seller@example.com", "split": 0.5},
	})
	id := w.k.create(b)
	view := func(c *client) reply { return c.must(http.StatusOK, http.MethodGet, txPath(id), nil) }

	buyer := view(w.b)
	if got := customers(buyer); got != "buyer@example.com hidden broker@example.com broker@example.com" {
		t.Errorf("buyer sees parties %s", got)
	}
	if buyer.str("items.0.schedule.0.beneficiary_customer") != hiddenCustomer || len(buyer.list("items.0.fees")) != 1 || buyer.str("items.0.fees.0.payer_customer") != "buyer@example.com" {
		t.Errorf("buyer sees the seller's details or amounts: %s", buyer.raw)
	}
	if len(buyer.list("items")) != 2 || buyer.get("items.1.visibility") != nil || buyer.get("parties.1.visibility") != nil {
		t.Errorf("buyer's items and visibility: %s", buyer.raw)
	}

	seller := view(w.s)
	if got := customers(seller); got != "buyer@example.com seller@example.com hidden hidden" {
		t.Errorf("seller sees parties %s", got)
	}
	if len(seller.list("items")) != 1 || len(seller.list("items.0.fees")) != 2 {
		t.Errorf("seller sees the commission, or misses a fee: %s", seller.raw)
	}

	broker := view(w.k)
	if got := customers(broker); got != "buyer@example.com seller@example.com broker@example.com broker@example.com" {
		t.Errorf("broker sees parties %s", got)
	}
	if broker.str("parties.1.visibility.hidden_from.0") != "buyer@example.com" || broker.str("items.1.visibility.hidden_from.0") != "seller@example.com" {
		t.Errorf("broker's visibility objects: %s", broker.raw)
	}

	// The timeline conceals actors the same way.
	w.s.act(http.StatusOK, id, 0, action("agree"))
	tl := w.b.must(http.StatusOK, http.MethodGet, txPath(id, "timeline-entries"), nil)
	if tl.str("timeline_entries.0.customer") != "broker@example.com" {
		t.Errorf("timeline: %s", tl.raw)
	}
	if got := w.k.must(http.StatusOK, http.MethodGet, txPath(id, "timeline-entries"), nil).str("timeline_entries.0.customer"); got != "broker@example.com" {
		t.Errorf("broker's timeline names %s", got)
	}
}

// TestPartnerFeeVisibility: a partner fee is shown to the partner and its payer only.
func TestPartnerFeeVisibility(t *testing.T) {
	w := newWorld(t)
	b := partnered()
	b["items"] = append(b["items"].([]any), body{"type": "partner_fee", "schedule": []any{body{"amount": 15, "payer_customer": "seller@example.com", "beneficiary_customer": "me"}}})
	id := w.p.create(b)
	counts := map[*client]int{w.p: 2, w.s: 2, w.b: 1}
	for c, want := range counts {
		r := c.must(http.StatusOK, http.MethodGet, txPath(id), nil)
		if got := len(r.list("items")); got != want {
			t.Errorf("%s sees %d items, want %d", c.user, got, want)
		}
	}
	if r := w.s.must(http.StatusOK, http.MethodGet, txPath(id), nil); r.str("items.1.schedule.0.beneficiary_customer") != "partner@example.com" || r.get("items.1.fees") == nil {
		t.Errorf("seller's view of the partner fee: %s", r.raw)
	}
}

func customers(r reply) string {
	s := ""
	for i, p := range r.list("parties") {
		if i > 0 {
			s += " "
		}
		s += p.(map[string]any)["customer"].(string)
	}
	return s
}
