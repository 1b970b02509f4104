package escrowtest

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"
)

// TestControlTransactionsListsNewestFirstWithFilters: the list shows every transaction,
// newest first, with parties, amount, state and who must act, and filters by state and by
// part of a party's address.
func TestControlTransactionsListsNewestFirstWithFilters(t *testing.T) {
	w := newWorld(t)
	ctl := anonymous(t, w.srv)
	first := w.b.create(merchandise())
	second, _ := w.funded(merchandise())
	third := w.k.create(brokered())

	r := ctl.must(http.StatusOK, http.MethodGet, "/_emulator/transactions", nil)
	if got := fmt.Sprint(r.get("transactions.0.id"), r.get("transactions.1.id"), r.get("transactions.2.id")); got != fmt.Sprint(third, second, first) {
		t.Errorf("order %s, want newest first: %s", got, r.raw)
	}
	if r.get("total") != 3.0 || r.str("transactions.2.amount") != "1000.00" || r.str("transactions.2.state") != "awaiting_agreement" ||
		r.str("transactions.2.parties.1.customer") != "seller@example.com" || r.get("transactions.2.parties.1.agreed") != false {
		t.Errorf("first transaction's row: %s", r.raw)
	}
	if r.str("transactions.1.next_steps.0.action") != "ship" || r.str("transactions.1.next_steps.0.customer") != "seller@example.com" || r.str("transactions.1.waiting") == "" {
		t.Errorf("the funded transaction's next steps: %s", r.raw)
	}
	// The list is the emulator's: it conceals nothing, not even the broker's commission.
	if r.str("transactions.0.amount") != "5250.00" || r.str("transactions.0.parties.2.customer") != "broker@example.com" {
		t.Errorf("brokered row: %s", r.raw)
	}

	if r := ctl.must(http.StatusOK, http.MethodGet, "/_emulator/transactions?state=funded", nil); r.get("total") != 1.0 || r.get("transactions.0.id") != float64(second) {
		t.Errorf("state=funded: %s", r.raw)
	}
	if r := ctl.must(http.StatusOK, http.MethodGet, "/_emulator/transactions?party=BROKER@", nil); r.get("total") != 1.0 || r.get("transactions.0.id") != float64(third) {
		t.Errorf("party=BROKER@: %s", r.raw)
	}
	if r := ctl.must(http.StatusOK, http.MethodGet, "/_emulator/transactions?limit=1", nil); r.get("total") != 3.0 || len(r.list("transactions")) != 1 {
		t.Errorf("limit=1: %s", r.raw)
	}
	for _, q := range []string{"state=paid", "limit=0", "limit=x"} {
		ctl.must(http.StatusUnprocessableEntity, http.MethodGet, "/_emulator/transactions?"+q, nil)
	}
}

// TestControlTransactionShowsItWhole: one transaction with its items, timeline, ledger
// and balance check, next steps, the webhook calls it caused and the As-Customer calls
// made on it, refused ones too.
func TestControlTransactionShowsItWhole(t *testing.T) {
	w := newWorld(t)
	ctl := anonymous(t, w.srv)
	hook := newReceiver(t, http.StatusAccepted)
	w.b.must(http.StatusOK, http.MethodPost, "customer/me/webhook", body{"url": hook.URL})
	id := w.p.create(partnered())
	w.p.asCustomer("buyer@example.com").act(http.StatusOK, id, 0, action("agree"))
	w.p.asCustomer("buyer@example.com").act(http.StatusForbidden, id, 0, action("cancel"))
	w.p.asCustomer("seller@example.com").act(http.StatusOK, id, 0, action("agree"))
	must(t, w.srv.ApprovePayment(id))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	must(t, w.srv.FlushWebhooks(ctx))

	r := ctl.must(http.StatusOK, http.MethodGet, fmt.Sprintf("/_emulator/transactions/%d", id), nil)
	if r.get("transaction.id") != float64(id) || r.str("viewer") != "" || r.str("progress.state") != "funded" || r.str("progress.next_steps.0.action") != "ship" {
		t.Errorf("transaction and progress: %s", r.raw)
	}
	if r.str("ledger.in") != "1032.50" || r.str("ledger.held") != "1032.50" || r.get("ledger.balanced") != true {
		t.Errorf("ledger: %s", r.raw)
	}
	if len(r.list("parties")) != 3 || r.str("parties.2.customer") != "partner@example.com" {
		t.Errorf("parties: %s", r.raw)
	}
	events := ""
	for i := range r.list("timeline") {
		events += r.str(fmt.Sprintf("timeline.%d.event", i)) + " "
	}
	if events != "create agree payment_received payment_approved " {
		t.Errorf("timeline events %q: %s", events, r.raw)
	}
	if len(r.list("deliveries")) != 4 || r.get("deliveries.0.status_code") != 202.0 || r.str("deliveries.0.url") != hook.URL || r.get("deliveries.0.latency_ms") == nil {
		t.Errorf("deliveries: %s", r.raw)
	}
	calls := r.list("as_customer")
	if len(calls) != 3 || r.str("as_customer.0.endpoint") != "PATCH /transaction/{id}" || r.str("as_customer.0.partner") != "partner@example.com" ||
		r.str("as_customer.0.as_customer") != "buyer@example.com" || r.get("as_customer.0.status") != 200.0 || r.get("as_customer.1.status") != 403.0 {
		t.Errorf("As-Customer calls: %s", r.raw)
	}

	ctl.must(http.StatusNotFound, http.MethodGet, "/_emulator/transactions/999", nil)
	ctl.must(http.StatusNotFound, http.MethodGet, "/_emulator/transactions/x", nil)
}

