package escrow

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/jarcoal/httpmock"
)

const downloadPath = testBase + "partner/reports/rpt_9f2c/download"

func TestDownloadReportRedirectIsReturnedNotFollowed(t *testing.T) {
	for _, tt := range []struct {
		name     string
		status   int
		location string
		want     string
	}{
		{"302 to another host", http.StatusFound, "https://reports.escrow-files.example/rpt_9f2c.csv?signature=8c1e",
			"https://reports.escrow-files.example/rpt_9f2c.csv?signature=8c1e"},
		{"303 to another host over plain http", http.StatusSeeOther, "http://files.example/r.csv", "http://files.example/r.csv"},
		{"307 relative, same host", http.StatusTemporaryRedirect, "/files/rpt_9f2c.csv", "https://api.test/files/rpt_9f2c.csv"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c, mt := setup(t)
			var rec recorder
			mt.RegisterResponder("GET", downloadPath, rec.then(respond(tt.status, ``, "Location", tt.location)))
			// Anything sent to the redirect's target fails the test through setup's
			// no-responder hook; these make the failure say what happened.
			for _, target := range []string{tt.location, tt.want} {
				mt.RegisterResponder("GET", target, func(req *http.Request) (*http.Response, error) {
					t.Errorf("the redirect was followed to %s (Authorization %q)", req.URL, req.Header.Get("Authorization"))
					return httpmock.NewStringResponse(200, "stolen"), nil
				})
			}
			d, err := c.Partner.DownloadReport(context.Background(), "rpt_9f2c", nil)
			if err != nil {
				t.Fatal(err)
			}
			if d.URL != tt.want || d.Content != nil {
				t.Errorf("download = %+v, want URL %s", d, tt.want)
			}
			if rec.count() != 1 {
				t.Errorf("%d requests to the API", rec.count())
			}
		})
	}
}

func TestDownloadReportAsJSON(t *testing.T) {
	for _, tt := range []struct {
		name, body string
		wantURL    string
	}{
		{"url", `{"url": "https://files.example/a.csv"}`, "https://files.example/a.csv"},
		{"download_url", `{"task_id": "rpt_9f2c", "download_url": "https://files.example/b.csv"}`, "https://files.example/b.csv"},
		{"link", `{"link": "https://files.example/c.csv", "expires_in": 60}`, "https://files.example/c.csv"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c, mt := setup(t)
			var rec recorder
			mt.RegisterResponder("GET", downloadPath, rec.then(respond(200, tt.body)))
			d, err := c.Partner.DownloadReport(context.Background(), "rpt_9f2c", &DownloadReportOptions{AsJSON: true})
			if err != nil {
				t.Fatal(err)
			}
			if d.URL != tt.wantURL || d.Content != nil || d.ContentType != "application/json" {
				t.Errorf("download = %+v", d)
			}
			if q := rec.all()[0].RawQuery; q != "as_json=true" {
				t.Errorf("query = %q", q)
			}
		})
	}
	t.Run("malformed JSON", func(t *testing.T) {
		c, mt := setup(t)
		mt.RegisterResponder("GET", downloadPath, respond(200, `{"url": `))
		_, err := c.Partner.DownloadReport(context.Background(), "rpt_9f2c", &DownloadReportOptions{AsJSON: true})
		if !errors.Is(err, ErrMalformedResponse) {
			t.Errorf("err = %v, want ErrMalformedResponse", err)
		}
	})
}

func TestDownloadReportContentReturnedDirectly(t *testing.T) {
	c, mt := setup(t)
	const csv = "id,amount,status\n48016,3650.50,ongoing\n"
	mt.RegisterResponder("GET", downloadPath, func(req *http.Request) (*http.Response, error) {
		resp := httpmock.NewStringResponse(200, csv)
		resp.Header.Set("Content-Type", "text/csv; charset=utf-8")
		resp.Request = req
		return resp, nil
	})
	d, err := c.Partner.DownloadReport(context.Background(), "rpt_9f2c", nil)
	if err != nil {
		t.Fatal(err)
	}
	if string(d.Content) != csv || d.URL != "" || d.ContentType != "text/csv; charset=utf-8" {
		t.Errorf("download = %+v", d)
	}
}

