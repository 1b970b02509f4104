package escrow

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
)

// WebhooksService registers the URLs the API calls when a transaction changes (spec part 6).
//
//	POST   /customer/{customer_id}/webhook               Create
//	GET    /customer/{customer_id}/webhook               List
//	DELETE /customer/{customer_id}/webhook/{webhook_id}  Delete
type WebhooksService service

// Webhook is a registered URL. The API POSTs {event, event_type, transaction_id} to it on
// every state change of the customer's transactions, with a 10 s timeout and no retry.
type Webhook struct {
	ID  int64  `json:"id,omitempty"`
	URL string `json:"url"`
}

// Webhooks is the answer of [WebhooksService.List].
type Webhooks struct {
	Webhooks []Webhook `json:"webhooks"`
}

// Create registers a URL for a customer's account, [Me] as a rule (the spec documents
// only that form). It must be an absolute http(s) URL.
func (s *WebhooksService) Create(ctx context.Context, customer CustomerRef, rawURL string, opts ...RequestOption) (*Webhook, error) {
	if u, err := url.Parse(rawURL); err != nil || !u.IsAbs() || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return nil, fmt.Errorf("%w: webhook URL %q must be an absolute http(s) URL", ErrInvalidArgument, rawURL)
	}
	// After an ambiguous failure the customer's webhooks are read before sending again.
	return s.settleWebhook(ctx, customer, rawURL, call{route: routeCreateWebhook, params: []any{customer}, body: &Webhook{URL: rawURL}, opts: opts})
}

// List returns a customer's webhooks.
func (s *WebhooksService) List(ctx context.Context, customer CustomerRef, opts ...RequestOption) (*Webhooks, error) {
	return fetch[Webhooks](ctx, s.client, call{route: routeListWebhooks, params: []any{customer}, opts: opts})
}

// Delete removes a webhook (204); it is not called again.
func (s *WebhooksService) Delete(ctx context.Context, customer CustomerRef, id int64, opts ...RequestOption) error {
	return s.client.send(ctx, call{route: routeDeleteWebhook, params: []any{customer, id}, opts: opts})
}

// Event is one webhook delivery: what happened to which transaction. Deliveries are not
// signed, so an Event proves nothing by itself; confirm it by fetching the transaction
// (package webhook does that for you).
type Event struct {
	// Name is what happened: the delivery's "event".
	Name          EventName `json:"event"`
	EventType     EventType `json:"event_type"`
	TransactionID int64     `json:"transaction_id"`
}

// MaxEventBody caps the body ParseEvent reads; real deliveries are under 200 bytes.
const MaxEventBody = 64 << 10

// ErrInvalidEvent matches every error of [ParseEvent].
var ErrInvalidEvent = errors.New("escrow: invalid webhook delivery")

// EventError says why a delivery was refused and which HTTP status answers it.
type EventError struct {
	StatusCode int // 405, 413, 415 or 400
	Reason     string
}

func (e *EventError) Error() string { return "escrow: invalid webhook delivery: " + e.Reason }

// Is matches ErrInvalidEvent.
func (e *EventError) Is(target error) bool { return target == ErrInvalidEvent }

// ParseEvent reads a webhook delivery: a POST with a JSON body of at most MaxEventBody
// bytes holding an event name and a positive transaction id. Unknown event names are
// accepted (the API adds them over time). Every refusal is an *EventError.
func ParseEvent(r *http.Request) (*Event, error) {
	if err := checkEventRequest(r); err != nil {
		return nil, err
	}
	body, err := readEventBody(r.Body)
	if err != nil {
		return nil, err
	}
	return decodeEvent(body)
}

// checkEventRequest refuses a delivery that is not a POST of JSON (a missing content type
// is taken for JSON).
func checkEventRequest(r *http.Request) error {
	if r.Method != http.MethodPost {
		return &EventError{http.StatusMethodNotAllowed, "method " + r.Method + ", want POST"}
	}
	if ct := r.Header.Get("Content-Type"); ct != "" {
		if mt, _, err := mime.ParseMediaType(ct); err != nil || mt != "application/json" {
			return &EventError{http.StatusUnsupportedMediaType, fmt.Sprintf("content type %q, want application/json", ct)}
		}
	}
	return nil
}

// readEventBody reads a delivery's body, refusing one over MaxEventBody.
func readEventBody(r io.Reader) ([]byte, error) {
	if r == nil {
		return nil, &EventError{http.StatusBadRequest, "no body"}
	}
	body, err := io.ReadAll(io.LimitReader(r, MaxEventBody+1))
	switch {
	case err != nil:
		return nil, &EventError{http.StatusBadRequest, "reading the body: " + err.Error()}
	case len(body) > MaxEventBody:
		return nil, &EventError{http.StatusRequestEntityTooLarge, fmt.Sprintf("body over %d bytes", MaxEventBody)}
	}
	return body, nil
}

// decodeEvent decodes a delivery's body: one JSON value naming an event and a positive
// transaction id.
func decodeEvent(body []byte) (*Event, error) {
	var ev Event
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(&ev); err != nil {
		return nil, &EventError{http.StatusBadRequest, "body is not an event: " + err.Error()}
	}
	if dec.More() {
		return nil, &EventError{http.StatusBadRequest, "body holds more than one JSON value"}
	}
	switch {
	case ev.TransactionID <= 0:
		return nil, &EventError{http.StatusBadRequest, "no positive transaction_id"}
	case ev.Name == "":
		return nil, &EventError{http.StatusBadRequest, "no event name"}
	case ev.EventType == "":
		ev.EventType = EventTypeTransaction // the only type there is; tolerate its absence
	}
	return &ev, nil
}
