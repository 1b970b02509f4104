package escrowtest

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
)

// brokered is a valid body created by the broker: the seller is hidden from the buyer,
// and a commission charged to the buyer is hidden from the seller.
func brokered() body {
	return body{
		"currency": "usd", "description": "Brokered sale",
		"parties": []any{
			body{"role": "buyer", "customer": "buyer@example.com"},
			body{"role": "seller", "customer": "seller@example.com", "visibility": body{"hidden_from": []any{"buyer@example.com"}}},
			body{"role": "broker", "customer": "me", "visibility": body{"hidden_from": []any{"seller@example.com"}}},
		},
		"items": []any{
			body{"title": "Car", "type": "motor_vehicle", "extra_attributes": body{"year": 1999, "make": "Saab", "vin": "YS3"},
				"schedule": []any{body{"amount": 5000, "payer_customer": "buyer@example.com", "beneficiary_customer": "seller@example.com"}}},
			body{"type": "broker_fee", "visibility": body{"hidden_from": []any{"seller@example.com"}},
				"schedule": []any{body{"amount": 250, "payer_customer": "buyer@example.com", "beneficiary_customer": "me"}}},
		},
	}
}

func TestCreateValidation(t *testing.T) {
	item0 := func(b body) body { return get(b, "items.0").(map[string]any) }
	tests := []struct {
		name   string
		body   func() body
		as     string // "buyer" (default), "partner" or "broker"
		paths  []string
		status int // 422 unless set
	}{
		{name: "currency missing", body: func() body { return set(merchandise(), "currency", nil) }, paths: []string{"currency"}},
		{name: "currency uppercase", body: func() body { return set(merchandise(), "currency", "USD") }, paths: []string{"currency"}},
		{name: "currency unknown", body: func() body { return set(merchandise(), "currency", "chf") }, paths: []string{"currency"}},
		{name: "currency not a string", body: func() body { return set(merchandise(), "currency", 840) }, paths: []string{"currency"}},
		{name: "description missing", body: func() body { return set(merchandise(), "description", nil) }, paths: []string{"description"}},
		{name: "description empty", body: func() body { return set(merchandise(), "description", "") }, paths: []string{"description"}},
		{name: "reference not a string", body: func() body { return set(merchandise(), "reference", 7) }, paths: []string{"reference"}},

		{name: "parties missing", body: func() body { return set(merchandise(), "parties", nil) }, paths: []string{"parties"}},
		{name: "parties not a list", body: func() body { return set(merchandise(), "parties", "buyer") }, paths: []string{"parties"}},
		{name: "party not an object", body: func() body { return set(merchandise(), "parties.1", "seller@example.com") }, paths: []string{"items.0.schedule.0.beneficiary_customer", "parties.1", "parties.all"}},
		{name: "party role missing", body: func() body { return set(merchandise(), "parties.1.role", nil) }, paths: []string{"parties.1", "parties.all"}},
		{name: "party role partner", body: func() body { return set(merchandise(), "parties.1.role", "partner") }, paths: []string{"parties.1", "parties.all"}},
		{name: "party role unknown", body: func() body { return set(merchandise(), "parties.1.role", "owner") }, paths: []string{"parties.1", "parties.all"}},
		{name: "two buyers", body: func() body {
			b := merchandise()
			b["parties"] = append(b["parties"].([]any), body{"role": "buyer", "customer": "other@example.com"})
			return b
		}, paths: []string{"parties.2"}},
		{name: "no seller", body: func() body {
			return set(set(merchandise(), "parties", []any{body{"role": "buyer", "customer": "me"}}), "items.0.schedule.0.beneficiary_customer", "me")
		}, paths: []string{"items.0.schedule.0.beneficiary_customer", "parties.all"}},
		{name: "no buyer", body: func() body {
			b := set(merchandise(), "parties", []any{body{"role": "seller", "customer": "seller@example.com"}, body{"role": "broker", "customer": "me"}})
			return set(b, "items.0.schedule.0.payer_customer", "seller@example.com")
		}, paths: []string{"items.0.schedule.0.payer_customer", "parties.all"}},
		{name: "party customer missing", body: func() body { return set(merchandise(), "parties.1.customer", nil) }, paths: []string{"items.0.schedule.0.beneficiary_customer", "parties.1"}},
		{name: "same customer twice", body: func() body { return set(merchandise(), "parties.1.customer", "buyer@example.com") }, paths: []string{"items.0.schedule.0.beneficiary_customer", "parties.1"}},
		{name: "customer not an e-mail", body: func() body { return set(merchandise(), "parties.1.customer", "seller") }, paths: []string{"items.0.schedule.0.beneficiary_customer", "parties.1"}},
		{name: "visibility without a broker", body: func() body {
			return set(merchandise(), "parties.1.visibility", body{"hidden_from": []any{"me"}})
		}, paths: []string{"parties.1"}},
		{name: "visibility hides a stranger", body: func() body {
			return set(brokered(), "parties.1.visibility.hidden_from", []any{"nobody@example.com"})
		}, as: "broker", paths: []string{"parties.1"}},

		{name: "items missing", body: func() body { return set(merchandise(), "items", nil) }, paths: []string{"items"}},
		{name: "items empty", body: func() body { return set(merchandise(), "items", []any{}) }, paths: []string{"items.all"}},
		{name: "item not an object", body: func() body { return set(merchandise(), "items.0", 3) }, paths: []string{"items.0", "items.all"}},
		{name: "type missing", body: func() body { return set(merchandise(), "items.0.type", nil) }, paths: []string{"items.0.type", "items.all"}},
		{name: "type unknown", body: func() body { return set(merchandise(), "items.0.type", "service") }, paths: []string{"items.0.type", "items.all"}},
		{name: "type unknown, with fees", body: func() body {
			return set(set(merchandise(), "items.0.type", "service"), "items.0.fees", []any{body{"type": "escrow", "payer_customer": "me"}})
		}, paths: []string{"items.0.type", "items.all"}},
		{name: "types mixed", body: func() body {
			b := merchandise()
			b["items"] = append(b["items"].([]any), get(domain(), "items.0"))
			return set(set(b, "items.1.schedule.0.payer_customer", "me"), "items.1.schedule.0.beneficiary_customer", "seller@example.com")
		}, paths: []string{"items.1.type"}},
		{name: "only a shipping fee", body: func() body { return set(set(merchandise(), "items.0.type", "shipping_fee"), "items.0.category", nil) }, paths: []string{"items.all"}},
		{name: "motor vehicle without year", body: func() body {
			return set(set(merchandise(), "items.0.type", "motor_vehicle"), "items.0.category", "boats")
		}, paths: []string{"items.0.extra_attributes.year"}},
		{name: "motor vehicle year not an integer", body: func() body {
			b := set(set(merchandise(), "items.0.type", "motor_vehicle"), "items.0.category", nil)
			return set(b, "items.0.extra_attributes", body{"year": "nineteen"})
		}, paths: []string{"items.0.extra_attributes.year"}},
		{name: "vehicle attributes on merchandise", body: func() body {
			return set(merchandise(), "items.0.extra_attributes", body{"vin": "X", "with_content": true})
		}, paths: []string{"items.0.extra_attributes.vin", "items.0.extra_attributes.with_content"}},
		{name: "category unknown", body: func() body { return set(merchandise(), "items.0.category", "pets") }, paths: []string{"items.0.category"}},
		{name: "category of another type", body: func() body {
			b := set(merchandise(), "items.0.type", "motor_vehicle")
			return set(b, "items.0.extra_attributes", body{"year": 2001})
		}, paths: []string{"items.0.category"}},
		{name: "category on a domain without content", body: func() body { return set(domain(), "items.0.category", "collectibles") }, as: "seller", paths: []string{"items.0.category"}},
		{name: "inspection period not whole days", body: func() body { return set(merchandise(), "items.0.inspection_period", 90000) }, paths: []string{"items.0.inspection_period"}},
		{name: "inspection period zero", body: func() body { return set(merchandise(), "items.0.inspection_period", 0) }, paths: []string{"items.0.inspection_period"}},
		{name: "inspection period not a number", body: func() body { return set(merchandise(), "items.0.inspection_period", "3 days") }, paths: []string{"items.0.inspection_period"}},
		{name: "inspection periods differ", body: func() body {
			b := domain()
			b["items"] = append(b["items"].([]any), set(clone(item0(domain())), "inspection_period", 86400))
			return b
		}, as: "seller", paths: []string{"items.1.inspection_period"}},
		{name: "quantity zero", body: func() body { return set(merchandise(), "items.0.quantity", 0) }, paths: []string{"items.0.quantity"}},

		{name: "schedule missing", body: func() body { return set(merchandise(), "items.0.schedule", nil) }, paths: []string{"items.0.schedule"}},
		{name: "schedule empty", body: func() body { return set(merchandise(), "items.0.schedule", []any{}) }, paths: []string{"items.0.schedule"}},
		{name: "two entries on merchandise", body: func() body {
			b := merchandise()
			s := get(b, "items.0.schedule").([]any)
			return set(b, "items.0.schedule", append(s, clone(s[0].(map[string]any))))
		}, paths: []string{"items.0.schedule.all"}},
		{name: "due date on merchandise", body: func() body { return set(merchandise(), "items.0.schedule.0.due_date", "2024-06-01T00:00:00Z") }, paths: []string{"items.0.schedule.0.due_date"}},
		{name: "due date missing on a milestone", body: func() body { return set(milestones(), "items.1.schedule.0.due_date", nil) }, paths: []string{"items.1.schedule.0.due_date"}},
		{name: "due date not a timestamp", body: func() body { return set(milestones(), "items.0.schedule.0.due_date", "next week") }, paths: []string{"items.0.schedule.0.due_date"}},
		{name: "amount missing", body: func() body { return set(merchandise(), "items.0.schedule.0.amount", nil) }, paths: []string{"items.0.schedule.0.amount"}},
		{name: "amount negative", body: func() body { return set(merchandise(), "items.0.schedule.0.amount", -5) }, paths: []string{"items.0.schedule.0.amount"}},
		{name: "amount zero", body: func() body { return set(merchandise(), "items.0.schedule.0.amount", "0.00") }, paths: []string{"items.0.schedule.0.amount"}},
		{name: "amount with three decimals", body: func() body { return set(merchandise(), "items.0.schedule.0.amount", 10.005) }, paths: []string{"items.0.schedule.0.amount"}},
		{name: "amount not numeric", body: func() body { return set(merchandise(), "items.0.schedule.0.amount", "ten") }, paths: []string{"items.0.schedule.0.amount"}},
		{name: "amount a boolean", body: func() body { return set(merchandise(), "items.0.schedule.0.amount", true) }, paths: []string{"items.0.schedule.0.amount"}},
		{name: "amount too large", body: func() body { return set(merchandise(), "items.0.schedule.0.amount", 1e12) }, paths: []string{"items.0.schedule.0.amount"}},
		{name: "payer missing", body: func() body { return set(merchandise(), "items.0.schedule.0.payer_customer", nil) }, paths: []string{"items.0.schedule.0.payer_customer"}},
		{name: "beneficiary missing", body: func() body { return set(merchandise(), "items.0.schedule.0.beneficiary_customer", nil) }, paths: []string{"items.0.schedule.0.beneficiary_customer"}},
		{name: "payer not a party", body: func() body { return set(merchandise(), "items.0.schedule.0.payer_customer", "other@example.com") }, paths: []string{"items.0.schedule.0.payer_customer"}},
		{name: "payer is the seller", body: func() body { return set(merchandise(), "items.0.schedule.0.payer_customer", "seller@example.com") }, paths: []string{"items.0.schedule.0.payer_customer"}},
		{name: "beneficiary is the buyer", body: func() body { return set(merchandise(), "items.0.schedule.0.beneficiary_customer", "me") }, paths: []string{"items.0.schedule.0.beneficiary_customer"}},

		{name: "broker fee without a broker", body: func() body {
			b := merchandise()
			b["items"] = append(b["items"].([]any), body{"type": "broker_fee", "schedule": []any{body{"amount": 10, "payer_customer": "me", "beneficiary_customer": "seller@example.com"}}})
			return b
		}, paths: []string{"items.1.schedule.0.beneficiary_customer", "items.1.type"}},
		{name: "broker fee to the seller", body: func() body { return set(brokered(), "items.1.schedule.0.beneficiary_customer", "seller@example.com") }, as: "broker", paths: []string{"items.1.schedule.0.beneficiary_customer"}},
		{name: "broker fee with a title", body: func() body { return set(brokered(), "items.1.title", "Commission") }, as: "broker", paths: []string{"items.1.title"}},
		{name: "broker fees with different visibility", body: func() body {
			b := brokered()
			b["items"] = append(b["items"].([]any), body{"type": "broker_fee", "schedule": []any{body{"amount": 10, "payer_customer": "seller@example.com", "beneficiary_customer": "me"}}})
			return b
		}, as: "broker", paths: []string{"items.2.visibility"}},
		{name: "broker fee hides a party no party hides", body: func() body { return set(brokered(), "items.1.visibility.hidden_from", []any{"me"}) }, as: "broker", paths: []string{"items.1.visibility"}},
		{name: "visibility on merchandise", body: func() body { return set(merchandise(), "items.0.visibility", body{"hidden_from": []any{}}) }, paths: []string{"items.0.visibility"}},
		{name: "partner fee to the seller", body: func() body {
			b := partnered()
			b["items"] = append(b["items"].([]any), body{"type": "partner_fee", "schedule": []any{body{"amount": 10, "payer_customer": "buyer@example.com", "beneficiary_customer": "seller@example.com"}}})
			return b
		}, as: "partner", paths: []string{"items.1.schedule.0.beneficiary_customer"}},
		{name: "partner fee from a customer", body: func() body {
			b := merchandise()
			b["items"] = append(b["items"].([]any), body{"type": "partner_fee", "schedule": []any{body{"amount": 10, "payer_customer": "seller@example.com", "beneficiary_customer": "me"}}})
			return b
		}, paths: []string{"items.1.type"}},

		{name: "split not a half or one", body: func() body {
			return set(merchandise(), "items.0.fees", []any{body{"type": "escrow", "payer_customer": "me", "split": 0.7}})
		}, paths: []string{"items.0.fees.0.split"}},
		{name: "first split refused beside a half", body: func() body {
			return set(merchandise(), "items.0.fees", []any{body{"type": "escrow", "payer_customer": "me", "split": 0.7}, body{"type": "escrow", "payer_customer": "seller@example.com", "split": 0.5}})
		}, paths: []string{"items.0.fees.0.split"}},
		{name: "splits short of one", body: func() body {
			return set(merchandise(), "items.0.fees", []any{body{"type": "escrow", "payer_customer": "me", "split": 0.5}})
		}, paths: []string{"items.0.fees.all"}},
		{name: "splits over one", body: func() body {
			return set(merchandise(), "items.0.fees", []any{body{"type": "escrow", "payer_customer": "me", "split": 1}, body{"type": "escrow", "payer_customer": "seller@example.com", "split": "0.5"}})
		}, paths: []string{"items.0.fees.all"}},
		{name: "fee amount given", body: func() body {
			return set(merchandise(), "items.0.fees", []any{body{"type": "escrow", "payer_customer": "me", "split": 1, "amount": 32.5}})
		}, paths: []string{"items.0.fees.0.amount"}},
		{name: "fee payer missing", body: func() body {
			return set(merchandise(), "items.0.fees", []any{body{"type": "escrow", "split": 1}})
		}, paths: []string{"items.0.fees.0.payer_customer"}},
		{name: "fee payer not a party", body: func() body {
			return set(merchandise(), "items.0.fees", []any{body{"type": "escrow", "payer_customer": "other@example.com", "split": 1}})
		}, paths: []string{"items.0.fees.0.payer_customer"}},
		{name: "partner pays the escrow fee", body: func() body {
			b := set(merchandise(), "parties.0.customer", "buyer@example.com")
			b = set(b, "items.0.schedule.0.payer_customer", "buyer@example.com")
			return set(b, "items.0.fees", []any{body{"type": "escrow", "payer_customer": "me", "split": 1}})
		}, as: "partner", paths: []string{"items.0.fees.0.payer_customer"}},
		{name: "seller pays a card deposit", body: func() body {
			return set(merchandise(), "items.0.fees", []any{
				body{"type": "escrow", "payer_customer": "me", "split": 1},
				body{"type": "creditcard_deposit", "payer_customer": "seller@example.com"},
			})
		}, paths: []string{"items.0.fees.1.payer_customer"}},
		{name: "split on a non-escrow fee", body: func() body {
			return set(merchandise(), "items.0.fees", []any{
				body{"type": "escrow", "payer_customer": "me", "split": 1},
				body{"type": "wire_disbursement", "payer_customer": "seller@example.com", "split": 1},
			})
		}, paths: []string{"items.0.fees.1.split"}},
		{name: "fee type unknown", body: func() body {
			return set(merchandise(), "items.0.fees", []any{body{"type": "escrow", "payer_customer": "me", "split": 1}, body{"type": "tip", "payer_customer": "me"}})
		}, paths: []string{"items.0.fees.1.type"}},
		{name: "fee schedules differ", body: func() body {
			b := milestones()
			set(b, "items.0.fees", []any{body{"type": "escrow", "payer_customer": "me", "split": 1}})
			return set(b, "items.1.fees", []any{body{"type": "escrow", "payer_customer": "seller@example.com", "split": 1}})
		}, paths: []string{"items.1.fees.all"}},
		{name: "fees on one item only", body: func() body {
			return set(milestones(), "items.0.fees", []any{body{"type": "escrow", "payer_customer": "me", "split": 1}})
		}, paths: []string{"items.1.fees.all"}},

		{name: "every failure at once", body: func() body {
			b := set(merchandise(), "currency", "USD")
			b = set(b, "parties.1.role", "owner")
			b = set(b, "items.0.schedule.0.amount", "1.234")
			return set(b, "items.0.inspection_period", 1)
		}, paths: []string{"currency", "items.0.inspection_period", "items.0.schedule.0.amount", "parties.1", "parties.all"}},

		{name: "not JSON", body: nil, status: http.StatusBadRequest},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t)
			c := map[string]*client{"": w.b, "buyer": w.b, "seller": w.s, "broker": w.k, "partner": w.p}[tc.as]
			var r reply
			if tc.body == nil {
				r = c.do(http.MethodPost, "transaction", `{"currency": "usd",`)
			} else {
				r = c.do(http.MethodPost, "transaction", tc.body())
			}
			want := cmpOr(tc.status, http.StatusUnprocessableEntity)
			if r.status != want {
				t.Fatalf("status %d, want %d\n%s", r.status, want, r.raw)
			}
			if want != http.StatusUnprocessableEntity {
				if r.str("error") == "" {
					t.Errorf("no error code in %s", r.raw)
				}
				return
			}
			if got := r.errorPaths(); !slices.Equal(got, tc.paths) {
				t.Errorf("error paths\n got %v\nwant %v\n%s", got, tc.paths, r.raw)
			}
			for _, p := range r.errorPaths() {
				msgs := get(r.get("errors"), p).([]any)
				if len(msgs) == 0 || msgs[0].(string) == "" {
					t.Errorf("%s: no message", p)
				}
			}
			// Nothing was created.
			if n := len(c.must(http.StatusOK, http.MethodGet, "transaction", nil).list("transactions")); n != 0 {
				t.Errorf("%d transactions after a refused create", n)
			}
		})
	}
}