func TestDownloadReportRefusesAnEmptyTaskID(t *testing.T) {
	c, _ := setup(t) // any request fails the test
	for _, id := range []string{"", "   ", ".."} {
		if _, err := c.Partner.DownloadReport(context.Background(), id, nil); !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("DownloadReport(%q) = %v", id, err)
		}
	}
}

func TestMarkWireSentBodies(t *testing.T) {
	for _, tt := range []struct {
		name, body string
		status     int
		want       string // Raw; "" for none
		txID       int64  // the transaction read from the answer; 0 for none
	}{
		{"empty 200", ``, 200, "", 0},
		{"whitespace 200", " \n", 200, "", 0},
		{"204", ``, 204, "", 0},
		{"JSON", `{"status": "wire_sent", "amount": "3650.50"}`, 200, `{"status": "wire_sent", "amount": "3650.50"}`, 0},
		{"JSON list", `[1, 2]`, 200, `[1, 2]`, 0},
		{"a transaction", `{"id": 48016, "currency": "usd", "parties": [{"role": "buyer", "customer": "me", "agreed": true}], "items": []}`, 200,
			`{"id": 48016, "currency": "usd", "parties": [{"role": "buyer", "customer": "me", "agreed": true}], "items": []}`, 48016},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c, mt := setup(t)
			var rec recorder
			mt.RegisterResponder("POST", testBase+"transaction/48016/payment_methods/wire_transfer", rec.then(respond(tt.status, tt.body)))
			sent, err := c.Transactions.MarkWireSent(context.Background(), 48016)
			if err != nil {
				t.Fatal(err)
			}
			if string(sent.Raw) != tt.want || (tt.want == "" && sent.Raw != nil) {
				t.Errorf("raw = %q, want %q", sent.Raw, tt.want)
			}
			switch {
			case tt.txID == 0 && sent.Transaction != nil:
				t.Errorf("read a transaction from %s", tt.body)
			case tt.txID != 0 && (sent.Transaction == nil || sent.Transaction.ID != tt.txID || !sent.Transaction.AllAgreed()):
				t.Errorf("transaction = %+v, want %d decoded", sent.Transaction, tt.txID)
			}
			if r := rec.all()[0]; len(r.Body) != 0 || r.Header.Get("Content-Type") != "" {
				t.Errorf("sent a body %q", r.Body)
			}
		})
	}
	t.Run("not JSON", func(t *testing.T) {
		c, mt := setup(t)
		mt.RegisterResponder("POST", testBase+"transaction/48016/payment_methods/wire_transfer", respond(200, `OK`))
		if _, err := c.Transactions.MarkWireSent(context.Background(), 48016); !errors.Is(err, ErrMalformedResponse) {
			t.Errorf("err = %v, want ErrMalformedResponse", err)
		}
	})
}

