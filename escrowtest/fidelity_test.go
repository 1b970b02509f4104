package escrowtest

import (
	"net/http"
	"strconv"
	"strings"
	"testing"
)

// Tests of the request shapes production clients send and the live API accepts (issue
// 14, "What real clients send" in the API notes). Each is named after the shape.

func TestAcceptsDotNetNumericStringIntegers(t *testing.T) {
	w := newWorld(t)
	b := merchandise()
	set(b, "items.0.quantity", "2")
	set(b, "items.0.inspection_period", "259200")
	r := w.b.must(http.StatusCreated, http.MethodPost, "transaction", b)
	if r.get("items.0.quantity") != 2.0 || r.get("items.0.inspection_period") != 259200.0 {
		t.Errorf("numeric strings not read as numbers: %s", r.raw)
	}
	// A motor vehicle's year, and the errors a non-numeric string still gets.
	mv := set(merchandise(), "items.0.type", "motor_vehicle")
	set(mv, "items.0.category", nil)
	set(mv, "items.0.extra_attributes", body{"year": "2010"})
	if r := w.b.must(http.StatusCreated, http.MethodPost, "transaction", mv); r.get("items.0.extra_attributes.year") != 2010.0 {
		t.Errorf("year: %s", r.raw)
	}
	bad := set(merchandise(), "items.0.quantity", "one")
	if r := w.b.must(http.StatusUnprocessableEntity, http.MethodPost, "transaction", bad); strings.Join(r.errorPaths(), ",") != "items.0.quantity" {
		t.Errorf("a non-numeric quantity: %s", r.raw)
	}
	// Ids in bodies: a saved disbursement method selected by {"id": "701"}.
	id, _ := w.funded(merchandise())
	w.s.must(http.StatusOK, http.MethodPost, txPath(id, "disbursement_methods"), ach())
	other, _ := w.funded(merchandise())
	saved := w.s.must(http.StatusOK, http.MethodGet, "customer/me/disbursement_methods", nil).id("saved_disbursement_methods.0.id")
	r = w.s.must(http.StatusOK, http.MethodPatch, txPath(other, "disbursement_methods"), body{"id": strconv.FormatInt(saved, 10)})
	if r.id("selected_disbursement_method.id") != saved {
		t.Errorf("select by a numeric string id: %s", r.raw)
	}
}

func TestAcceptsStringBooleansInExtraAttributes(t *testing.T) {
	w := newWorld(t)
	d := set(domain(), "items.0.extra_attributes", body{"with_content": "true", "concierge": "false"})
	set(d, "items.0.category", "collectibles")
	set(d, "items.0.schedule.0.payer_customer", "buyer@example.com")
	r := w.s.must(http.StatusCreated, http.MethodPost, "transaction", set(d, "items.0.schedule.0.beneficiary_customer", "me"))
	if r.get("items.0.extra_attributes.with_content") != true || r.get("items.0.extra_attributes.concierge") != false {
		t.Errorf("with_content \"true\": %s", r.raw)
	}
	mv := set(merchandise(), "items.0.type", "motor_vehicle")
	set(mv, "items.0.category", nil)
	set(mv, "items.0.extra_attributes", body{"year": 2010, "title_collection": "true", "lien_holder_payoff": "false"})
	r = w.b.must(http.StatusCreated, http.MethodPost, "transaction", mv)
	if r.get("items.0.extra_attributes.title_collection") != true || r.get("items.0.extra_attributes.lien_holder_payoff") != false {
		t.Errorf("motor vehicle upgrades: %s", r.raw)
	}
	bad := set(merchandise(), "items.0.type", "motor_vehicle")
	set(bad, "items.0.category", nil)
	set(bad, "items.0.extra_attributes", body{"year": 2010, "title_collection": "yes"})
	if r := w.b.must(http.StatusUnprocessableEntity, http.MethodPost, "transaction", bad); strings.Join(r.errorPaths(), ",") != "items.0.extra_attributes.title_collection" {
		t.Errorf("\"yes\" is no boolean: %s", r.raw)
	}
}

