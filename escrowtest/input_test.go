package escrowtest

import (
	"net/http"
	"strconv"
	"strings"
	"testing"
)

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
