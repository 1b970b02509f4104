package escrowtest

import (
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"io"
	"net"
	"net/http"
	"strconv"
	"time"
)

// controlRoot is where the control API lives, beside the API on the same listener.
const controlRoot = "/_emulator/"

// Limits of the control API's inputs.
const (
	maxAdvance = 100 * 365 * 24 * time.Hour
	maxLatency = 10 * time.Minute
)

// ControlEndpoint is one endpoint of the control API, as GET /_emulator/ lists it and
// `escrow emulator -h` prints it.
type ControlEndpoint struct {
	Method string `json:"method"`
	Path   string `json:"path"`
	// Body is the request's JSON fields, "" for none.
	Body string `json:"body,omitempty"`
	// Answer is the status and the answer's JSON fields.
	Answer  string `json:"answer"`
	Summary string `json:"summary"`
}

// controlRoute is a control endpoint and its handler: handle answers JSON, serve (the
// page and its event stream) writes its own answer.
type controlRoute struct {
	ControlEndpoint
	handle func(e *Emulator, r *http.Request, body []byte) (response, error)
	serve  func(e *Emulator, w http.ResponseWriter, r *http.Request)
}

// controlRoutes is the one list of control endpoints: the control API dispatches on it,
// and the index and ControlEndpoints are built from it.
var controlRoutes = []controlRoute{
	{ControlEndpoint{http.MethodPost, "/_emulator/customers", `{"email", "partner"}`, `201 {"id", "email", "api_key", "password"}`,
		"add a customer (an approved partner with partner: true) and give it credentials"}, (*Emulator).controlAddCustomer, nil},
	{ControlEndpoint{http.MethodGet, "/_emulator/transactions", "", `200 {"now", "total", "transactions": [{"id", "description", "reference", "currency", "created", "amount", "state", "parties": [{"role", "customer", "agreed"}], "next_steps", "waiting"}], "states"}`,
		"the transactions, newest first, with who must act next (?state=, ?party=, ?limit=)"}, (*Emulator).controlTransactions, nil},
	{ControlEndpoint{http.MethodGet, "/_emulator/transactions/{id}", "", `200 {"now", "viewer", "parties", "transaction", "progress", "ledger": {"in", "out", "fees", "held", "balanced"}, "timeline", "deliveries", "as_customer": [{"date", "endpoint", "partner", "as_customer", "status"}]}`,
		"one transaction whole, as ?viewer= (a party) sees it: next steps, ledger, timeline, webhook and As-Customer calls"}, (*Emulator).controlTransaction, nil},
	{ControlEndpoint{http.MethodPost, "/_emulator/transactions/{id}/approve_payment", "", `200 {"ok": true}`,
		"the buyer's funds arrive"}, (*Emulator).controlApprovePayment, nil},
	{ControlEndpoint{http.MethodPost, "/_emulator/transactions/{id}/reject_payment", "", `200 {"ok": true}`,
		"the buyer's payment fails"}, (*Emulator).controlRejectPayment, nil},
	{ControlEndpoint{http.MethodPost, "/_emulator/transactions/{id}/reach", `{"state"}`, `200 {next_steps answer}`,
		"drive the transaction forward to a state (in_inspection, accepted, complete, cancelled, …) as its parties would"}, (*Emulator).controlReach, nil},
	{ControlEndpoint{http.MethodPost, "/_emulator/transactions/{id}/trigger", `{"event"}`, `200 {"ok": true}`,
		"deliver an event of the transaction again to its parties' webhooks, as the provider's replay would"}, (*Emulator).controlTrigger, nil},
	{ControlEndpoint{http.MethodGet, "/_emulator/transactions/{id}/ledger", "", `200 {"in", "out", "fees", "held"}`,
		"the transaction's money: in always equals out + fees + held"}, (*Emulator).controlLedger, nil},
	{ControlEndpoint{http.MethodGet, "/_emulator/transactions/{id}/next_steps", "", `200 {"transaction_id", "state", "next_steps": [{"role", "customer", "action", "item_id", "auto_at"}], "goods": [{"item_id", "state"}], "disbursed", "unpaid": [{"item_id", "role", "customer", "amount", "reason"}], "waiting"}`,
		"who must do what next, and why money owed has not been paid out"}, (*Emulator).controlNextSteps, nil},
	{ControlEndpoint{http.MethodPost, "/_emulator/clock/advance", `{"seconds"}`, `200 {"now", "transactions": [next_steps answers]}`,
		"move the emulator's clock forward; inspection periods that end are applied, and the transactions they changed say what they wait for"}, (*Emulator).controlAdvance, nil},
	{ControlEndpoint{http.MethodPost, "/_emulator/rate_limit", `{"limit", "window_seconds"}`, `200 {"ok": true}`,
		"set the rate limit per account and endpoint (limit 0 turns it off)"}, (*Emulator).controlRateLimit, nil},
	{ControlEndpoint{http.MethodPost, "/_emulator/faults", `{"endpoint", "status", "probability", "drop", "latency_ms", "latency_after_ms"}`, `200 {"ok": true}`,
		"inject a fault on an API endpoint or on webhook calls"}, (*Emulator).controlAddFault, nil},
	{ControlEndpoint{http.MethodGet, "/_emulator/faults", "", `200 {"faults": [{"id", "endpoint", "status", "probability", "drop", "latency_ms", "latency_after_ms"}]}`,
		"the faults standing, in the order they apply"}, (*Emulator).controlFaultList, nil},
	{ControlEndpoint{http.MethodDelete, "/_emulator/faults/{id}", "", `200 {"ok": true}`,
		"remove one fault"}, (*Emulator).controlRemoveFault, nil},
	{ControlEndpoint{http.MethodDelete, "/_emulator/faults", "", `200 {"ok": true}`,
		"remove every fault"}, (*Emulator).controlClearFaults, nil},
	{ControlEndpoint{http.MethodGet, "/_emulator/accounts", "", `200 {"total", "accounts": [{"id", "email", "partner", "created", "password", "api_keys": [{"id", "name", "last_four", "active"}], "webhooks": [{"id", "url"}]}]}`,
		"the accounts, newest first (?limit=), keys by their last four characters and webhook secrets masked"}, (*Emulator).controlAccounts, nil},
	{ControlEndpoint{http.MethodGet, "/_emulator/webhook_deliveries", "", `200 {"deliveries": [{"url", "event", "event_type", "transaction_id", "status_code", "error", "latency_ms", "fault"}]}`,
		"the webhook calls made; ?flush=true waits for the queued ones first"}, (*Emulator).controlDeliveries, nil},
	{ControlEndpoint{http.MethodGet, "/_emulator/requests", "", `200 {"requests": [{"seq", "time", "method", "path", "endpoint", "account", "as_customer", "status", "latency_ms", "fault", "request_body", "response_body"}]}`,
		"the latest API requests, credentials removed (?account=, ?path=, ?status=404|4xx|dropped, ?after=SEQ, ?limit=)"}, (*Emulator).controlRequests, nil},
	{ControlEndpoint{http.MethodGet, "/_emulator/state", "", `200 {"version", "clock", "ids", "accounts", "transactions", …}`,
		"the whole state as one document (Snapshot): it holds key hashes and webhook secrets"}, nil, (*Emulator).serveState},
	{ControlEndpoint{http.MethodPut, "/_emulator/state", "a document GET /_emulator/state wrote", `200 {"ok": true}`,
		"replace the whole state (Restore); a refused document is a 422 naming the part, and changes nothing"}, nil, (*Emulator).serveRestore},
	{ControlEndpoint{http.MethodPost, "/_emulator/reset", "", `200 {"ok": true}`,
		"forget every account, transaction, fault and delivery"}, (*Emulator).controlReset, nil},
	{ControlEndpoint{http.MethodGet, "/_emulator/events", "", `200 text/event-stream: "change" events`,
		"server-sent \"change\" events (data: a counter): the page's live updates"}, nil, (*Emulator).serveEvents},
	{ControlEndpoint{http.MethodGet, "/_emulator/ui/", "", "200 text/html",
		"the page: watch transactions live and use these controls, in a browser on this machine"}, nil, (*Emulator).serveUI},
}

