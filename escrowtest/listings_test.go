package escrowtest

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"
)

// partnerWorld is a world whose partner created five transactions, one per day from
// testStart: amounts 100, 200, …, 500; the third between the buyer and another seller;
// the first complete and the second cancelled.
func partnerWorld(t *testing.T) (*world, []int64) {
	w := newWorld(t)
	var ids []int64
	for i := range 5 {
		b := set(partnered(), "items.0.schedule.0.amount", 100*(i+1))
		if i == 2 {
			b = withSeller(b, "other-seller@example.com")
		}
		ids = append(ids, w.p.create(b))
		w.srv.Advance(24 * time.Hour)
	}
	w.b.create(merchandise()) // not the partner's
	for _, s := range []step{func(w *world, id int64) { w.b.act(http.StatusOK, id, 0, action("agree")) }, sellerAgrees, payment, ships, receives, accepts} {
		s(w, ids[0])
	}
	w.s.must(http.StatusOK, http.MethodPost, txPath(ids[0], "disbursement_methods"), ach())
	w.p.act(http.StatusOK, ids[1], 0, action("cancel"))
	return w, ids
}

func idsOf(r reply, key string) []int64 {
	var out []int64
	for _, x := range r.list(key) {
		out = append(out, int64(x.(map[string]any)["id"].(float64)))
	}
	return out
}

func TestPartnerTransactionFilters(t *testing.T) {
	w, ids := partnerWorld(t)
	other := w.srv.AddCustomer("other-seller@example.com").ID
	rev := slices.Clone(ids)
	slices.Reverse(rev)
	tests := []struct {
		query string
		want  []int64
	}{
		{"", rev},
		{"?sort_by=id&sort_direction=asc", ids},
		{"?status=completed", ids[:1]},
		{"?status=ongoing", []int64{ids[4], ids[3], ids[2]}},
		{fmt.Sprintf("?ids=%d&ids=%d", ids[1], ids[3]), []int64{ids[3], ids[1]}},
		{fmt.Sprintf("?ids=%d,%d", ids[1], ids[3]), []int64{ids[3], ids[1]}},
		{fmt.Sprintf("?customer_ids=%d", other), ids[2:3]},
		{fmt.Sprintf("?customer_ids=%d,%d", other, w.seller.ID), rev},
		{"?min_amount=300", []int64{ids[4], ids[3], ids[2]}},
		{"?max_amount=200.00", []int64{ids[1], ids[0]}},
		{"?min_amount=200&max_amount=400", []int64{ids[3], ids[2], ids[1]}},
		{"?initiation_start_date=2024-05-02T12:00:00Z", []int64{ids[4], ids[3], ids[2], ids[1]}},
		{"?initiation_end_date=2024-05-02T12:00:00%2B00:00", []int64{ids[1], ids[0]}},
		{"?initiation_start_date=2024-05-03&initiation_end_date=2024-05-04", []int64{ids[2]}},
	}
	for _, tc := range tests {
		r := w.p.must(http.StatusOK, http.MethodGet, "partner/transactions"+tc.query, nil)
		if got := idsOf(r, "transactions"); !slices.Equal(got, tc.want) {
			t.Errorf("%q: %v, want %v", tc.query, got, tc.want)
		}
		if r.get("next_cursor") != nil || r.get("limit") != nil || r.str("sort_by") != "id" {
			t.Errorf("%q: %s", tc.query, r.raw)
		}
	}
	for query, path := range map[string]string{
		"?limit=0": "limit", "?next_cursor=x": "next_cursor", "?sort_by=amount": "sort_by",
		"?sort_direction=sideways": "sort_direction", "?status=open": "status", "?ids=1,a": "ids",
		"?customer_ids=%20": "customer_ids", "?min_amount=-1": "min_amount", "?max_amount=1.001": "max_amount",
		"?initiation_start_date=yesterday": "initiation_start_date", "?initiation_end_date=5": "initiation_end_date",
	} {
		r := w.p.must(http.StatusUnprocessableEntity, http.MethodGet, "partner/transactions"+query, nil)
		if got := r.errorPaths(); !slices.Equal(got, []string{path}) {
			t.Errorf("%s: %v", query, got)
		}
	}
	w.b.must(http.StatusForbidden, http.MethodGet, "partner/transactions", nil)
	// The partner's view of a transaction is the partner's.
	r := w.p.must(http.StatusOK, http.MethodGet, fmt.Sprintf("partner/transactions?ids=%d", ids[0]), nil)
	if r.str("transactions.0.parties.2.customer") != "partner@example.com" || r.get("transactions.0.items.0.schedule.0.status.disbursed_to_beneficiary") != true || r.str("transactions.0.items.0.fees.0.split") != "1.0" {
		t.Errorf("listed transaction: %s", r.raw)
	}
}

