package escrow

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"reflect"
	"strings"
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

// TestReportDownloadHandsBackEveryRedirectAndOnlyRedirects: a report download hands back
// any 3xx with its Location, 300 included, and a 400 is an error, not a redirect.
func TestReportDownloadHandsBackEveryRedirectAndOnlyRedirects(t *testing.T) {
	c, mt := setup(t)
	const where = "https://reports.escrow-files.example/rpt_9f2c.csv"
	mt.RegisterResponder("GET", downloadPath, respond(http.StatusMultipleChoices, ``, "Location", where))
	if d, err := c.Partner.DownloadReport(context.Background(), "rpt_9f2c", nil); err != nil || d.URL != where {
		t.Errorf("300: %+v, %v; want the URL %s", d, err, where)
	}
	mt.RegisterResponder("GET", downloadPath, respond(http.StatusBadRequest, `{"error": "bad task"}`, "Location", where))
	var apiErr *APIError
	if _, err := c.Partner.DownloadReport(context.Background(), "rpt_9f2c", nil); !errors.As(err, &apiErr) || apiErr.StatusCode != 400 {
		t.Errorf("400: err = %v, want an *APIError of status 400", err)
	}
}
