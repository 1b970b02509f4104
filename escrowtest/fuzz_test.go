package escrowtest

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// writeEndpoints are the endpoints FuzzWriteEndpoints feeds: every route that takes a
// body, as a customer who may use it, and the control API.
var writeEndpoints = []struct {
	method, path string
	as           string // "buyer", "seller", "partner", or "" for the control API
}{
	{http.MethodPost, "transaction", "buyer"},
	{http.MethodPatch, "transaction/{tx}", "seller"},
	{http.MethodPatch, "transaction/{tx}", "buyer"},
	{http.MethodPatch, "transaction/{milestones}/item/{item}", "seller"},
	{http.MethodPatch, "transaction/{partnered}", "partner"},
	{http.MethodPatch, "transaction/{tx}/disbursement_methods", "seller"},
	{http.MethodPost, "transaction/{tx}/disbursement_methods", "seller"},
	{http.MethodPost, "transaction/{tx}/payment_methods/credit_card", "buyer"},
	{http.MethodPost, "transaction/{tx}/payment_methods/wire_transfer", "buyer"},
	{http.MethodPost, "customer", "partner"},
	{http.MethodPost, "customer/me/api_key", "buyer"},
	{http.MethodPatch, "customer/me/api_key/{key}", "buyer"},
	{http.MethodPost, "customer/me/webhook", "buyer"},
	{http.MethodDelete, "customer/me/webhook/{webhook}", "buyer"},
	{http.MethodPost, "partner/reports", "partner"},
	{http.MethodPost, "/_emulator/customers", ""},
	{http.MethodPost, "/_emulator/transactions/{tx}/approve_payment", ""},
	{http.MethodPost, "/_emulator/clock/advance", ""},
	{http.MethodPost, "/_emulator/rate_limit", ""},
	{http.MethodPost, "/_emulator/faults", ""},
	{http.MethodPost, "/_emulator/reset", ""},
	{http.MethodPatch, "customer/me", "buyer"},
	{http.MethodPost, "/_emulator/transactions/{tx}/reach", ""},
	{http.MethodPost, "/_emulator/transactions/{tx}/trigger", ""},
	{http.MethodPut, "/_emulator/state", ""},
}

// fuzzState is an emulator with a transaction in each interesting shape.
type fuzzState struct {
	e        *Emulator
	accounts map[string]Account
	ids      map[string]int64
}

// noNetwork refuses every webhook call, so that fuzzed webhook URLs reach nothing.
type noNetwork struct{}

func (noNetwork) RoundTrip(*http.Request) (*http.Response, error) {
	return nil, errors.New("no network while fuzzing")
}

// fuzzBodies are the creation bodies of a fuzzState, encoded once.
var fuzzBodies = sync.OnceValue(func() map[string][]byte {
	out := map[string][]byte{}
	for name, b := range map[string]body{"tx": merchandise(), "partnered": partnered(), "milestones": milestones()} {
		out[name], _ = json.Marshal(b)
	}
	return out
})

func newFuzzState(t testing.TB) *fuzzState {
	e := NewEmulator(WithClock(testStart), WithRateLimit(0, 0), WithWebhookClient(&http.Client{Transport: noNetwork{}}))
	fs := &fuzzState{e: e, accounts: map[string]Account{}, ids: map[string]int64{}}
	for _, role := range []string{"buyer", "seller", "partner"} {
		if role == "partner" {
			fs.accounts[role] = e.AddPartner(role + "@example.com")
		} else {
			fs.accounts[role] = e.AddCustomer(role + "@example.com")
		}
	}
	create := func(as, name string) int64 {
		rec := fs.do(t, http.MethodPost, "transaction", as, "", fuzzBodies()[name])
		var tx struct {
			ID    int64 `json:"id"`
			Items []struct {
				ID int64 `json:"id"`
			} `json:"items"`
		}
		json.Unmarshal(rec.Body.Bytes(), &tx)
		fs.ids["item"] = tx.Items[0].ID
		return tx.ID
	}
	fs.ids["tx"] = create("buyer", "tx")
	fs.ids["partnered"] = create("partner", "partnered")
	fs.ids["milestones"] = create("buyer", "milestones")
	for _, id := range []int64{fs.ids["tx"], fs.ids["milestones"]} {
		fs.do(t, http.MethodPatch, fmt.Sprintf("transaction/%d", id), "seller", "", []byte(`{"action":"agree"}`))
		e.ApprovePayment(id)
	}
	fs.ids["key"] = firstAPIKeyID
	fs.ids["webhook"] = firstWebhookID
	return fs
}

// do serves one request in process; as is the customer, or "" for the control API from
// the loopback interface.
func (fs *fuzzState) do(t testing.TB, method, path, as, asCustomer string, payload []byte) *httptest.ResponseRecorder {
	for name, id := range fs.ids {
		path = strings.ReplaceAll(path, "{"+name+"}", fmt.Sprint(id))
	}
	if !strings.HasPrefix(path, "/") {
		path = versionRoot + "/" + path
	}
	req := httptest.NewRequest(method, path, strings.NewReader(string(payload)))
	req.RemoteAddr, req.Host = "127.0.0.1:40000", "127.0.0.1"
	if a, ok := fs.accounts[as]; ok {
		req.SetBasicAuth(a.Email, a.Password) // the password, so that fuzzed key changes cannot lock the client out
	}
	if asCustomer != "" {
		req.Header.Set(asCustomerHeader, asCustomer)
	}
	rec := httptest.NewRecorder()
	fs.e.ServeHTTP(rec, req)
	return rec
}