// controlIndex is the index's own entry, listed first.
var controlIndex = ControlEndpoint{http.MethodGet, "/_emulator/", "", `200 {"endpoints": [{"method", "path", "body", "answer", "summary"}]}`,
	"this index of the control endpoints"}

// ControlEndpoints returns the control API's endpoints, from the list it dispatches on.
func ControlEndpoints() []ControlEndpoint {
	out := []ControlEndpoint{controlIndex}
	for _, r := range controlRoutes {
		out = append(out, r.ControlEndpoint)
	}
	return out
}

type controlEndpoints struct {
	Endpoints []ControlEndpoint `json:"endpoints"`
}

// controlMux serves the control API: JSON, no authentication, loopback clients only. It
// is neither rate-limited nor faulted. The package comment lists its endpoints.
func (e *Emulator) controlMux() http.Handler {
	mux := http.NewServeMux()
	handle := func(pattern string, h func(r *http.Request, body []byte) (response, error)) {
		mux.HandleFunc(pattern, e.controlJSON(h))
	}
	for _, rt := range controlRoutes {
		if rt.serve != nil {
			mux.HandleFunc(rt.Method+" "+rt.Path, func(w http.ResponseWriter, r *http.Request) { rt.serve(e, w, r) })
			continue
		}
		handle(rt.Method+" "+rt.Path, func(r *http.Request, body []byte) (response, error) { return rt.handle(e, r, body) })
	}
	mux.Handle("GET /_emulator/ui", http.RedirectHandler(UIPath, http.StatusMovedPermanently))
	handle(controlIndex.Method+" "+controlIndex.Path+"{$}", func(*http.Request, []byte) (response, error) {
		return success(controlEndpoints{Endpoints: ControlEndpoints()}), nil
	})
	mux.HandleFunc("GET /_emulator/pages/", servePage)
	mux.HandleFunc("GET /_emulator/reports/{file}", e.serveReport)
	handle(controlRoot, func(r *http.Request, _ []byte) (response, error) {
		return response{}, notFound("no control endpoint %s %s: GET %s lists them", r.Method, r.URL.Path, controlRoot)
	})
	return e.guardControl(mux)
}