func TestPartnerCursor(t *testing.T) {
	w, ids := partnerWorld(t)
	// Walk both directions two at a time.
	for _, dir := range []string{"desc", "asc"} {
		var seen []int64
		cursor := ""
		for range 10 {
			r := w.p.must(http.StatusOK, http.MethodGet, "partner/transactions?limit=2&sort_direction="+dir+cursor, nil)
			if r.id("limit") != 2 || r.str("sort_direction") != dir {
				t.Errorf("echo: %s", r.raw)
			}
			seen = append(seen, idsOf(r, "transactions")...)
			if r.get("next_cursor") == nil {
				break
			}
			cursor = fmt.Sprintf("&next_cursor=%d", r.id("next_cursor"))
		}
		want := slices.Clone(ids)
		if dir == "desc" {
			slices.Reverse(want)
		}
		if !slices.Equal(seen, want) {
			t.Errorf("%s walk: %v, want %v", dir, seen, want)
		}
	}
	// A cursor between ids starts at the next record in the sort order.
	r := w.p.must(http.StatusOK, http.MethodGet, fmt.Sprintf("partner/transactions?next_cursor=%d", ids[4]+1000), nil)
	if len(r.list("transactions")) != 5 {
		t.Errorf("cursor above every id: %s", r.raw)
	}
	r = w.p.must(http.StatusOK, http.MethodGet, fmt.Sprintf("partner/transactions?sort_direction=asc&next_cursor=%d", ids[4]+1), nil)
	if len(r.list("transactions")) != 0 || r.get("next_cursor") != nil {
		t.Errorf("cursor past the end: %s", r.raw)
	}
	// The last page holds exactly limit records: next_cursor is null.
	r = w.p.must(http.StatusOK, http.MethodGet, "partner/transactions?limit=5", nil)
	if len(r.list("transactions")) != 5 || r.get("next_cursor") != nil {
		t.Errorf("exact last page: %s", r.raw)
	}
}

func TestPartnerCustomers(t *testing.T) {
	w, _ := partnerWorld(t)
	w.p.must(http.StatusOK, http.MethodPost, "customer", body{"email": "created@example.com", "address": body{"country": "GB"}})
	must(t, w.srv.VerifyCustomer("seller@example.com", true))
	must(t, w.srv.VerifyCustomer("buyer@example.com", false))
	other := w.srv.AddCustomer("other-seller@example.com").ID
	created := w.srv.AddCustomer("created@example.com").ID
	tests := []struct {
		query string
		want  []int64
	}{
		// other-seller's account was created by the partner's transaction: the partner's.
		{"", []int64{created, other, w.seller.ID, w.buyer.ID}},
		{"?sort_direction=asc&limit=2", []int64{w.buyer.ID, w.seller.ID}},
		{fmt.Sprintf("?ids=%d,%d", w.buyer.ID, w.broker.ID), []int64{w.buyer.ID}},
		{"?country=gb", []int64{created}},
		{"?country=US", []int64{other, w.seller.ID, w.buyer.ID}},
		{"?verification_status=verified", []int64{w.seller.ID, w.buyer.ID}},
		{"?verification_status=not_verified", []int64{created, other}},
		{"?verification_status=company_verified", []int64{w.seller.ID}},
	}
	for _, tc := range tests {
		r := w.p.must(http.StatusOK, http.MethodGet, "partner/customers"+tc.query, nil)
		if got := idsOf(r, "customers"); !slices.Equal(got, tc.want) {
			t.Errorf("%q: %v, want %v", tc.query, got, tc.want)
		}
	}
	r := w.p.must(http.StatusOK, http.MethodGet, "partner/customers?limit=3&sort_direction=asc", nil)
	if r.id("next_cursor") != created || r.get("customers.0.webhooks") != nil {
		t.Errorf("page: %s", r.raw)
	}
	w.p.must(http.StatusUnprocessableEntity, http.MethodGet, "partner/customers?verification_status=maybe", nil)
	w.s.must(http.StatusForbidden, http.MethodGet, "partner/customers", nil)
}

