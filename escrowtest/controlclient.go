package escrowtest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

// ControlClient calls the control API of an emulator that runs elsewhere: `escrow emulator`,
// or a Server in another process. Each method is one control endpoint (ControlEndpoints
// lists them), typed with the wire types the emulator answers with. A test in the same
// process calls the Server's methods directly instead. It is safe for concurrent use.
type ControlClient struct {
	root *url.URL // scheme://host:port/_emulator/
	hc   *http.Client
}

// maxControlAnswer bounds what is read of an answer: the control API's largest, the
// deliveries, stays far below it.
const maxControlAnswer = 16 << 20

// ErrControlURL matches NewControlClient's error for a URL that names no emulator.
var ErrControlURL = errors.New("escrowtest: not an http or https URL of an emulator")

// NewControlClient returns a client for the emulator at baseURL: the API base URL it
// prints (https://127.0.0.1:8443/2017-09-01/) or its origin; the control API sits at the
// origin's /_emulator/ whatever the API's path. hc sends the requests; it must trust the
// emulator's certificate (Server.Client does, and `escrow emulator --cert-out` writes it
// for others).
func NewControlClient(baseURL string, hc *http.Client) (*ControlClient, error) {
	u, err := url.Parse(baseURL)
	if err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") {
		return nil, fmt.Errorf("%w: %q", ErrControlURL, baseURL)
	}
	if hc == nil {
		return nil, errors.New("escrowtest: NewControlClient needs an *http.Client")
	}
	return &ControlClient{root: &url.URL{Scheme: u.Scheme, Host: u.Host, Path: controlRoot}, hc: hc}, nil
}

// ControlError is an answer of the control API other than a success: the status, the
// error body's code and message, or the fields a validation refused.
type ControlError struct {
	Method, Path string
	StatusCode   int
	Code         string   // such as "not_found" or "invalid_state"; "" for validation errors
	Message      string   // the error body's message, or the body itself when it is not JSON
	Fields       []string // "field: message" for each refused field of a 422, sorted by field
}

// Error names the call, the status and what the emulator said.
func (e *ControlError) Error() string {
	msg := e.Message
	if len(e.Fields) > 0 {
		msg = strings.Join(e.Fields, "; ")
	}
	if e.Code != "" {
		msg = e.Code + ": " + msg
	}
	return fmt.Sprintf("%s %s: %d: %s", e.Method, e.Path, e.StatusCode, msg)
}

// Endpoints returns the control API's index: it answers only when an emulator does.
func (c *ControlClient) Endpoints(ctx context.Context) ([]ControlEndpoint, error) {
	var idx controlEndpoints
	err := c.call(ctx, http.MethodGet, "/", nil, nil, &idx)
	return idx.Endpoints, err
}

// AddCustomer makes an account for email (an approved partner when partner is true), or
// gives an existing one a new API key, and returns its credentials.
func (c *ControlClient) AddCustomer(ctx context.Context, email string, partner bool) (Account, error) {
	var a Account
	err := c.call(ctx, http.MethodPost, "customers", nil, map[string]any{"email": email, "partner": partner}, &a)
	return a, err
}

// ApprovePayment makes the buyer's funds of a transaction arrive.
func (c *ControlClient) ApprovePayment(ctx context.Context, txID int64) error {
	return c.call(ctx, http.MethodPost, "transactions/"+strconv.FormatInt(txID, 10)+"/approve_payment", nil, nil, &controlOK{})
}

// RejectPayment makes the buyer's payment of a transaction fail.
func (c *ControlClient) RejectPayment(ctx context.Context, txID int64) error {
	return c.call(ctx, http.MethodPost, "transactions/"+strconv.FormatInt(txID, 10)+"/reject_payment", nil, nil, &controlOK{})
}

// Ledger returns a transaction's money as the emulator counts it.
func (c *ControlClient) Ledger(ctx context.Context, txID int64) (Ledger, error) {
	var l Ledger
	err := c.call(ctx, http.MethodGet, "transactions/"+strconv.FormatInt(txID, 10)+"/ledger", nil, nil, &l)
	return l, err
}

// NextSteps returns who must do what next in a transaction, and why money owed has not
// been paid out.
func (c *ControlClient) NextSteps(ctx context.Context, txID int64) (Progress, error) {
	var p Progress
	err := c.call(ctx, http.MethodGet, "transactions/"+strconv.FormatInt(txID, 10)+"/next_steps", nil, nil, &p)
	return p, err
}