func cmpOr(v, def int) int {
	if v != 0 {
		return v
	}
	return def
}

// TestValidBodies checks bodies that every rule allows, including the forms the API
// notes say clients send.
func TestValidBodies(t *testing.T) {
	tests := []struct {
		name string
		as   string
		body func() body
	}{
		{"merchandise", "buyer", merchandise},
		{"amount as a string", "buyer", func() body { return set(merchandise(), "items.0.schedule.0.amount", "1000.00") }},
		{"amount with trailing zeros", "buyer", func() body { return set(merchandise(), "items.0.schedule.0.amount", "1000.000") }},
		{"split as strings", "buyer", func() body {
			return set(merchandise(), "items.0.fees", []any{body{"type": "escrow", "payer_customer": "me", "split": "0.5"}, body{"type": "escrow", "payer_customer": "seller@example.com", "split": "0.5"}})
		}},
		{"milestones", "buyer", milestones},
		{"domain sold by the seller", "seller", domain},
		{"several domain names", "seller", func() body {
			b := domain()
			b["items"] = append(b["items"].([]any), clone(get(domain(), "items.0").(map[string]any)))
			return b
		}},
		{"domain name holding with several dated entries", "seller", func() body {
			b := set(domain(), "items.0.type", "domain_name_holding")
			s := get(b, "items.0.schedule.0").(map[string]any)
			s["due_date"] = "2024-06-01"
			return set(b, "items.0.schedule", []any{s, set(clone(s), "due_date", "2024-07-01T00:00:00")})
		}},
		{"domain with content and category", "seller", func() body {
			return set(set(domain(), "items.0.extra_attributes", body{"with_content": true}), "items.0.category", "business_and_internet")
		}},
		{"brokered motor vehicle", "broker", brokered},
		{"partner not a party", "partner", func() body {
			b := set(merchandise(), "parties.0.customer", "buyer@example.com")
			b = set(b, "items.0.schedule.0.payer_customer", "buyer@example.com")
			b["items"] = append(b["items"].([]any), body{"type": "partner_fee", "schedule": []any{body{"amount": 5, "payer_customer": "seller@example.com", "beneficiary_customer": "me"}}})
			return b
		}},
		{"shipping fee beside goods", "buyer", func() body {
			b := merchandise()
			b["items"] = append(b["items"].([]any), body{"title": "Shipping", "type": "shipping_fee", "schedule": []any{body{"amount": 25, "payer_customer": "me", "beneficiary_customer": "seller@example.com"}}})
			return b
		}},
		{"customer in upper case", "buyer", func() body { return set(merchandise(), "parties.1.customer", "Seller@Example.COM") }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t)
			c := map[string]*client{"buyer": w.b, "seller": w.s, "broker": w.k, "partner": w.p}[tc.as]
			c.must(http.StatusCreated, http.MethodPost, "transaction", tc.body())
		})
	}
}

