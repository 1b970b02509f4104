package escrowtest

import (
	"net/http"
	"testing"
)

// partnered is a merchandise body for the partner to create between the buyer and the
// seller.
func partnered() body {
	b := set(merchandise(), "parties.0.customer", "buyer@example.com")
	return set(b, "items.0.schedule.0.payer_customer", "buyer@example.com")
}

// TestAsCustomerActions: the partner acts for a party on the permitted actions, and
// accept, accept_return and reject_return are refused.
func TestAsCustomerActions(t *testing.T) {
	tests := []struct {
		before []step
		action string
		as     string
		want   int
	}{
		{nil, "agree", "seller@example.com", http.StatusOK},
		{nil, "cancel", "seller@example.com", http.StatusOK},
		{[]step{sellerAgrees, payment}, "ship", "seller@example.com", http.StatusOK},
		{[]step{sellerAgrees, payment, ships}, "receive", "buyer@example.com", http.StatusOK},
		{[]step{sellerAgrees, payment, ships, receives}, "reject", "buyer@example.com", http.StatusOK},
		{[]step{sellerAgrees, payment, ships, receives}, "accept", "buyer@example.com", http.StatusForbidden},
		{[]step{sellerAgrees, payment, ships, receives, rejects}, "ship_return", "buyer@example.com", http.StatusOK},
		{[]step{sellerAgrees, payment, ships, receives, rejects, shipsBack}, "receive_return", "seller@example.com", http.StatusOK},
		{[]step{sellerAgrees, payment, ships, receives, rejects, shipsBack, receivesBack}, "accept_return", "seller@example.com", http.StatusForbidden},
		{[]step{sellerAgrees, payment, ships, receives, rejects, shipsBack, receivesBack}, "reject_return", "seller@example.com", http.StatusForbidden},
		// The role rules still apply to the party acted for.
		{[]step{sellerAgrees, payment}, "ship", "buyer@example.com", http.StatusForbidden},
		// So do the cancel rules: after both agree only the partner, as itself.
		{[]step{sellerAgrees}, "cancel", "buyer@example.com", http.StatusForbidden},
	}
	for _, tc := range tests {
		t.Run(tc.action+" as "+tc.as, func(t *testing.T) {
			w := newWorld(t)
			id := w.p.create(partnered())
			w.b.act(http.StatusOK, id, 0, action("agree"))
			for _, s := range tc.before {
				s(w, id)
			}
			r := w.p.asCustomer(tc.as).act(tc.want, id, 0, action(tc.action))
			if tc.want == http.StatusOK && r.str("parties.2.customer") != "partner@example.com" {
				t.Errorf("the answer is not rendered for the partner: %s", r.raw)
			}
		})
	}
}

func TestAsCustomerIsForTheTransactionsPartner(t *testing.T) {
	w := newWorld(t)
	id := w.p.create(partnered())
	// Not an approved partner.
	w.b.asCustomer("seller@example.com").act(http.StatusForbidden, id, 0, action("agree"))
	// An approved partner that is a party, but not the partner of this transaction.
	other := w.srv.AddPartner("other-partner@example.com")
	mine := w.b.create(withSeller(merchandise(), other.Email))
	as(t, w.srv, other).asCustomer("buyer@example.com").act(http.StatusForbidden, mine, 0, action("cancel"))
	// A name that is no party.
	w.p.asCustomer("stranger@example.com").act(http.StatusForbidden, id, 0, action("agree"))
	w.p.asCustomer("nobody@example.com").act(http.StatusForbidden, id, 0, action("agree"))
	// Not a party at all: the transaction does not exist for the caller.
	as(t, w.srv, other).asCustomer("buyer@example.com").act(http.StatusNotFound, id, 0, action("agree"))
	// Routes that do not take the header.
	for _, path := range []string{txPath(id), "customer/me", txPath(id, "timeline-entries"), txPath(id, "payment_methods", "wire_transfer"), txPath(id, "disbursement_methods")} {
		w.p.asCustomer("buyer@example.com").must(http.StatusForbidden, http.MethodGet, path, nil)
	}
	w.p.asCustomer("seller@example.com").act(http.StatusOK, id, 0, action("agree"))
}

func TestAsCustomerPayments(t *testing.T) {
	w := newWorld(t)
	id := w.p.create(partnered())
	w.p.asCustomer("buyer@example.com").act(http.StatusOK, id, 0, action("agree"))
	w.p.asCustomer("seller@example.com").act(http.StatusOK, id, 0, action("agree"))
	forBuyer := w.p.asCustomer("buyer@example.com")
	if r := forBuyer.must(http.StatusOK, http.MethodGet, txPath(id, "payment_methods"), nil); r.str("total_without_payment_fee") != "1032.50" {
		t.Errorf("payment methods: %s", r.raw)
	}
	forBuyer.must(http.StatusOK, http.MethodPost, txPath(id, "payment_methods", "credit_card"), nil)
	forBuyer.must(http.StatusOK, http.MethodPost, txPath(id, "payment_methods", "wire_transfer"), nil)
	w.p.asCustomer("seller@example.com").must(http.StatusForbidden, http.MethodGet, txPath(id, "payment_methods"), nil)
	w.p.must(http.StatusForbidden, http.MethodGet, txPath(id, "payment_methods"), nil) // the partner is not the buyer
}