func TestPartnerCustomerLookup(t *testing.T) {
	w, ids := partnerWorld(t)
	tx := w.p.must(http.StatusOK, http.MethodGet, txPath(ids[0]), nil)
	sellerParty := tx.id("parties.1.id")
	tests := []struct {
		query string
		want  int
		email string
	}{
		{fmt.Sprintf("?party_id=%d", sellerParty), http.StatusOK, "seller@example.com"},
		{fmt.Sprintf("?customer_id=%d", w.buyer.ID), http.StatusOK, "buyer@example.com"},
		{fmt.Sprintf("?party_id=%d&customer_id=%d", sellerParty, w.seller.ID), http.StatusOK, "seller@example.com"},
		{fmt.Sprintf("?party_id=%d&customer_id=%d", sellerParty, w.buyer.ID), http.StatusNotFound, ""},
		{fmt.Sprintf("?customer_id=%d", w.stranger.ID), http.StatusNotFound, ""},
		{"?party_id=1", http.StatusNotFound, ""},
		{"", http.StatusUnprocessableEntity, ""},
		{"?party_id=x", http.StatusUnprocessableEntity, ""},
	}
	for _, tc := range tests {
		r := w.p.must(tc.want, http.MethodGet, "partner/customer"+tc.query, nil)
		if tc.email != "" && r.str("email") != tc.email {
			t.Errorf("%q: %s", tc.query, r.raw)
		}
	}
	// A party of someone else's transaction is not the partner's.
	mine := w.b.create(merchandise())
	party := w.b.must(http.StatusOK, http.MethodGet, txPath(mine), nil).id("parties.1.id")
	w.p.must(http.StatusNotFound, http.MethodGet, fmt.Sprintf("partner/customer?party_id=%d", party), nil)
	w.b.must(http.StatusForbidden, http.MethodGet, "partner/customer?party_id=1", nil)
}