func TestCreateMalformedBodies(t *testing.T) {
	w := newWorld(t)
	for _, raw := range []string{`{"currency": "usd",`, `[]`, `"text"`, `{} {}`, `null`, `{"a":1}x`} {
		r := w.b.do(http.MethodPost, "transaction", raw)
		if r.status != http.StatusBadRequest || r.str("error") != "bad_request" || r.str("message") == "" {
			t.Errorf("%s: %d %s", raw, r.status, r.raw)
		}
	}
	// An empty body is an empty object: every required field is reported.
	r := w.b.must(http.StatusUnprocessableEntity, http.MethodPost, "transaction", "")
	if got := strings.Join(r.errorPaths(), " "); got != "currency description items parties" {
		t.Errorf("empty body: %s", got)
	}
}

func TestReferenceUniquePerCreator(t *testing.T) {
	w := newWorld(t)
	b := set(merchandise(), "reference", "order-1")
	first := w.b.create(b)
	r := w.b.must(http.StatusUnprocessableEntity, http.MethodPost, "transaction", b)
	if got := r.errorPaths(); !slices.Equal(got, []string{"reference"}) {
		t.Errorf("paths %v", got)
	}
	// Another creator may use the same reference.
	w.s.must(http.StatusCreated, http.MethodPost, "transaction", set(clone(domain()), "reference", "order-1"))
	// Lookup by reference prefers the caller's own.
	if got := w.b.must(http.StatusOK, http.MethodGet, "transaction/reference/order-1", nil).id("id"); got != first {
		t.Errorf("buyer's lookup = %d, want %d", got, first)
	}
	w.x.must(http.StatusNotFound, http.MethodGet, "transaction/reference/order-1", nil)
	w.b.must(http.StatusNotFound, http.MethodGet, "transaction/reference/order-2", nil)
}