// controlJSON serves a control endpoint from h, which gets the request's body: its answer,
// or its error's.
func (e *Emulator) controlJSON(h func(r *http.Request, body []byte) (response, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		body, err := readBody(w, r)
		resp := response{}
		if err == nil {
			resp, err = h(r, body)
		}
		if err != nil {
			resp = e.errorResponse(err)
		}
		resp.write(w)
	}
}

// guardControl serves the control API to loopback clients only, and changes only from
// the emulator's own page or from outside a browser; a change is announced to the page's
// listeners.
func (e *Emulator) guardControl(mux http.Handler) http.Handler {
	// A page of another site open in the same browser could otherwise post to the control
	// API (a form or a no-cors fetch needs no permission): requests that change something
	// must come from the emulator's own page or from outside a browser (no Sec-Fetch-Site
	// nor Origin: the CLI, curl, tests).
	crossOrigin := http.NewCrossOriginProtection()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host, _, _ := net.SplitHostPort(r.RemoteAddr)
		if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
			forbidden("the control API answers loopback clients only").response().write(w)
			return
		}
		if err := crossOrigin.Check(r); err != nil {
			forbidden("the control API takes changes from its own page or from outside a browser only: %v", err).response().write(w)
			return
		}
		mux.ServeHTTP(w, r)
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			e.changes.notify()
		}
	})
}

// readBody reads a request body of at most maxBodyBytes.
func readBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBodyBytes))
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
		return nil, newError(http.StatusRequestEntityTooLarge, "too_large", "the body is larger than %d bytes", maxBodyBytes)
	case err != nil:
		return nil, badRequest("the body could not be read: %v", err)
	}
	return body, nil
}

// maxControlAccounts bounds the accounts the control API, which takes no credentials,
// may create.
const maxControlAccounts = 100_000

func (e *Emulator) accountCount() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.st.accounts)
}

func (e *Emulator) hasAccount(email string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.st.accountByEmail(email) != nil
}

type controlOK struct {
	OK bool `json:"ok"`
}

// ClockMove is the control API's answer to moving the emulator's clock.
type ClockMove struct {
	// Now is the emulator's time after the move, as the API writes times.
	Now string `json:"now"`
	// Transactions are those the move changed, and what each waits for now.
	Transactions []Progress `json:"transactions"`
}