func TestCreditCardsDecodeBareAndWrappedLists(t *testing.T) {
	visa := CreditCard{LastFour: "4242", ExpirationMonth: 12, ExpirationYear: 2027, Brand: "visa", CustomerID: 9}
	mc := CreditCard{LastFour: "5100", ExpirationMonth: 7, ExpirationYear: 2028, Brand: "mastercard", CustomerID: 9}
	for _, tt := range []struct {
		name, body string
		want       []CreditCard
	}{
		{"bare list", `[{"last_four": "4242", "expiration_month": 12, "expiration_year": 2027, "brand": "visa", "customer_id": 9},
			{"last_four": "5100", "expiration_month": 7, "expiration_year": 2028, "brand": "mastercard", "customer_id": 9}]`, []CreditCard{visa, mc}},
		{"wrapped after other members", `{"count": 2, "meta": {"ids": "x"}, "credit_cards": [{"last_four": "4242", "expiration_month": 12, "expiration_year": 2027, "brand": "visa", "customer_id": 9},
			{"last_four": "5100", "expiration_month": 7, "expiration_year": 2028, "brand": "mastercard", "customer_id": 9}]}`, []CreditCard{visa, mc}},
		{"empty bare list", `[]`, []CreditCard{}},
		{"object without a list", `{"count": 0}`, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c, mt := setup(t)
			mt.RegisterResponder("GET", testBase+"partner/customer/9/payments_in", respond(200, tt.body))
			mt.RegisterResponder("GET", testBase+"partner/customer/9/payments_out", respond(200, tt.body))
			in, err := c.Partner.PaymentsIn(context.Background(), 9)
			if err != nil {
				t.Fatal(err)
			}
			out, err := c.Partner.PaymentsOut(context.Background(), 9)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(in.Cards, tt.want) || !reflect.DeepEqual(out.Cards, tt.want) {
				t.Errorf("in = %#v, out = %#v, want %#v", in.Cards, out.Cards, tt.want)
			}
			if string(in.Raw) != tt.body {
				t.Errorf("Raw = %s, want the document as sent", in.Raw)
			}
		})
	}
	t.Run("errors", func(t *testing.T) {
		c, mt := setup(t)
		mt.RegisterResponder("GET", testBase+"partner/customer/9/payments_in", respond(200, `{"cards": [{"last_four": 4242}]}`))
		mt.RegisterResponder("GET", testBase+"partner/customer/9/payments_out", respond(403, `{"error": "not a partner"}`))
		if cards, err := c.Partner.PaymentsIn(context.Background(), 9); !errors.Is(err, ErrMalformedResponse) || cards != nil {
			t.Errorf("a mistyped card: %v, %v", cards, err)
		}
		if cards, err := c.Partner.PaymentsOut(context.Background(), 9); !errors.Is(err, ErrForbidden) || cards != nil {
			t.Errorf("403: %v, %v", cards, err)
		}
	})
}