// Advance moves the emulator's clock forward by d, in whole seconds; inspection periods
// that end are applied, and the answer lists the transactions the move changed.
func (c *ControlClient) Advance(ctx context.Context, d time.Duration) (ClockMove, error) {
	var m ClockMove
	err := c.call(ctx, http.MethodPost, "clock/advance", nil, map[string]int64{"seconds": int64(d / time.Second)}, &m)
	return m, err
}

// SetRateLimit sets the requests allowed per account and endpoint in each window of
// window (whole seconds); a limit of 0 turns limiting off.
func (c *ControlClient) SetRateLimit(ctx context.Context, limit int, window time.Duration) error {
	body := map[string]int64{"limit": int64(limit), "window_seconds": int64(window / time.Second)}
	return c.call(ctx, http.MethodPost, "rate_limit", nil, body, &controlOK{})
}

// InjectFault adds a fault, as Emulator.InjectFault does; a fault the emulator refuses is
// a *ControlError naming why.
func (c *ControlClient) InjectFault(ctx context.Context, f Fault) error {
	body := map[string]any{"endpoint": f.Endpoint}
	if f.Status != 0 {
		body["status"] = f.Status
	}
	if f.Probability != 0 {
		body["probability"] = f.Probability
	}
	switch f.Drop {
	case DropNone:
	case DropBefore:
		body["drop"] = "before"
	case DropAfter:
		body["drop"] = "after"
	default:
		body["drop"] = strconv.Itoa(int(f.Drop)) // refused by the emulator, with its reason
	}
	if f.Latency != 0 {
		body["latency_ms"] = f.Latency.Milliseconds()
	}
	if f.LatencyAfter != 0 {
		body["latency_after_ms"] = f.LatencyAfter.Milliseconds()
	}
	return c.call(ctx, http.MethodPost, "faults", nil, body, &controlOK{})
}

// ClearFaults removes every fault.
func (c *ControlClient) ClearFaults(ctx context.Context) error {
	return c.call(ctx, http.MethodDelete, "faults", nil, nil, &controlOK{})
}

// Deliveries returns the webhook calls made so far; with flush, the emulator first waits
// (as long as ctx allows) until the queued calls are made.
func (c *ControlClient) Deliveries(ctx context.Context, flush bool) ([]Delivery, error) {
	var q url.Values
	if flush {
		q = url.Values{"flush": {"true"}}
	}
	var d controlDeliveries
	err := c.call(ctx, http.MethodGet, "webhook_deliveries", q, nil, &d)
	return d.Deliveries, err
}

// Reach drives a transaction forward to state, as Emulator.Reach does, and returns what
// it then waits for.
func (c *ControlClient) Reach(ctx context.Context, txID int64, state string) (Progress, error) {
	var p Progress
	err := c.call(ctx, http.MethodPost, "transactions/"+strconv.FormatInt(txID, 10)+"/reach", nil, map[string]string{"state": state}, &p)
	return p, err
}

// Trigger delivers an event of a transaction again to its parties' webhooks, as
// Emulator.Trigger does.
func (c *ControlClient) Trigger(ctx context.Context, txID int64, event string) error {
	return c.call(ctx, http.MethodPost, "transactions/"+strconv.FormatInt(txID, 10)+"/trigger", nil, map[string]string{"event": event}, &controlOK{})
}

// RequestQuery narrows the request log: to a caller (part of its address or of
// As-Customer), a part of the path, a status ("404", "4xx" or "dropped"), the requests
// after a Seq; Limit keeps the newest that many (0: 100).
type RequestQuery struct {
	Account, Path, Status string
	After                 int64
	Limit                 int
}

// Requests returns the request log, oldest first, as Emulator.Requests does, narrowed by q.
func (c *ControlClient) Requests(ctx context.Context, q RequestQuery) ([]Request, error) {
	v := url.Values{}
	for k, s := range map[string]string{"account": q.Account, "path": q.Path, "status": q.Status} {
		if s != "" {
			v.Set(k, s)
		}
	}
	if q.After > 0 {
		v.Set("after", strconv.FormatInt(q.After, 10))
	}
	if q.Limit > 0 {
		v.Set("limit", strconv.Itoa(q.Limit))
	}
	var out controlRequests
	err := c.call(ctx, http.MethodGet, "requests", v, nil, &out)
	return out.Requests, err
}

// Faults returns the faults standing, each with the id RemoveFault takes.
func (c *ControlClient) Faults(ctx context.Context) ([]ActiveFault, error) {
	var out controlFaults
	if err := c.call(ctx, http.MethodGet, "faults", nil, nil, &out); err != nil {
		return nil, err
	}
	fs := []ActiveFault{}
	for _, f := range out.Faults {
		fs = append(fs, f.fault())
	}
	return fs, nil
}

