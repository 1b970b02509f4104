package escrowtest

import (
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"
)

// partnered is a merchandise body for the partner to create between the buyer and the
// seller.
func partnered() body {
	b := set(merchandise(), "parties.0.customer", "buyer@example.com")
	return set(b, "items.0.schedule.0.payer_customer", "buyer@example.com")
}

// asCustomerMatrix is the As-Customer matrix: every action, and whether an approved
// partner may perform it for a party. It is pinned here, once; the package comment and
// the README state it, and lifecycle's comment gives the reasons.
var asCustomerMatrix = map[string]bool{
	"agree": true, "ship": true, "receive": true, "reject": true, "ship_return": true, "receive_return": true,
	"accept": false, "accept_return": false, "reject_return": false, "cancel": false,
}

// TestAsCustomerMatrix: the table of actions says what the matrix says, and the partner
// acting for a party gets 200 on each permitted action and 403 on the others, in a state
// where the party itself could perform it.
func TestAsCustomerMatrix(t *testing.T) {
	var want []string
	for _, name := range actionNames {
		allowed, pinned := asCustomerMatrix[name]
		if !pinned {
			t.Errorf("action %s is not in the As-Customer matrix", name)
		}
		if allowed {
			want = append(want, name)
		}
	}
	if got := AsCustomerActions(); !slices.Equal(got, want) || len(asCustomerMatrix) != len(actionNames) {
		t.Errorf("AsCustomerActions() = %v, want %v", got, want)
	}
	for _, a := range lifecycle {
		if _, ok := wholeActions[a.name]; ok != a.whole {
			t.Errorf("%s: whole %v, but a function in wholeActions: %v", a.name, a.whole, ok)
		}
	}
	tests := []struct {
		before []step
		action string
		as     string
		want   int
	}{
		{nil, "agree", "seller@example.com", http.StatusOK},
		{nil, "cancel", "seller@example.com", http.StatusForbidden},
		{[]step{sellerAgrees, payment}, "ship", "seller@example.com", http.StatusOK},
		{[]step{sellerAgrees, payment, ships}, "receive", "buyer@example.com", http.StatusOK},
		{[]step{sellerAgrees, payment, ships, receives}, "reject", "buyer@example.com", http.StatusOK},
		{[]step{sellerAgrees, payment, ships, receives}, "accept", "buyer@example.com", http.StatusForbidden},
		{[]step{sellerAgrees, payment, ships, receives, rejects}, "ship_return", "buyer@example.com", http.StatusOK},
		{[]step{sellerAgrees, payment, ships, receives, rejects, shipsBack}, "receive_return", "seller@example.com", http.StatusOK},
		{[]step{sellerAgrees, payment, ships, receives, rejects, shipsBack, receivesBack}, "accept_return", "seller@example.com", http.StatusForbidden},
		{[]step{sellerAgrees, payment, ships, receives, rejects, shipsBack, receivesBack}, "reject_return", "seller@example.com", http.StatusForbidden},
	}
	covered := map[string]bool{}
	for _, tc := range tests {
		covered[tc.action] = true
		if want := map[bool]int{true: http.StatusOK, false: http.StatusForbidden}[asCustomerMatrix[tc.action]]; want != tc.want {
			t.Errorf("%s: the case expects %d, the matrix %d", tc.action, tc.want, want)
		}
	}
	if len(covered) != len(actionNames) {
		t.Errorf("cases cover %d of %d actions", len(covered), len(actionNames))
	}
	tests = append(tests, []struct {
		before []step
		action string
		as     string
		want   int
	}{
		// The role rules still apply to the party acted for.
		{[]step{sellerAgrees, payment}, "ship", "buyer@example.com", http.StatusForbidden},
		// The partner cancels as itself, as anyone may before both agree and only it may after.
		{[]step{sellerAgrees}, "cancel", "buyer@example.com", http.StatusForbidden},
	}...)
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

// TestDocMatchesLifecycle: the package comment's table of actions says what the table
// lifecycle does: the same actions in the same order, performed by the same role, with
// the same As-Customer answer.
func TestDocMatchesLifecycle(t *testing.T) {
	data, err := os.ReadFile("doc.go")
	must(t, err)
	var rows [][]string
	inTable := false
	for line := range strings.Lines(string(data)) {
		fields := strings.Fields(strings.TrimPrefix(line, "//\t"))
		switch {
		case len(fields) > 2 && fields[0] == "action" && fields[2] == "As-Customer":
			inTable = true
		case inTable && !strings.HasPrefix(line, "//\t"):
			inTable = false
		case inTable:
			rows = append(rows, fields)
		}
	}
	if len(rows) != len(lifecycle) {
		t.Fatalf("the doc's table has %d rows, lifecycle %d", len(rows), len(lifecycle))
	}
	for i, a := range lifecycle {
		role := strings.Join(a.roles, ",")
		if role == "" {
			role = "party"
		}
		want := []string{a.name, role, map[bool]string{true: "yes", false: "no"}[a.delegable]}
		if !slices.Equal(rows[i][:3], want) {
			t.Errorf("doc row %d = %v, lifecycle says %v", i, rows[i][:3], want)
		}
	}
}
