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

// Reset forgets every account, transaction, fault and delivery, and puts the clock back.
func (c *ControlClient) Reset(ctx context.Context) error {
	return c.call(ctx, http.MethodPost, "reset", nil, nil, &controlOK{})
}

// call sends body (nil for none) as JSON and decodes the answer into out.
func (c *ControlClient) call(ctx context.Context, method, path string, query url.Values, body, out any) error {
	u := c.root.JoinPath(path)
	u.RawQuery = query.Encode()
	req, err := newControlRequest(ctx, method, u.String(), body)
	if err != nil {
		return err
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxControlAnswer))
	if err != nil {
		return fmt.Errorf("%s %s: reading the answer: %w", method, u.Path, err)
	}
	if resp.StatusCode >= 300 {
		return newControlError(method, u.Path, resp.StatusCode, data)
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("%s %s: the answer is not the JSON expected (is %s an emulator?): %w", method, u.Path, c.root.Host, err)
	}
	return nil
}

// newControlRequest builds a request that asks for JSON and sends body (nil for none) as
// JSON.
func newControlRequest(ctx context.Context, method, target string, body any) (*http.Request, error) {
	var reqBody io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, err
		}
		reqBody = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, target, reqBody)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	return req, nil
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