type controlDeliveries struct {
	Deliveries []Delivery `json:"deliveries"`
}

// controlAddCustomer serves POST /_emulator/customers {"email", "partner"}: 201.
func (e *Emulator) controlAddCustomer(_ *http.Request, body []byte) (response, error) {
	o, err := decodeObject(body)
	if err != nil {
		return response{}, err
	}
	email, partner := o.email("email"), o.boolean("partner")
	if err := o.errs.orNil(); err != nil {
		return response{}, err
	}
	if e.accountCount() >= maxControlAccounts && !e.hasAccount(email) {
		return response{}, fieldErrors{"email": []string{fmt.Sprintf("the emulator holds %d accounts already: POST /_emulator/reset", maxControlAccounts)}}
	}
	return response{status: http.StatusCreated, body: e.addAccount(email, partner)}, nil
}

// controlApprovePayment serves POST /_emulator/transactions/{id}/approve_payment.
func (e *Emulator) controlApprovePayment(r *http.Request, _ []byte) (response, error) {
	return controlPayment(r, e.ApprovePayment)
}

// controlRejectPayment serves POST /_emulator/transactions/{id}/reject_payment.
func (e *Emulator) controlRejectPayment(r *http.Request, _ []byte) (response, error) {
	return controlPayment(r, e.RejectPayment)
}

func controlPayment(r *http.Request, do func(int64) error) (response, error) {
	id, err := pathID(r)
	if err != nil {
		return response{}, err
	}
	if err := do(id); err != nil {
		return response{}, err
	}
	return success(controlOK{OK: true}), nil
}

// pathID reads the transaction id of a control path; anything else names nothing (404).
func pathID(r *http.Request) (int64, error) {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil {
		return 0, notFound("no transaction %q", r.PathValue("id"))
	}
	return id, nil
}

// controlLedger serves GET /_emulator/transactions/{id}/ledger.
func (e *Emulator) controlLedger(r *http.Request, _ []byte) (response, error) {
	id, err := pathID(r)
	if err != nil {
		return response{}, err
	}
	l, err := e.Ledger(id)
	if err != nil {
		return response{}, err
	}
	return success(l), nil
}

// controlNextSteps serves GET /_emulator/transactions/{id}/next_steps.
func (e *Emulator) controlNextSteps(r *http.Request, _ []byte) (response, error) {
	id, err := pathID(r)
	if err != nil {
		return response{}, err
	}
	p, err := e.NextSteps(id)
	if err != nil {
		return response{}, err
	}
	return success(p), nil
}

// controlClearFaults serves DELETE /_emulator/faults.
func (e *Emulator) controlClearFaults(*http.Request, []byte) (response, error) {
	e.ClearFaults()
	return success(controlOK{OK: true}), nil
}

// controlReset serves POST /_emulator/reset.
func (e *Emulator) controlReset(*http.Request, []byte) (response, error) {
	e.Reset()
	return success(controlOK{OK: true}), nil
}

// controlAdvance serves POST /_emulator/clock/advance {"seconds"}.
func (e *Emulator) controlAdvance(_ *http.Request, body []byte) (response, error) {
	o, err := decodeObject(body)
	if err != nil {
		return response{}, err
	}
	o.required("seconds")
	seconds, _ := o.integer("seconds", 0, int64(maxAdvance/time.Second))
	if err := o.errs.orNil(); err != nil {
		return response{}, err
	}
	changed := e.advanceReporting(time.Duration(seconds) * time.Second)
	return success(ClockMove{Now: formatTime(e.Now()), Transactions: changed}), nil
}

// controlRateLimit serves POST /_emulator/rate_limit {"limit", "window_seconds"}; the
// window is 60 seconds when not given, and a limit of 0 turns limiting off.
func (e *Emulator) controlRateLimit(_ *http.Request, body []byte) (response, error) {
	o, err := decodeObject(body)
	if err != nil {
		return response{}, err
	}
	o.required("limit")
	limit, _ := o.integer("limit", 0, 1<<31-1)
	window, ok := o.integer("window_seconds", 1, int64(maxAdvance/time.Second))
	if !ok {
		window = int64(defaultRateWindow / time.Second)
	}
	if err := o.errs.orNil(); err != nil {
		return response{}, err
	}
	e.SetRateLimit(int(limit), time.Duration(window)*time.Second)
	return success(controlOK{OK: true}), nil
}