func TestStatistics(t *testing.T) {
	w, _ := partnerWorld(t) // transactions on May 1 to 5, customers created on May 1
	r := w.p.must(http.StatusOK, http.MethodGet, "partner/statistics/transactions/count?start_date=2024-04-30&end_date=2024-05-03T23:59:59Z", nil)
	want := []any{
		map[string]any{"value": 0.0, "label": "2024-04-30/2024-05-01"},
		map[string]any{"value": 1.0, "label": "2024-05-01/2024-05-02"},
		map[string]any{"value": 1.0, "label": "2024-05-02/2024-05-03"},
		map[string]any{"value": 1.0, "label": "2024-05-03/2024-05-04"},
	}
	if !jsonEqual(r.get("time_data"), want) || r.id("aggregates.total") != 3 || r.str("queries.interval") != "day" || r.str("queries.start_date") != "2024-04-30T00:00:00.000000+00:00" {
		t.Errorf("daily: %s", r.raw)
	}
	r = w.p.must(http.StatusOK, http.MethodGet, "partner/statistics/transactions/count?start_date=2024-04-01&end_date=2024-05-31&interval=month", nil)
	if got := r.get("time_data"); !jsonEqual(got, []any{map[string]any{"value": 0.0, "label": "2024-04-01/2024-05-01"}, map[string]any{"value": 5.0, "label": "2024-05-01/2024-06-01"}}) {
		t.Errorf("monthly: %s", r.raw)
	}
	// By default the 30 days up to now (May 6, 12:00), daily.
	r = w.p.must(http.StatusOK, http.MethodGet, "partner/statistics/customers/count", nil)
	if n := len(r.list("time_data")); n != 31 || r.id("aggregates.total") != 3 {
		t.Errorf("default customers: %d buckets, %s", n, r.get("aggregates"))
	}
	r = w.p.must(http.StatusOK, http.MethodGet, "partner/statistics/customers/count?interval=week&start_date=2024-04-29", nil)
	if r.str("time_data.0.label") != "2024-04-29/2024-05-06" || r.id("time_data.0.value") != 3 {
		t.Errorf("weekly: %s", r.raw)
	}
	for query, path := range map[string]string{
		"?interval=year": "interval", "?start_date=2024-06-01&end_date=2024-05-01": "start_date",
		"?start_date=1900-01-01": "interval", "?end_date=soon": "end_date",
	} {
		r := w.p.must(http.StatusUnprocessableEntity, http.MethodGet, "partner/statistics/transactions/count"+query, nil)
		if got := r.errorPaths(); !slices.Equal(got, []string{path}) {
			t.Errorf("%s: %v", query, got)
		}
	}
	w.b.must(http.StatusForbidden, http.MethodGet, "partner/statistics/transactions/count", nil)
}

func TestPaymentsInAndOut(t *testing.T) {
	w := newWorld(t)
	id := w.p.create(partnered())
	w.b.act(http.StatusOK, id, 0, action("agree"))
	sellerAgrees(w, id)
	w.b.must(http.StatusOK, http.MethodPost, txPath(id, "payment_methods", "credit_card"), nil)
	payment(w, id)
	for _, s := range []step{ships, receives, rejects, shipsBack, receivesBack, acceptsReturn} {
		s(w, id)
	}
	in := w.p.must(http.StatusOK, http.MethodGet, fmt.Sprintf("partner/customer/%d/payments_in", w.buyer.ID), nil)
	want := map[string]any{"last_four": fmt.Sprintf("%04d", w.buyer.ID%10000), "expiration_month": 12.0, "expiration_year": 2027.0,
		"brand": "visa", "customer_id": float64(w.buyer.ID), "transaction_id": float64(id), "amount": "1032.50", "date": "2024-05-01T12:00:00.000000+00:00"}
	if !jsonEqual(in.get("payments.0"), want) || len(in.list("payments")) != 1 {
		t.Errorf("payments in: %s", in.raw)
	}
	out := w.p.must(http.StatusOK, http.MethodGet, fmt.Sprintf("partner/customer/%d/payments_out", w.buyer.ID), nil)
	// A full return gives back everything the buyer paid in, escrow fee included.
	if len(out.list("payments")) != 1 || out.str("payments.0.amount") != "1032.50" {
		t.Errorf("payments out: %s", out.raw)
	}
	if r := w.p.must(http.StatusOK, http.MethodGet, fmt.Sprintf("partner/customer/%d/payments_in", w.seller.ID), nil); len(r.list("payments")) != 0 {
		t.Errorf("seller's payments: %s", r.raw)
	}
	w.p.must(http.StatusNotFound, http.MethodGet, fmt.Sprintf("partner/customer/%d/payments_in", w.stranger.ID), nil)
	w.p.must(http.StatusNotFound, http.MethodGet, "partner/customer/me/payments_in", nil)
	w.b.must(http.StatusForbidden, http.MethodGet, fmt.Sprintf("partner/customer/%d/payments_out", w.buyer.ID), nil)
}