func TestTimelineDecodesBareAndWrappedLists(t *testing.T) {
	for _, tt := range []struct{ name, body string }{
		{"bare list", `[{"event": "create", "date": "2024-05-06T09:15:02.123456+10:00", "message": "created"},
			{"event": "ship", "date": "2024-05-20T08:00:00", "item_id": 7001}]`},
		{"wrapped", `{"page": 1, "entries": [{"event": "create", "date": "2024-05-06T09:15:02.123456+10:00", "message": "created"},
			{"event": "ship", "date": "2024-05-20T08:00:00", "item_id": 7001}]}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c, mt := setup(t)
			mt.RegisterResponder("GET", testBase+"transaction/48016/timeline-entries", respond(200, tt.body))
			tl, err := c.Transactions.ListTimelineEntries(context.Background(), 48016)
			if err != nil {
				t.Fatal(err)
			}
			if len(tl.Entries) != 2 || tl.Entries[0].Event != "create" || tl.Entries[0].Message != "created" ||
				tl.Entries[1].ItemID != 7001 || tl.Entries[1].Date.Raw() != "2024-05-20T08:00:00" {
				t.Errorf("entries = %+v", tl.Entries)
			}
			at(t, "date", tl.Entries[0].Date, utc(2024, 5, 5, 23, 15, 2, 123456000))
			if string(tl.Raw) != tt.body {
				t.Errorf("Raw = %s", tl.Raw)
			}
		})
	}
	for _, body := range []string{`{"entries": [{"event": 5}]}`, `"timeline"`, `{"entries": `} {
		c, mt := setup(t)
		mt.RegisterResponder("GET", testBase+"transaction/48016/timeline-entries", respond(200, body))
		if _, err := c.Transactions.ListTimelineEntries(context.Background(), 48016); !errors.Is(err, ErrMalformedResponse) {
			t.Errorf("body %s: err = %v, want ErrMalformedResponse", body, err)
		}
	}
}

func TestCustomersCreateOnAnExistingEmail(t *testing.T) {
	for _, body := range []string{`{"error": "Forbidden"}`, `{"message": "Customer already exists"}`, ``} {
		c, mt := setup(t)
		var rec recorder
		mt.RegisterResponder("POST", testBase+"customer", rec.then(respond(403, body)))
		_, err := c.Customers.Create(context.Background(), &CreateCustomerRequest{Email: "dana@studio.example", FirstName: "Dana"})
		if !errors.Is(err, ErrForbidden) {
			t.Fatalf("body %q: err = %v, want ErrForbidden", body, err)
		}
		var apiErr *APIError
		if !errors.As(err, &apiErr) || apiErr.StatusCode != 403 || !strings.Contains(apiErr.Message, "dana@studio.example") ||
			!strings.Contains(err.Error(), "may already exist for dana@studio.example") {
			t.Errorf("body %q: error %q does not name the e-mail", body, err)
		}
		if rec.count() != 1 {
			t.Errorf("%d requests", rec.count())
		}
	}
	c, _ := setup(t)
	for _, req := range []*CreateCustomerRequest{nil, {FirstName: "No e-mail"}} {
		if _, err := c.Customers.Create(context.Background(), req); !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("Create(%+v) = %v", req, err)
		}
	}
}

func TestCustomersCreateOtherErrorsAreNotRewritten(t *testing.T) {
	c, mt := setup(t)
	mt.RegisterResponder("POST", testBase+"customer", respond(422, `{"errors": {"email": ["not an e-mail address"]}}`))
	_, err := c.Customers.Create(context.Background(), &CreateCustomerRequest{Email: "nope"})
	var ve *ValidationError
	if !errors.As(err, &ve) || ve.Field("email")[0] != "not an e-mail address" || strings.Contains(err.Error(), "already exists") {
		t.Errorf("err = %v", err)
	}
}

func TestWebhooksCreateRefusesWhatIsNotAnAbsoluteURL(t *testing.T) {
	c, _ := setup(t) // any request fails the test
	for _, u := range []string{
		"", "/escrow/hook", "hooks.example.com/escrow", "//hooks.example.com/escrow", "ftp://hooks.example.com/x",
		"https:///no-host", "mailto:ops@example.com", "https://hooks.example.com/%zz", "javascript:alert(1)",
	} {
		w, err := c.Webhooks.Create(context.Background(), Me, u)
		if !errors.Is(err, ErrInvalidArgument) || w != nil {
			t.Errorf("Create(%q) = %+v, %v", u, w, err)
		}
	}
}

func TestWebhooksCreateAcceptsHTTP(t *testing.T) {
	c, mt := setup(t)
	var rec recorder
	mt.RegisterResponder("POST", testBase+"customer/me/webhook", rec.then(respond(200, `{"id": 93, "url": "http://localhost:8080/hook"}`)))
	w, err := c.Webhooks.Create(context.Background(), Me, "http://localhost:8080/hook")
	if err != nil || w.ID != 93 {
		t.Fatalf("Create = %+v, %v", w, err)
	}
	if got := string(rec.all()[0].Body); got != `{"url":"http://localhost:8080/hook"}` {
		t.Errorf("body = %s", got)
	}
}

func TestWebhooksDelete(t *testing.T) {
	c, mt := setup(t)
	var rec recorder
	mt.RegisterResponder("DELETE", testBase+"customer/me/webhook/91", rec.then(respond(204, ``)))
	mt.RegisterResponder("DELETE", testBase+"customer/8/webhook/92", rec.then(respond(404, `{"error": "no such webhook"}`)))
	if err := c.Webhooks.Delete(context.Background(), Me, 91); err != nil {
		t.Errorf("204: %v", err)
	}
	if err := c.Webhooks.Delete(context.Background(), CustomerID(8), 92); !errors.Is(err, ErrNotFound) {
		t.Errorf("404: %v", err)
	}
	if err := c.Webhooks.Delete(context.Background(), CustomerID(8), 0); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("id 0: %v", err)
	}
	if rec.count() != 2 {
		t.Errorf("%d requests, want 2", rec.count())
	}
}

func TestUpdateAPIKeySendsOnlyTheFieldsSet(t *testing.T) {
	for _, tt := range []struct {
		name string
		req  UpdateAPIKeyRequest
		want string
	}{
		{"name only", UpdateAPIKeyRequest{Name: ptr("renamed")}, `{"name":"renamed"}`},
		{"deactivate only", UpdateAPIKeyRequest{IsActive: ptr(false)}, `{"is_active":false}`},
		{"activate only", UpdateAPIKeyRequest{IsActive: ptr(true)}, `{"is_active":true}`},
		{"both", UpdateAPIKeyRequest{Name: ptr("ci"), IsActive: ptr(true)}, `{"name":"ci","is_active":true}`},
		{"empty name is still sent", UpdateAPIKeyRequest{Name: ptr("")}, `{"name":""}`},
		{"nothing", UpdateAPIKeyRequest{}, `{}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c, mt := setup(t)
			var rec recorder
			mt.RegisterResponder("PATCH", testBase+"customer/me/api_key/2", rec.then(respond(200, `{"id": 2, "name": "ci", "is_active": true}`)))
			if _, err := c.Customers.UpdateAPIKey(context.Background(), Me, 2, &tt.req); err != nil {
				t.Fatal(err)
			}
			if got := string(rec.all()[0].Body); got != tt.want {
				t.Errorf("body = %s, want %s", got, tt.want)
			}
		})
	}
	c, _ := setup(t)
	if _, err := c.Customers.UpdateAPIKey(context.Background(), Me, 2, nil); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("nil request: %v", err)
	}
}