// controlAddFault serves POST /_emulator/faults {"endpoint", "status", "probability",
// "drop": "before"|"after", "latency_ms", "latency_after_ms"}.
func (e *Emulator) controlAddFault(_ *http.Request, body []byte) (response, error) {
	o, err := decodeObject(body)
	if err != nil {
		return response{}, err
	}
	f := Fault{Endpoint: o.str("endpoint")}
	o.required("endpoint")
	status, _ := o.integer("status", 400, 599)
	latency, _ := o.integer("latency_ms", 0, maxLatency.Milliseconds())
	latencyAfter, _ := o.integer("latency_after_ms", 0, maxLatency.Milliseconds())
	f.Status, f.Latency = int(status), time.Duration(latency)*time.Millisecond
	f.LatencyAfter = time.Duration(latencyAfter) * time.Millisecond
	f.Probability = o.fraction("probability")
	switch o.oneOf("drop", "before", "after") {
	case "before":
		f.Drop = DropBefore
	case "after":
		f.Drop = DropAfter
	}
	if o.errs.orNil() == nil {
		if err := e.InjectFault(f); err != nil {
			o.errs.add(err.Error(), "all")
		}
	}
	if err := o.errs.orNil(); err != nil {
		return response{}, err
	}
	return success(controlOK{OK: true}), nil
}

// controlDeliveries serves GET /_emulator/webhook_deliveries; with ?flush=true it first
// waits, for as long as the request lasts, until queued deliveries are made.
func (e *Emulator) controlDeliveries(r *http.Request, _ []byte) (response, error) {
	q := newQuery(r.URL.Query())
	flush := q.boolean("flush")
	if err := q.errs.orNil(); err != nil {
		return response{}, err
	}
	if flush {
		if err := e.FlushWebhooks(r.Context()); err != nil {
			return response{}, newError(http.StatusServiceUnavailable, "timeout", "webhooks still queued: %v", err)
		}
	}
	ds := []Delivery{}
	for _, d := range e.Deliveries() {
		ds = append(ds, d.masked())
	}
	return success(controlDeliveries{Deliveries: ds}), nil
}

// servePage stands in for the provider's web pages (payment landing pages and web
// links), so that the URLs the emulator hands out lead somewhere.
func servePage(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	fmt.Fprintf(w, "<!doctype html>\n<title>escrowtest</title>\n<p>escrowtest stands in for the provider's page %s. "+
		"Payments are approved with POST /_emulator/transactions/{id}/approve_payment.</p>\n", html.EscapeString(r.URL.Path))
}

// serveReport serves a report's CSV, where downloadReport sends the partner. It needs the
// partner's credentials, as the API does: a report lists the partner's transactions, and
// a loopback client is not necessarily the partner. Another customer's report is not
// found, so its existence does not leak.
func (e *Emulator) serveReport(w http.ResponseWriter, r *http.Request) {
	e.mu.Lock()
	caller := e.st.authenticate(r)
	var data []byte
	for _, rep := range e.st.reports {
		if caller != nil && rep.partner == caller.id && rep.taskID+".csv" == r.PathValue("file") {
			data = rep.csv
		}
	}
	e.mu.Unlock()
	if caller == nil {
		err := newError(http.StatusUnauthorized, "unauthorized", "report downloads need the partner's HTTP Basic credentials")
		err.header = http.Header{"Www-Authenticate": {`Basic realm="escrow"`}}
		err.response().write(w)
		return
	}
	if data == nil {
		notFound("no report %q", r.PathValue("file")).response().write(w)
		return
	}
	w.Header().Set("Content-Type", "text/csv")
	w.Write(data)
}

// fraction reads a number between 0 and 1; 0 when absent or invalid (reported).
func (o object) fraction(key string) float64 {
	v := o.fields[key]
	if v == nil {
		return 0
	}
	n, isNum := v.(json.Number)
	f, err := n.Float64()
	if !isNum || err != nil || f < 0 || f > 1 {
		o.fail(key, "must be a number between 0 and 1")
		return 0
	}
	return f
}