func TestReports(t *testing.T) {
	w, ids := partnerWorld(t)
	r := w.p.must(http.StatusOK, http.MethodPost, "partner/reports", body{"status": "ongoing", "min_amount": 300, "limit": 2, "ids": []any{ids[2], ids[3], ids[4]}})
	task := r.str("task_id")
	if len(task) < len("report_")+20 || !slices.Equal(idsOf(r, "transactions"), []int64{ids[4], ids[3]}) || r.id("next_cursor") != ids[2] {
		t.Errorf("created: %s", r.raw)
	}
	second := w.p.must(http.StatusOK, http.MethodPost, "partner/reports", nil).str("task_id")
	if second == task {
		t.Errorf("task ids repeat: %s", task)
	}
	r = w.p.must(http.StatusOK, http.MethodGet, "partner/reports", nil)
	if len(r.list("reports")) != 2 || r.str("reports.0.status") != "completed" || r.str("reports.1.task_id") != second || r.str("reports.0.created_at") == "" {
		t.Errorf("listed: %s", r.raw)
	}
	if r := w.p.must(http.StatusOK, http.MethodGet, "partner/reports/count", nil); r.id("count") != 2 {
		t.Errorf("count: %s", r.raw)
	}
	host := strings.TrimSuffix(w.srv.URL, "/2017-09-01/")
	r = w.p.must(http.StatusOK, http.MethodGet, "partner/reports/"+task+"/download?as_json=true", nil)
	if r.str("url") != host+"/_emulator/reports/"+task+".csv" {
		t.Errorf("as_json: %s", r.raw)
	}
	redirect := w.p.do(http.MethodGet, "partner/reports/"+task+"/download", nil) // the client follows the redirect
	lines := strings.Split(strings.TrimSpace(string(redirect.raw)), "\n")
	if redirect.status != http.StatusOK || len(lines) != 4 || !strings.HasPrefix(lines[0], "id,reference,") || !strings.HasPrefix(lines[1], fmt.Sprint(ids[2])) {
		t.Errorf("download: %d %s", redirect.status, redirect.raw)
	}
	noRedirect := *w.srv.Client()
	noRedirect.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	req, _ := http.NewRequest(http.MethodGet, w.srv.URL+"partner/reports/"+task+"/download", nil)
	req.SetBasicAuth(w.partner.Email, w.partner.APIKey)
	resp, err := noRedirect.Do(req)
	must(t, err)
	resp.Body.Close()
	if resp.StatusCode != http.StatusFound || resp.Header.Get("Location") != host+"/_emulator/reports/"+task+".csv" {
		t.Errorf("redirect: %d %v", resp.StatusCode, resp.Header)
	}
	w.p.must(http.StatusNotFound, http.MethodGet, "partner/reports/report_9/download", nil)
	w.p.must(http.StatusUnprocessableEntity, http.MethodGet, "partner/reports/"+task+"/download?as_json=perhaps", nil)
	for raw, path := range map[string]string{`{"status": "open"}`: "status", `{"ids": [[1]]}`: "ids", `{"min_amount": {}}`: "min_amount"} {
		if got := w.p.must(http.StatusUnprocessableEntity, http.MethodPost, "partner/reports", raw).errorPaths(); !slices.Equal(got, []string{path}) {
			t.Errorf("%s: %v", raw, got)
		}
	}
	w.b.must(http.StatusForbidden, http.MethodGet, "partner/reports", nil)
	w.b.must(http.StatusForbidden, http.MethodGet, "partner/reports/"+task+"/download", nil)
	// The file itself needs the partner's credentials: none is 401, another customer's 404.
	anonymous(t, w.srv).must(http.StatusUnauthorized, http.MethodGet, "/_emulator/reports/"+task+".csv", nil)
	w.b.must(http.StatusNotFound, http.MethodGet, "/_emulator/reports/"+task+".csv", nil)
	other := as(t, w.srv, w.srv.AddPartner("other-partner@example.com"))
	other.must(http.StatusNotFound, http.MethodGet, "/_emulator/reports/"+task+".csv", nil)
	other.must(http.StatusNotFound, http.MethodGet, "partner/reports/"+task+"/download", nil)
	if got := w.p.must(http.StatusOK, http.MethodGet, "/_emulator/reports/"+task+".csv", nil); !strings.HasPrefix(string(got.raw), "id,reference,") {
		t.Errorf("the partner's own download: %s", got.raw)
	}
}