// TestItemTypeTable pins itemTypeRules to the spec's item-type rules (part 2), which every
// creation rule reads.
func TestItemTypeTable(t *testing.T) {
	names := func(keep func(itemTypeRule) bool) string {
		var out []string
		for _, r := range itemTypeRules {
			if keep(r) {
				out = append(out, r.name)
			}
		}
		return strings.Join(out, " ")
	}
	for what, c := range map[string]struct {
		keep func(itemTypeRule) bool
		want string
	}{
		"transferable":                 {func(r itemTypeRule) bool { return r.transferable }, "domain_name domain_name_holding general_merchandise milestone motor_vehicle"},
		"several schedules, due dates": {func(r itemTypeRule) bool { return r.schedules }, "domain_name_holding milestone"},
		"visibility":                   {func(r itemTypeRule) bool { return r.visibility }, "broker_fee"},
		"no escrow fee":                {func(r itemTypeRule) bool { return !r.escrowFee }, "broker_fee partner_fee"},
		"paid to the broker":           {func(r itemTypeRule) bool { return r.beneficiary == roleBroker }, "broker_fee"},
		"domain authorization":         {func(r itemTypeRule) bool { return r.domain }, "domain_name domain_name_holding"},
		"year required":                {func(r itemTypeRule) bool { return slices.Contains(r.required, "year") }, "motor_vehicle"},
	} {
		if got := names(c.keep); got != c.want {
			t.Errorf("%s: %s, want %s", what, got, c.want)
		}
	}
	if r := itemRule(itemBrokerFee); !slices.Equal(r.only, []string{"type", "visibility", "schedule"}) {
		t.Errorf("broker_fee creation shape: %v", r.only)
	}
	if itemRule("nonsense").name != "" || transferable("") {
		t.Error("an unknown type has a rule")
	}
}

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
		{"currency", "buyer", "currency", set(merchandise(), "currency", 840)},
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
	t.Run("party with an unknown role, hidden from", func(t *testing.T) {
		b := brokered()
		b["parties"] = append(b["parties"].([]any), body{"role": "agent", "customer": "agent@example.com"})
		set(b, "parties.1.visibility.hidden_from", []any{"buyer@example.com", "agent@example.com"})
		r := w.k.must(http.StatusUnprocessableEntity, http.MethodPost, "transaction", b)
		if got := r.errorPaths(); !slices.Equal(got, []string{"parties.3"}) {
			t.Errorf("errors at %v, want only the party's entry, parties.3", got)
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

// TestCreationDefaultsAndLimits pins the validation limits at their edges and the defaults
// the emulator fills in.
func TestCreationDefaultsAndLimits(t *testing.T) {
	w := newWorld(t)
	t.Run("default inspection period", func(t *testing.T) {
		b := withFeeItem(set(merchandise(), "items.0.inspection_period", nil), "shipping_fee", "seller@example.com", 5)
		set(b, "items.1.schedule.0.payer_customer", "me")
		r := w.b.must(http.StatusCreated, http.MethodPost, "transaction", b)
		if got := r.get("items.0.inspection_period"); got != 259200.0 {
			t.Errorf("goods inspection period %v, want three days", got)
		}
		if got := r.get("items.1.inspection_period"); got != nil && got != 0.0 {
			t.Errorf("a fee item has inspection period %v: nothing to inspect", got)
		}
	})
	t.Run("100 items", func(t *testing.T) {
		b := merchandise()
		for len(b["items"].([]any)) < 100 {
			b = withFeeItem(b, "shipping_fee", "seller@example.com", 1)
			set(b, fmt.Sprintf("items.%d.schedule.0.payer_customer", len(b["items"].([]any))-1), "me")
		}
		w.b.must(http.StatusCreated, http.MethodPost, "transaction", b)
		b = withFeeItem(b, "shipping_fee", "seller@example.com", 1)
		set(b, fmt.Sprintf("items.%d.schedule.0.payer_customer", 100), "me")
		if got := w.b.must(http.StatusUnprocessableEntity, http.MethodPost, "transaction", b).errorPaths(); !slices.Equal(got, []string{"items"}) {
			t.Errorf("101 items: errors at %v", got)
		}
	})
	t.Run("100 schedule entries", func(t *testing.T) {
		b := set(milestones(), "items", []any{milestoneItem("Many", 1)})
		entries := []any{}
		for range 100 {
			entries = append(entries, body{"amount": 1, "payer_customer": "me", "beneficiary_customer": "seller@example.com", "due_date": "2024-06-01T00:00:00Z"})
		}
		set(b, "items.0.schedule", entries)
		w.b.must(http.StatusCreated, http.MethodPost, "transaction", b)
		set(b, "items.0.schedule", append(entries, entries[0]))
		if got := w.b.must(http.StatusUnprocessableEntity, http.MethodPost, "transaction", b).errorPaths(); !slices.Equal(got, []string{"items.0.schedule.all"}) {
			t.Errorf("101 entries: errors at %v", got)
		}
	})
	t.Run("total equal to the maximum", func(t *testing.T) {
		one := set(milestones(), "items", []any{milestoneItem("All", 0)})
		entries := []any{
			body{"amount": "999999999.99", "payer_customer": "me", "beneficiary_customer": "seller@example.com", "due_date": "2024-06-01T00:00:00Z"},
			body{"amount": "0.01", "payer_customer": "me", "beneficiary_customer": "seller@example.com", "due_date": "2024-06-01T00:00:00Z"},
		}
		set(one, "items.0.schedule", entries)
		w.b.must(http.StatusCreated, http.MethodPost, "transaction", one)
		set(one, "items.0.schedule.1.amount", "0.02")
		if got := w.b.must(http.StatusUnprocessableEntity, http.MethodPost, "transaction", one).errorPaths(); !slices.Equal(got, []string{"items.0.schedule.all"}) {
			t.Errorf("a schedule over the maximum: errors at %v", got)
		}
	})
	t.Run("empty fees list", func(t *testing.T) {
		r := w.b.must(http.StatusCreated, http.MethodPost, "transaction", set(merchandise(), "items.0.fees", []any{}))
		want := []any{map[string]any{"type": "escrow", "payer_customer": "buyer@example.com", "split": "1.0", "amount": "32.50", "amount_without_taxes": "32.50"}}
		if got := r.list("items.0.fees"); !jsonEqual(got, want) {
			t.Errorf("fees %v, want the default: the buyer pays the escrow fee", got)
		}
	})
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

// A customer who is neither a party nor an approved partner creates a transaction
// between a buyer and a seller, and is made its partner party, as the spec says.
func TestCreatorNeitherPartyNorPartnerBecomesThePartner(t *testing.T) {
	w := newWorld(t)
	b := merchandise()
	set(b, "parties.0.customer", "buyer@example.com")
	set(b, "items.0.schedule.0.payer_customer", "buyer@example.com")
	r := w.x.must(http.StatusCreated, http.MethodPost, "transaction", b)
	parties := r.list("parties")
	last := parties[len(parties)-1]
	if get(last, "role") != "partner" || get(last, "customer") != "stranger@example.com" || get(last, "agreed") != true {
		t.Errorf("the creator is not the partner party: %s", r.raw)
	}
	if r.get("parties.0.agreed") != false || r.get("parties.1.agreed") != false {
		t.Errorf("buyer and seller must agree themselves: %s", r.raw)
	}
	id := r.id("id")
	w.x.must(http.StatusOK, http.MethodGet, txPath(id), nil)
	w.b.act(http.StatusOK, id, 0, action("agree"))
	w.s.act(http.StatusOK, id, 0, action("agree"))
	// Not approved, it has none of a partner's powers: no As-Customer, no partner fee, no
	// partner listings.
	w.x.asCustomer("buyer@example.com").must(http.StatusForbidden, http.MethodGet, txPath(id, "payment_methods"), nil)
	fee := clone(b)
	fee["items"] = append(fee["items"].([]any), body{"type": "partner_fee", "schedule": []any{body{"amount": 10.0, "payer_customer": "buyer@example.com", "beneficiary_customer": "stranger@example.com"}}})
	w.x.must(http.StatusUnprocessableEntity, http.MethodPost, "transaction", fee)
	w.x.must(http.StatusForbidden, http.MethodGet, "partner/transactions", nil)
}

// A sale too small to pay its escrow fee is refused at creation, as the live API refused
// a 15.00 sale; the minimum is 25.00 unless WithMinimumEscrowFee says otherwise.
func TestMinimumEscrowFeeAtCreation(t *testing.T) {
	for _, c := range []struct {
		name    string
		opts    []Option
		amount  float64
		status  int
		minimum string
	}{
		{"the live API's refusal", nil, 15, http.StatusUnprocessableEntity, "25.00"},
		{"a cent short", nil, 24.99, http.StatusUnprocessableEntity, "25.00"},
		{"the minimum", nil, 25, http.StatusCreated, ""},
		{"a small sale", nil, 40, http.StatusCreated, ""},
		{"the client's figure", []Option{WithMinimumEscrowFee("50.00")}, 49.99, http.StatusUnprocessableEntity, "50.00"},
		{"above the client's figure", []Option{WithMinimumEscrowFee("50.00")}, 50, http.StatusCreated, ""},
		// Without a minimum the fee itself still binds: 3.25 % of 0.10 rounds to 0.00.
		{"no minimum", []Option{WithMinimumEscrowFee("0")}, 0.10, http.StatusCreated, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := newWorld(t, c.opts...)
			r := w.b.do(http.MethodPost, "transaction", set(merchandise(), "items.0.schedule.0.amount", c.amount))
			if r.status != c.status {
				t.Fatalf("a %.2f sale: %d, want %d\n%s", c.amount, r.status, c.status, r.raw)
			}
			if c.status != http.StatusUnprocessableEntity {
				return
			}
			msgs, _ := r.get("errors.items.all").([]any)
			want := fmt.Sprintf("The amount paid by the buyer must be at least the amount of the escrow fee: the buyer pays %.2f, the escrow fee is %s", c.amount, c.minimum)
			if len(msgs) != 1 || msgs[0] != want || len(r.errorPaths()) != 1 {
				t.Errorf("got %s, want %q", r.raw, want)
			}
		})
	}
	// What the buyer pays counts, whatever the item: a 20.00 sale with a 10.00 shipping fee
	// is 30.00 paid by the buyer.
	w := newWorld(t)
	b := set(merchandise(), "items.0.schedule.0.amount", 20)
	b["items"] = append(b["items"].([]any), body{"type": "shipping_fee", "schedule": []any{body{"amount": 10.0, "payer_customer": "me", "beneficiary_customer": "seller@example.com"}}})
	w.b.must(http.StatusCreated, http.MethodPost, "transaction", b)
	// A seller's payment does not count: a 20.00 sale with a 10.00 broker fee the seller pays.
	bf := set(merchandise(), "items.0.schedule.0.amount", 20)
	bf["parties"] = append(bf["parties"].([]any), body{"role": "broker", "customer": "broker@example.com"})
	bf["items"] = append(bf["items"].([]any), body{"type": "broker_fee", "schedule": []any{body{"amount": 10.0, "payer_customer": "seller@example.com", "beneficiary_customer": "broker@example.com"}}})
	w.b.must(http.StatusUnprocessableEntity, http.MethodPost, "transaction", bf)
	defer func() {
		if recover() == nil {
			t.Error("WithMinimumEscrowFee(\"ten\") did not panic")
		}
	}()
	WithMinimumEscrowFee("ten")
}

// Categories are checked per item type: business_and_internet, which the docs list, is
// refused on a general_merchandise item with the live API's message, and kept for
// milestones and domain names with content.
func TestCategoriesPerItemType(t *testing.T) {
	w := newWorld(t)
	r := w.b.must(http.StatusUnprocessableEntity, http.MethodPost, "transaction", set(merchandise(), "items.0.category", "business_and_internet"))
	if got, _ := r.get("errors.items.0.category").([]any); !slices.Equal(got, []any{"This is not a valid category for a general_merchandise item"}) {
		t.Errorf("business_and_internet on general merchandise: %s", r.raw)
	}
	ms := milestones()
	set(ms, "items.0.category", "business_and_internet")
	w.b.must(http.StatusCreated, http.MethodPost, "transaction", ms)
	d := set(domain(), "items.0.extra_attributes", body{"with_content": true})
	set(d, "items.0.category", "business_and_internet")
	w.s.must(http.StatusCreated, http.MethodPost, "transaction", d)
	r = w.b.must(http.StatusUnprocessableEntity, http.MethodPost, "transaction", set(merchandise(), "items.0.category", "boats"))
	if got, _ := r.get("errors.items.0.category").([]any); !slices.Equal(got, []any{"This is not a valid category for a general_merchandise item"}) {
		t.Errorf("a motor vehicle category on general merchandise: %s", r.raw)
	}
}

// TestEachFeeTypeHasItsPayer: a deposit fee is the buyer's and a disbursement fee the
// seller's, each type on its own: the other party named as payer is refused at that fee's
// payer_customer, and the right one is accepted.
func TestEachFeeTypeHasItsPayer(t *testing.T) {
	w := newWorld(t)
	for fee, payer := range map[string]string{
		"paypal_deposit": "me", "creditcard_deposit": "me",
		"cheque_disbursement": "seller@example.com", "wire_disbursement": "seller@example.com",
	} {
		other := map[string]string{"me": "seller@example.com", "seller@example.com": "me"}[payer]
		with := func(who string) body {
			return set(merchandise(), "items.0.fees", []any{
				body{"type": "escrow", "payer_customer": "me", "split": 1},
				body{"type": fee, "payer_customer": who},
			})
		}
		w.b.must(http.StatusCreated, http.MethodPost, "transaction", with(payer))
		r := w.b.must(http.StatusUnprocessableEntity, http.MethodPost, "transaction", with(other))
		if got := r.errorPaths(); !slices.Equal(got, []string{"items.0.fees.1.payer_customer"}) {
			t.Errorf("%s paid by %s: errors at %v, want at items.0.fees.1.payer_customer", fee, other, got)
		}
	}
}

// TestMotorVehicleYearEdges: a motor vehicle's year runs from 1886, the first car, to 2100;
// a year either side is refused at its own path.
func TestMotorVehicleYearEdges(t *testing.T) {
	w := newWorld(t)
	vehicle := func(year int) body {
		b := set(merchandise(), "items.0.type", "motor_vehicle")
		set(b, "items.0.category", nil)
		return set(b, "items.0.extra_attributes", body{"year": year})
	}
	for _, year := range []int{1886, 2100} {
		w.b.must(http.StatusCreated, http.MethodPost, "transaction", vehicle(year))
	}
	for _, year := range []int{1885, 2101} {
		r := w.b.must(http.StatusUnprocessableEntity, http.MethodPost, "transaction", vehicle(year))
		if got := r.errorPaths(); !slices.Equal(got, []string{"items.0.extra_attributes.year"}) {
			t.Errorf("year %d: errors at %v, want at items.0.extra_attributes.year", year, got)
		}
	}
}

// specCategories are the spec's categories (part 2, "Categories"), written out here rather
// than read from the emulator's tables, which they check.
var specCategories = strings.Fields(`adult_material alcohol_and_wine antiques appliances
	arts_and_crafts automobiles_cars_and_trucks automotive_or_industrial_parts beauty_and_health
	books_and_magazines business_and_internet cigarettes_and_tobacco clothing_and_accessories
	collectibles computer_hardware_and_software cosmetics cryptocurrency financial_instruments
	fine_art furniture fx_and_currency gambling_and_casino_games heavy_equipment_and_machinery
	home_and_garden jewellery_and_watches movies_and_music other_merchandise phamacuticals
	social_media_accounts sports_and_recreation tickets_and_events tools_and_hardware
	toys_and_hobbies video_games_and_consoles weapons_and_firearms`)

// TestEveryListedCategoryAccepted: each category the spec lists for an item type is
// accepted on it and read back, so a client sending any of them is not refused: one
// transaction per type, with an item in each category (general_merchandise less
// business_and_internet, which the live API refuses there).
func TestEveryListedCategoryAccepted(t *testing.T) {
	general := slices.DeleteFunc(slices.Clone(specCategories), func(c string) bool { return c == "business_and_internet" })
	vehicles := []string{"automobiles_cars_and_trucks", "boats", "motorcycles", "airplanes", "other_motor_vehicles"}
	for _, tc := range []struct {
		typ        string
		as         string
		categories []string
		item       func() body
	}{
		{"general_merchandise", "buyer", general, func() body { return clone(get(merchandise(), "items.0").(map[string]any)) }},
		{"milestone", "buyer", specCategories, func() body { return milestoneItem("Part", 100) }},
		{"domain_name", "seller", specCategories, func() body {
			return set(clone(get(domain(), "items.0").(map[string]any)), "extra_attributes", body{"with_content": true})
		}},
		{"motor_vehicle", "buyer", vehicles, func() body {
			return set(set(clone(get(merchandise(), "items.0").(map[string]any)), "type", "motor_vehicle"), "extra_attributes", body{"year": 1999})
		}},
	} {
		t.Run(tc.typ, func(t *testing.T) {
			w := newWorld(t)
			b := merchandise()
			if tc.typ == "domain_name" {
				b = domain()
			}
			var items []any
			for _, c := range tc.categories {
				items = append(items, set(tc.item(), "category", c))
			}
			b["items"] = items
			c := map[string]*client{"buyer": w.b, "seller": w.s}[tc.as]
			r := c.do(http.MethodPost, "transaction", b)
			if r.status != http.StatusCreated {
				var refused []string
				for _, p := range r.errorPaths() {
					var i int
					if _, err := fmt.Sscanf(p, "items.%d.category", &i); err == nil {
						refused = append(refused, tc.categories[i])
					}
				}
				t.Fatalf("%d, refusing the categories %v\n%s", r.status, refused, r.raw)
			}
			for i, c := range tc.categories {
				if got := r.str(fmt.Sprintf("items.%d.category", i)); got != c {
					t.Errorf("item %d: category %q, want %q", i, got, c)
				}
			}
		})
	}
}

// TestInspectionPeriodAndQuantityEdges: an inspection period is whole days in seconds, from
// one day to 365 (the package comment's figures, written out), and a quantity runs from 1 to
// 1,000,000; a value either side, or a part of a day, is refused at its own path.
func TestInspectionPeriodAndQuantityEdges(t *testing.T) {
	w := newWorld(t)
	for _, tc := range []struct {
		field string
		value any
		ok    bool
	}{
		{"inspection_period", 86400, true},
		{"inspection_period", 365 * 86400, true},
		{"inspection_period", 43200, false},       // half a day
		{"inspection_period", 129600, false},      // a day and a half
		{"inspection_period", 366 * 86400, false}, // a day past the longest
		{"quantity", 1, true},
		{"quantity", 1_000_000, true},
		{"quantity", 1_000_001, false},
	} {
		r := w.b.do(http.MethodPost, "transaction", set(merchandise(), "items.0."+tc.field, tc.value))
		switch {
		case tc.ok && r.status != http.StatusCreated:
			t.Errorf("%s %v: %d, want it accepted\n%s", tc.field, tc.value, r.status, r.raw)
		case tc.ok && r.get("items.0."+tc.field) != float64(tc.value.(int)):
			t.Errorf("%s %v read back as %v", tc.field, tc.value, r.get("items.0."+tc.field))
		case !tc.ok && !slices.Equal(r.errorPaths(), []string{"items.0." + tc.field}):
			t.Errorf("%s %v: %d, errors at %v, want refused at items.0.%s", tc.field, tc.value, r.status, r.errorPaths(), tc.field)
		}
	}
}

// TestMotorVehicleAttributesReadBack: every extra attribute the spec gives a motor vehicle
// is kept and read back, and each is refused on another item type at its own path, not
// dropped unseen.
func TestMotorVehicleAttributesReadBack(t *testing.T) {
	w := newWorld(t)
	attrs := body{"vin": "YS3DD78N4X7055320", "odometer": "120000 km", "year": 1999, "make": "Saab", "model": "9-3",
		"title_collection": true, "lien_holder_payoff": true}
	b := set(set(merchandise(), "items.0.type", "motor_vehicle"), "items.0.category", "automobiles_cars_and_trucks")
	r := w.b.must(http.StatusCreated, http.MethodPost, "transaction", set(b, "items.0.extra_attributes", attrs))
	for key, v := range attrs {
		want := v
		if n, ok := v.(int); ok {
			want = float64(n)
		}
		if got := r.get("items.0.extra_attributes." + key); got != want {
			t.Errorf("%s read back as %v, want %v", key, got, want)
		}
	}
	for key, v := range attrs {
		r := w.b.must(http.StatusUnprocessableEntity, http.MethodPost, "transaction", set(merchandise(), "items.0.extra_attributes", body{key: v}))
		if got := r.errorPaths(); !slices.Equal(got, []string{"items.0.extra_attributes." + key}) {
			t.Errorf("%s on general merchandise: errors at %v", key, got)
		}
	}
}

// TestBrokerFeeCreationShape: a broker_fee item carries only type, visibility and schedule
// (spec part 2); each other field of an item is refused on it at its own path, not taken.
func TestBrokerFeeCreationShape(t *testing.T) {
	w := newWorld(t)
	for field, v := range map[string]any{
		"title": "Commission", "description": "For the introduction", "category": "collectibles",
		"inspection_period": 86400, "quantity": 1, "extra_attributes": body{"concierge": false},
		"fees": []any{body{"type": "escrow", "payer_customer": "buyer@example.com"}},
	} {
		r := w.k.must(http.StatusUnprocessableEntity, http.MethodPost, "transaction", set(brokered(), "items.1."+field, v))
		if got := r.errorPaths(); !slices.Equal(got, []string{"items.1." + field}) {
			t.Errorf("%s on a broker_fee item: errors at %v", field, got)
		}
	}
}

// TestBlankValuesRefused: a required field sent as "" (or blanks) is refused at its own
// path, once, as empty: a blank currency, beneficiary or fee payer was taken for a value
// and the transaction created, and a blank role, customer or type was refused only
// through what its absence broke elsewhere.
func TestBlankValuesRefused(t *testing.T) {
	w := newWorld(t)
	for _, tc := range []struct {
		field, path string
		body        body
	}{
		{"currency", "currency", set(merchandise(), "currency", "")},
		{"description", "description", set(merchandise(), "description", " ")},
		{"party role", "parties.1", set(merchandise(), "parties.1.role", "")},
		{"party customer", "parties.1", set(merchandise(), "parties.1.customer", "")},
		{"item type", "items.0.type", set(merchandise(), "items.0.type", "")},
		{"payer", "items.0.schedule.0.payer_customer", set(merchandise(), "items.0.schedule.0.payer_customer", "")},
		{"beneficiary", "items.0.schedule.0.beneficiary_customer", set(merchandise(), "items.0.schedule.0.beneficiary_customer", "")},
		{"fee payer", "items.0.fees.0.payer_customer", set(merchandise(), "items.0.fees", []any{body{"type": "escrow", "payer_customer": ""}})},
		{"fee type", "items.0.fees.0.type", set(merchandise(), "items.0.fees", []any{body{"type": "", "payer_customer": "me"}})},
		{"due date", "items.0.schedule.0.due_date", set(milestones(), "items.0.schedule.0.due_date", "")},
	} {
		t.Run(tc.field, func(t *testing.T) {
			r := w.b.do(http.MethodPost, "transaction", tc.body)
			if r.status != http.StatusUnprocessableEntity {
				t.Fatalf("%s blank: %d, want 422\n%s", tc.field, r.status, r.raw)
			}
			got := messages(r, tc.path)
			if len(got) != 1 || !strings.Contains(got[0], "must not be empty") {
				t.Errorf("%s blank: at %s %q, want one message that it must not be empty (all errors: %v)", tc.field, tc.path, got, r.errorPaths())
			}
		})
	}
}

// TestScheduleEntriesKeepTheirOrder: an item's schedule reads back in the order it was
// given, each entry with its own amount and due date.
func TestScheduleEntriesKeepTheirOrder(t *testing.T) {
	w := newWorld(t)
	b := set(domain(), "items.0.type", "domain_name_holding")
	set(b, "items.0.schedule", []any{
		body{"amount": "600.00", "payer_customer": "buyer@example.com", "beneficiary_customer": "me", "due_date": "2024-06-01T00:00:00Z"},
		body{"amount": "400.00", "payer_customer": "buyer@example.com", "beneficiary_customer": "me", "due_date": "2024-07-01T00:00:00Z"},
	})
	r := w.s.must(http.StatusCreated, http.MethodPost, "transaction", b)
	var got []string
	for _, s := range r.list("items.0.schedule") {
		got = append(got, s.(map[string]any)["amount"].(string)+" "+s.(map[string]any)["due_date"].(string)[:10])
	}
	if want := []string{"600.00 2024-06-01", "400.00 2024-07-01"}; !slices.Equal(got, want) {
		t.Errorf("schedule read back as %v, want %v", got, want)
	}
}