// FuzzWriteEndpoints feeds arbitrary bodies (and As-Customer values) to every endpoint
// that takes a body: the emulator must never panic, never answer 5xx, and always answer
// JSON that decodes.
func FuzzWriteEndpoints(f *testing.F) {
	seeds := []string{
		"", "{}", "null", "[]", `{"a":`, `"x"`, "1e999", `{"action":"agree"}`, `{"action":"ship","shipping_information":{"authorization_type":"push"}}`,
		`{"action":"cancel","cancel_information":{"cancellation_reason":"x"}}`, `{"id": 701}`, `{"name":"k","is_active":false}`,
		`{"url":"https://hooks.example.com/x"}`, `{"email":"new@example.com","partner":true}`, `{"seconds": 86400}`,
		`{"limit": 5, "window_seconds": 1}`, `{"state":"complete"}`, `{"state":"cancelled"}`, `{"event":"agree"}`, `{"version":1}`, `{"endpoint":"*","latency_ms":0,"status":500,"probability":0.5}`,
		`{"status":"ongoing","ids":[1,2],"min_amount":"1.00","initiation_start_date":"2024-01-01"}`,
		`{"email":"n@example.com","address":{"country":"GB"},"disbursement_methods":[{"type":"wire_transfer_international"}]}`,
		`{"first_name":"A","company":{"company_name":"C","address":{"country":"us"}},"tax_numbers":[{"type":"ssn","number":"1"}],"date_of_birth":"1982-03-10T00:00:00"}`,
		string(mustJSON(f, ach())), string(mustJSON(f, merchandise())), string(mustJSON(f, milestones())),
		string(mustJSON(f, brokered())), string(mustJSON(f, domain())),
	}
	for i, s := range seeds {
		for ep := range writeEndpoints {
			if ep%3 == i%3 {
				f.Add(uint8(ep), "", []byte(s))
			}
		}
	}
	f.Add(uint8(4), "buyer@example.com", []byte(`{"action":"agree"}`))
	f.Add(uint8(4), "nobody", []byte(`{"action":"accept"}`))

	f.Fuzz(func(t *testing.T, endpoint uint8, asCustomer string, payload []byte) {
		ep := writeEndpoints[int(endpoint)%len(writeEndpoints)]
		// A fresh emulator for every input, so that a failing input fails alone, without
		// the history of the inputs before it.
		fs := newFuzzState(t)
		defer fs.e.Close()
		rec := fs.do(t, ep.method, ep.path, ep.as, asCustomer, payload)
		if rec.Code >= 500 {
			t.Fatalf("%s %s answered %d to %q\n%s", ep.method, ep.path, rec.Code, payload, rec.Body)
		}
		if rec.Body.Len() > 0 && !json.Valid(rec.Body.Bytes()) {
			t.Fatalf("%s %s answered invalid JSON to %q: %s", ep.method, ep.path, payload, rec.Body)
		}
	})
}

// FuzzRestore feeds Restore documents near a real one: a document it takes must leave an
// emulator that serves every read, Reach and the clock without a panic or a 5xx.
func FuzzRestore(f *testing.F) {
	fs := newFuzzState(f)
	var doc strings.Builder
	if err := fs.e.Snapshot(&doc); err != nil {
		f.Fatal(err)
	}
	fs.e.Close()
	f.Add([]byte(doc.String()))
	f.Add([]byte(strings.Replace(doc.String(), `"funded": true`, `"funded": false`, 1)))
	f.Add([]byte(strings.Replace(doc.String(), `"role": "seller"`, `"role": "broker"`, 1)))

	f.Fuzz(func(t *testing.T, doc []byte) {
		fs := newFuzzState(t)
		defer fs.e.Close()
		if err := fs.e.Restore(strings.NewReader(string(doc))); err != nil {
			if !errors.Is(err, ErrSnapshot) {
				t.Fatalf("Restore refused with an error that is not ErrSnapshot: %v", err)
			}
			return
		}
		fs.e.mu.Lock()
		ids := make([]int64, 0, len(fs.e.st.txs))
		for id := range fs.e.st.txs {
			ids = append(ids, id)
		}
		fs.e.mu.Unlock()
		for _, id := range ids {
			for _, as := range []string{"buyer", "seller", "partner"} {
				check(t, fs.do(t, http.MethodGet, fmt.Sprintf("transaction/%d", id), as, "", nil))
				check(t, fs.do(t, http.MethodGet, fmt.Sprintf("transaction/%d/timeline-entries", id), as, "", nil))
			}
			check(t, fs.do(t, http.MethodGet, fmt.Sprintf("/_emulator/transactions/%d", id), "", "", nil))
			fs.e.Reach(id, "complete")
		}
		for _, path := range []string{"transaction", "partner/transactions", "partner/customers", "customer/me"} {
			check(t, fs.do(t, http.MethodGet, path, "partner", "", nil))
		}
		for _, path := range []string{"/_emulator/transactions", "/_emulator/accounts", "/_emulator/state", "/_emulator/faults"} {
			check(t, fs.do(t, http.MethodGet, path, "", "", nil))
		}
		fs.e.Advance(400 * 24 * time.Hour)
	})
}

// check fails a fuzz input that made the emulator answer 5xx.
func check(t *testing.T, rec *httptest.ResponseRecorder) {
	t.Helper()
	if rec.Code >= 500 {
		t.Fatalf("answered %d: %s", rec.Code, rec.Body)
	}
}