// RemoveFault removes one fault by its id.
func (c *ControlClient) RemoveFault(ctx context.Context, id int64) error {
	return c.call(ctx, http.MethodDelete, "faults/"+strconv.FormatInt(id, 10), nil, nil, &controlOK{})
}

// Accounts returns the newest limit accounts (0: 200), credentials masked, and how many
// there are.
func (c *ControlClient) Accounts(ctx context.Context, limit int) ([]AccountView, int, error) {
	var q url.Values
	if limit > 0 {
		q = url.Values{"limit": {strconv.Itoa(limit)}}
	}
	var out controlAccounts
	err := c.call(ctx, http.MethodGet, "accounts", q, nil, &out)
	return out.Accounts, out.Total, err
}

// Export writes the emulator's whole state to w, as Emulator.Snapshot does.
func (c *ControlClient) Export(ctx context.Context, w io.Writer) error {
	data, err := c.roundTrip(ctx, http.MethodGet, "state", nil, nil, maxSnapshotBytes+1)
	if err != nil {
		return err
	}
	if len(data) > maxSnapshotBytes {
		return fmt.Errorf("GET %sstate: the state is larger than %d bytes", controlRoot, maxSnapshotBytes)
	}
	_, err = w.Write(data)
	return err
}

// Import replaces the emulator's whole state with a document Export (or Snapshot)
// wrote, as Emulator.Restore does; a refused document is a *ControlError naming the part.
func (c *ControlClient) Import(ctx context.Context, r io.Reader) error {
	_, err := c.roundTrip(ctx, http.MethodPut, "state", nil, r, maxControlAnswer)
	return err
}

// Reset forgets every account, transaction, fault and delivery, and puts the clock back.
func (c *ControlClient) Reset(ctx context.Context) error {
	return c.call(ctx, http.MethodPost, "reset", nil, nil, &controlOK{})
}

// call sends body (nil for none) as JSON and decodes the answer into out.
func (c *ControlClient) call(ctx context.Context, method, path string, query url.Values, body, out any) error {
	var reqBody io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		reqBody = bytes.NewReader(b)
	}
	data, err := c.roundTrip(ctx, method, path, query, reqBody, maxControlAnswer)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("%s %s: the answer is not the JSON expected (is %s an emulator?): %w", method, c.root.JoinPath(path).Path, c.root.Host, err)
	}
	return nil
}

// roundTrip sends a request with a JSON body (nil for none) and returns the answer's
// body, at most limit bytes, or the *ControlError it is.
func (c *ControlClient) roundTrip(ctx context.Context, method, path string, query url.Values, body io.Reader, limit int64) ([]byte, error) {
	u := c.root.JoinPath(path)
	u.RawQuery = query.Encode()
	req, err := http.NewRequestWithContext(ctx, method, u.String(), body)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, limit))
	if err != nil {
		return nil, fmt.Errorf("%s %s: reading the answer: %w", method, u.Path, err)
	}
	if resp.StatusCode >= 300 {
		return nil, newControlError(method, u.Path, resp.StatusCode, data)
	}
	return data, nil
}

// newControlError reads an error body: {"error", "message"}, or {"errors": {...}} with
// messages at the leaves (the shapes errorResponse writes).
func newControlError(method, path string, status int, body []byte) *ControlError {
	e := &ControlError{Method: method, Path: path, StatusCode: status}
	var doc struct {
		Error   string         `json:"error"`
		Message string         `json:"message"`
		Errors  map[string]any `json:"errors"`
	}
	if json.Unmarshal(body, &doc) != nil {
		e.Message = strings.TrimSpace(string(body))
		if e.Message == "" {
			e.Message = http.StatusText(status)
		}
		return e
	}
	e.Code, e.Message = doc.Error, doc.Message
	e.Fields = fieldMessages("", doc.Errors, nil)
	return e
}

// fieldMessages lists "path: message" for the messages at the leaves of a validation
// error's tree, in the order of the sorted paths.
func fieldMessages(prefix string, v any, out []string) []string {
	switch v := v.(type) {
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(v)) {
			out = fieldMessages(strings.TrimPrefix(prefix+"."+k, "."), v[k], out)
		}
	case []any:
		for _, m := range v {
			out = append(out, fmt.Sprintf("%s: %v", prefix, m))
		}
	}
	return out
}