func TestAcceptsGBPAndCADCurrencies(t *testing.T) {
	w := newWorld(t)
	for _, c := range []string{"usd", "aud", "euro", "gbp", "cad"} {
		if r := w.b.must(http.StatusCreated, http.MethodPost, "transaction", set(merchandise(), "currency", c)); r.str("currency") != c {
			t.Errorf("%s: %s", c, r.raw)
		}
	}
	w.b.must(http.StatusUnprocessableEntity, http.MethodPost, "transaction", set(merchandise(), "currency", "GBP"))
}

func TestShowsPartiesByEmailAddressLikeProviderExamples(t *testing.T) {
	w := newWorld(t)
	id := w.b.create(merchandise())
	for _, c := range []*client{w.b, w.s} {
		r := c.must(http.StatusOK, http.MethodGet, txPath(id), nil)
		if strings.Contains(string(r.raw), `"me"`) || customers(r) != "buyer@example.com seller@example.com buyer@example.com" ||
			r.str("items.0.schedule.0.payer_customer") != "buyer@example.com" || r.str("items.0.fees.0.payer_customer") != "buyer@example.com" {
			t.Errorf("%s's view: %s", c.user, r.raw)
		}
	}
}

func TestEmitsPaymentReceivedForPluginOrderState(t *testing.T) {
	w := newWorld(t)
	id := w.b.create(merchandise())
	w.s.act(http.StatusOK, id, 0, action("agree"))
	w.b.must(http.StatusOK, http.MethodPost, txPath(id, "payment_methods", "wire_transfer"), nil)
	if err := w.srv.ApprovePayment(id); err != nil {
		t.Fatal(err)
	}
	if got := eventsOf(t, w.b, id); got != "create agree payment_sent payment_received payment_approved" {
		t.Errorf("events: %s", got)
	}
}

// TestAcceptsWooCommerceShippingFeeWithoutFees: the provider's e-commerce plugins put the
// fee entries on the goods and none on the shipping_fee item, with buyer-paid,
// seller-paid and split fees. The shipping item pays its escrow fee as the goods do.
func TestAcceptsWooCommerceShippingFeeWithoutFees(t *testing.T) {
	tests := []struct {
		name        string
		fees        []any
		shipPayers  string // the payers of the shipping item's escrow fee entries
		shipAmounts string
	}{
		{"buyer pays", []any{body{"type": "escrow", "payer_customer": "me", "split": "1"}}, "buyer@example.com", "1.63"},
		{"seller pays", []any{body{"type": "escrow", "payer_customer": "seller@example.com", "split": 1}}, "seller@example.com", "1.63"},
		{"split", []any{
			body{"type": "escrow", "payer_customer": "me", "split": 0.5},
			body{"type": "escrow", "payer_customer": "seller@example.com", "split": "0.5"},
		}, "buyer@example.com seller@example.com", "0.82 0.81"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t)
			b := set(merchandise(), "items.0.fees", tc.fees)
			b["items"] = append(b["items"].([]any), body{
				"title": "Shipping", "type": "shipping_fee", "quantity": "1",
				"schedule": []any{body{"amount": "50.00", "payer_customer": "me", "beneficiary_customer": "seller@example.com"}},
			})
			r := w.b.must(http.StatusCreated, http.MethodPost, "transaction", b)
			var payers, amounts []string
			for _, f := range r.list("items.1.fees") {
				payers = append(payers, f.(map[string]any)["payer_customer"].(string))
				amounts = append(amounts, f.(map[string]any)["amount"].(string))
			}
			if strings.Join(payers, " ") != tc.shipPayers || strings.Join(amounts, " ") != tc.shipAmounts {
				t.Errorf("shipping fees %v %v: %s", payers, amounts, r.raw)
			}
		})
	}
	// The rule still holds between goods items.
	w := newWorld(t)
	b := set(milestones(), "items.0.fees", []any{body{"type": "escrow", "payer_customer": "me"}})
	if r := w.b.must(http.StatusUnprocessableEntity, http.MethodPost, "transaction", b); strings.Join(r.errorPaths(), ",") != "items.1.fees.all" {
		t.Errorf("goods with different fee schedules: %s", r.raw)
	}
}