func TestStatisticsExtraParamsAreMerged(t *testing.T) {
	for _, tt := range []struct {
		name string
		opt  StatisticsOptions
		want url.Values
	}{
		{"named field wins", StatisticsOptions{Interval: "month", Extra: url.Values{"interval": {"week"}, "currency": {"usd"}}},
			url.Values{"interval": {"month"}, "currency": {"usd"}}},
		{"extra fills an unset field", StatisticsOptions{Extra: url.Values{"interval": {"week"}}},
			url.Values{"interval": {"week"}}},
		{"repeated extra values", StatisticsOptions{Extra: url.Values{"status": {"ongoing", "completed"}}},
			url.Values{"status": {"ongoing", "completed"}}},
		{"no extra", StatisticsOptions{Interval: "day"}, url.Values{"interval": {"day"}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c, mt := setup(t)
			var rec recorder
			mt.RegisterResponder("GET", "=~^"+testBase+"partner/statistics/", rec.then(respond(200, `{"time_data": []}`)))
			extraBefore := cloneValues(tt.opt.Extra)
			if _, err := c.Partner.TransactionStatistics(context.Background(), &tt.opt); err != nil {
				t.Fatal(err)
			}
			if _, err := c.Partner.CustomerStatistics(context.Background(), &tt.opt); err != nil {
				t.Fatal(err)
			}
			for i, r := range rec.all() {
				checkQuery(t, r.RawQuery, tt.want, nil)
				if want := []string{"transactions", "customers"}[i]; !strings.Contains(r.EscapedPath, "/statistics/"+want+"/count") {
					t.Errorf("path %s", r.EscapedPath)
				}
			}
			if !reflect.DeepEqual(tt.opt.Extra, extraBefore) {
				t.Errorf("the caller's Extra changed: %v", tt.opt.Extra)
			}
		})
	}
}