// TestControlTransactionAsAPartySeesIt: ?viewer= shows the transaction as the API shows
// it to that party, concealment applied; without it nothing is concealed.
func TestControlTransactionAsAPartySeesIt(t *testing.T) {
	w := newWorld(t)
	ctl := anonymous(t, w.srv)
	id := w.k.create(brokered())
	path := fmt.Sprintf("/_emulator/transactions/%d", id)

	all := ctl.must(http.StatusOK, http.MethodGet, path, nil)
	if got := customers(reply{json: all.get("transaction")}); got != "buyer@example.com seller@example.com broker@example.com broker@example.com" || len(all.list("transaction.items")) != 2 {
		t.Errorf("the emulator's view: %s", all.raw)
	}
	buyer := ctl.must(http.StatusOK, http.MethodGet, path+"?viewer=Buyer@Example.com", nil)
	if got := customers(reply{json: buyer.get("transaction")}); got != "buyer@example.com hidden broker@example.com broker@example.com" || buyer.str("viewer") != "buyer@example.com" {
		t.Errorf("the buyer's view: %s", buyer.raw)
	}
	// Whoever views, the page may switch to any party.
	if len(buyer.list("parties")) != 4 || buyer.str("parties.1.customer") != "seller@example.com" {
		t.Errorf("parties to switch to: %s", buyer.raw)
	}
	seller := ctl.must(http.StatusOK, http.MethodGet, path+"?viewer=seller@example.com", nil)
	if len(seller.list("transaction.items")) != 1 {
		t.Errorf("the seller sees the commission: %s", seller.raw)
	}
	if r := ctl.must(http.StatusUnprocessableEntity, http.MethodGet, path+"?viewer=stranger@example.com", nil); r.get("errors.viewer") == nil {
		t.Errorf("a viewer who is not a party: %s", r.raw)
	}
}

// TestAsCustomerJournalKeepsTheLatest: the journal of As-Customer calls is bounded.
func TestAsCustomerJournalKeepsTheLatest(t *testing.T) {
	w := newWorld(t)
	id := w.p.create(partnered())
	for range maxDelegated + 5 {
		w.p.asCustomer("buyer@example.com").do(http.MethodGet, txPath(id), nil)
	}
	w.p.asCustomer("seller@example.com").do(http.MethodGet, txPath(id), nil)
	r := anonymous(t, w.srv).must(http.StatusOK, http.MethodGet, fmt.Sprintf("/_emulator/transactions/%d", id), nil)
	if n := len(r.list("as_customer")); n != maxDelegated || r.str(fmt.Sprintf("as_customer.%d.as_customer", n-1)) != "seller@example.com" {
		t.Errorf("%d calls kept, the last as %s", n, r.str(fmt.Sprintf("as_customer.%d.as_customer", n-1)))
	}
}
