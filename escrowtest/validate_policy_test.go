package escrowtest

// Policies of validate.go that scripts/mutate found unpinned: what a 422 says, field by
// field, as a client reading the errors sees it.

import (
	"net/http"
	"slices"
	"strings"
	"testing"
)

// messages returns the messages of a 422 at a dotted path under "errors".
func messages(r reply, path string) []string {
	var out []string
	for _, m := range r.list("errors." + path) {
		out = append(out, m.(string))
	}
	return out
}

// TestWrongTypeReportedOnce: a field sent with the wrong JSON type gets one message, that
// it has the wrong type, and not a second one about the empty value it was read as.
func TestWrongTypeReportedOnce(t *testing.T) {
	w := newWorld(t)
	partnerEscrowFee := []any{body{"type": "escrow", "payer_customer": 5}}
	for _, tc := range []struct {
		name, as, path string
		body           body
	}{
		{"party role", "buyer", "parties.1", set(merchandise(), "parties.1.role", 5)},
		{"party customer", "buyer", "parties.1", set(merchandise(), "parties.1.customer", 5)},
		{"item type", "buyer", "items.0.type", set(merchandise(), "items.0.type", 5)},
		{"schedule payer", "buyer", "items.0.schedule.0.payer_customer", set(merchandise(), "items.0.schedule.0.payer_customer", 5)},
		{"fee payer", "partner", "items.0.fees.0.payer_customer", set(partnered(), "items.0.fees", partnerEscrowFee)},
		{"attribute of another type", "buyer", "items.0.extra_attributes.vin", set(merchandise(), "items.0.extra_attributes", body{"vin": 5})},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := map[string]*client{"buyer": w.b, "partner": w.p}[tc.as]
			r := c.must(http.StatusUnprocessableEntity, http.MethodPost, "transaction", tc.body)
			if got := messages(r, tc.path); len(got) != 1 {
				t.Errorf("errors at %s: %q, want one message (all errors: %v)", tc.path, got, r.errorPaths())
			}
		})
	}
}

// TestPartnerCannotPayTheEscrowFee is fee rule 5 and validation condition 5: the partner
// named as payer of the escrow fee is told so, not that it is no party; and a customer
// that is no party is told that, whatever the fee.
func TestPartnerCannotPayTheEscrowFee(t *testing.T) {
	w := newWorld(t)
	for _, tc := range []struct {
		name, fee, payer, want string
	}{
		{"partner, escrow fee", "escrow", "me", "a partner cannot pay the escrow fee"},
		{"partner, another fee", "wire_disbursement", "me", "is not a party of the transaction"},
		{"stranger, escrow fee", "escrow", "stranger@example.com", "is not a party of the transaction"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := set(partnered(), "items.0.fees", []any{
				body{"type": "escrow", "payer_customer": "buyer@example.com"},
				body{"type": tc.fee, "payer_customer": tc.payer},
			})
			if tc.fee == "escrow" {
				set(b, "items.0.fees.0.split", 0.5)
				set(b, "items.0.fees.1.split", 0.5)
			}
			r := w.p.must(http.StatusUnprocessableEntity, http.MethodPost, "transaction", b)
			got := messages(r, "items.0.fees.1.payer_customer")
			if len(got) != 1 || !strings.Contains(got[0], tc.want) {
				t.Errorf("payer %s of a %s fee: %q, want %q (all errors: %v)", tc.payer, tc.fee, got, tc.want, r.errorPaths())
			}
		})
	}
}