func cloneValues(v url.Values) url.Values {
	if v == nil {
		return nil
	}
	out := url.Values{}
	for k, vals := range v {
		out[k] = append([]string(nil), vals...)
	}
	return out
}

func TestStatisticsKeepTheWholeDocument(t *testing.T) {
	var s Statistics
	doc := `{"queries": {"q": 1}, "time_data": [{"value": 4, "label": "2024-01"}], "aggregates": null, "extra": {"k": "v"}}`
	if err := json.Unmarshal([]byte(doc), &s); err != nil {
		t.Fatal(err)
	}
	if string(s.Raw) != doc || string(s.Queries) != `{"q": 1}` || s.TimeData[0].Value != 4 {
		t.Errorf("statistics = %+v", s)
	}
	if err := json.Unmarshal([]byte(`{"time_data": [{"value": "four"}]}`), &s); err == nil {
		t.Error("a mistyped count decoded")
	}
	var r Reports
	if err := json.Unmarshal([]byte(`{"reports": "none"}`), &r); err == nil {
		t.Error("a mistyped report list decoded")
	}
}

func TestRefusedArgumentsSendNothing(t *testing.T) {
	c, _ := setup(t) // any request fails the test
	ctx := context.Background()
	checks := map[string]error{}
	_, checks["Partner.Customer(nil)"] = c.Partner.Customer(ctx, nil)
	_, checks["Partner.Customer(empty)"] = c.Partner.Customer(ctx, &PartnerCustomerOptions{})
	_, checks["SelectDisbursementMethod(nil)"] = c.Transactions.SelectDisbursementMethod(ctx, 1, nil)
	_, checks["ChoosePaymentMethod(empty name)"] = c.Transactions.ChoosePaymentMethod(ctx, 1, "", nil)
	_, checks["WebLink(empty action)"] = c.Transactions.GetWebLink(ctx, 1, "")
	_, checks["ItemWebLink(item 0)"] = c.Transactions.GetItemWebLink(ctx, 1, 0, "receive")
	_, checks["PaymentsIn(0)"] = c.Partner.PaymentsIn(ctx, 0)
	_, checks["Customers.GetDisbursementMethod(zero ref)"] = c.Customers.GetDisbursementMethod(ctx, "", 3)
	_, checks["Webhooks.List(CustomerID(-1))"] = c.Webhooks.List(ctx, CustomerID(-1))
	for what, err := range checks {
		if !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("%s = %v, want ErrInvalidArgument", what, err)
		}
	}
}

// TestPartnerIteratorsCanBeRangedConcurrently ranges one iterator value from two goroutines,
// as a caller handing the same iter.Seq2 to two workers would. Each walk must see every
// page; under -race it also shows whether the walks share state.
func TestPartnerIteratorsCanBeRangedConcurrently(t *testing.T) {
	c, mt := setup(t)
	mt.RegisterResponder("GET", "=~^"+testBase+"partner/transactions", cursored(t, "transactions", threeCursorPages, "-"))
	mt.RegisterResponder("GET", "=~^"+testBase+"partner/customers", cursored(t, "customers", threeCursorPages, "-"))
	txs := c.Partner.AllTransactions(context.Background(), &PartnerTransactionsOptions{Limit: 2})
	customers := c.Partner.AllCustomers(context.Background(), &PartnerCustomersOptions{Limit: 2})
	want := []int64{50, 45, 40, 35, 30, 25, 20}
	var wg sync.WaitGroup
	results := make([][]yielded, 4)
	for i := range results {
		wg.Go(func() {
			if i%2 == 0 {
				results[i] = drain(txs, txID, nil)
			} else {
				results[i] = drain(customers, customerID, nil)
			}
		})
	}
	wg.Wait()
	for i, ys := range results {
		if got := ids(t, ys); !reflect.DeepEqual(got, want) {
			t.Errorf("walk %d saw %v, want %v", i, got, want)
		}
	}
}