// TestFailedPartyNotReportedAgain: a party entry that fails is reported at its index; the
// references to that customer elsewhere (as a fee payer, or a beneficiary) are not
// reported a second time.
func TestFailedPartyNotReportedAgain(t *testing.T) {
	w := newWorld(t)
	t.Run("party with an unknown role, paying a fee", func(t *testing.T) {
		b := set(merchandise(), "parties", append(merchandise()["parties"].([]any), body{"role": "agent", "customer": "agent@example.com"}))
		set(b, "items.0.fees", []any{
			body{"type": "escrow", "payer_customer": "me", "split": 0.5},
			body{"type": "escrow", "payer_customer": "agent@example.com", "split": 0.5},
		})
		r := w.b.must(http.StatusUnprocessableEntity, http.MethodPost, "transaction", b)
		if got := r.errorPaths(); !slices.Equal(got, []string{"parties.2"}) {
			t.Errorf("errors at %v, want only the party's entry, parties.2", got)
		}
	})
	t.Run("second buyer, named as the beneficiary", func(t *testing.T) {
		b := set(merchandise(), "parties", append(merchandise()["parties"].([]any), body{"role": "buyer", "customer": "other@example.com"}))
		set(b, "items.0.schedule.0.beneficiary_customer", "other@example.com")
		r := w.b.must(http.StatusUnprocessableEntity, http.MethodPost, "transaction", b)
		if got := r.errorPaths(); !slices.Equal(got, []string{"parties.2"}) {
			t.Errorf("errors at %v, want only the party's entry, parties.2", got)
		}
	})
}

// TestCategoryOnlyWhereTheTypeHasCategories: an item type without categories (domain names
// held, shipping fees) refuses one, at the item's category.
func TestCategoryOnlyWhereTheTypeHasCategories(t *testing.T) {
	w := newWorld(t)
	b := withFeeItem(merchandise(), "shipping_fee", "seller@example.com", 5)
	set(b, "items.1.schedule.0.payer_customer", "me")
	set(b, "items.1.category", "collectibles")
	r := w.b.must(http.StatusUnprocessableEntity, http.MethodPost, "transaction", b)
	if got := r.errorPaths(); !slices.Equal(got, []string{"items.1.category"}) {
		t.Errorf("a category on a shipping_fee item: errors at %v", got)
	}
}

// TestConciergeIsABoolean: extra_attributes.concierge is accepted on any item, as a boolean
// or the strings "true" and "false", and refused as anything else.
func TestConciergeIsABoolean(t *testing.T) {
	w := newWorld(t)
	for _, v := range []any{true, "false"} {
		w.b.must(http.StatusCreated, http.MethodPost, "transaction", set(merchandise(), "items.0.extra_attributes", body{"concierge": v}))
	}
	r := w.b.must(http.StatusUnprocessableEntity, http.MethodPost, "transaction", set(merchandise(), "items.0.extra_attributes", body{"concierge": "yes"}))
	if got := r.errorPaths(); !slices.Equal(got, []string{"items.0.extra_attributes.concierge"}) {
		t.Errorf("concierge \"yes\": errors at %v", got)
	}
}

// TestEscrowFeeEntryWithoutSplitIsWhole: an escrow fee entry given without a split is the
// whole fee (split "1.0"), paid by its payer.
func TestEscrowFeeEntryWithoutSplitIsWhole(t *testing.T) {
	w := newWorld(t)
	r := w.b.must(http.StatusCreated, http.MethodPost, "transaction", set(merchandise(), "items.0.fees", []any{body{"type": "escrow", "payer_customer": "seller@example.com"}}))
	want := []any{map[string]any{"type": "escrow", "payer_customer": "seller@example.com", "split": "1.0", "amount": "32.50", "amount_without_taxes": "32.50"}}
	if got := r.list("items.0.fees"); !jsonEqual(got, want) {
		t.Errorf("fees %v, want the seller paying the whole escrow fee", got)
	}
}

// TestFeeEntryNeedsAType: a fee entry without a type is refused at its type, even beside a
// valid escrow fee entry.
func TestFeeEntryNeedsAType(t *testing.T) {
	w := newWorld(t)
	b := set(merchandise(), "items.0.fees", []any{
		body{"type": "escrow", "payer_customer": "me"},
		body{"payer_customer": "seller@example.com"},
	})
	r := w.b.must(http.StatusUnprocessableEntity, http.MethodPost, "transaction", b)
	if got := r.errorPaths(); !slices.Equal(got, []string{"items.0.fees.1.type"}) {
		t.Errorf("a fee entry without a type: errors at %v", got)
	}
}
