package escrow

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
)

// WebhooksService registers the URLs the API calls when a transaction changes (spec part 6).
//
//	POST   /customer/me/webhook                    Create
//	GET    /customer/{me|id}/webhook               List
//	DELETE /customer/{me|id}/webhook/{webhook_id}  Delete
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

// Create registers a URL for the caller's account. It must be an absolute http(s) URL.
func (s *WebhooksService) Create(ctx context.Context, rawURL string, opts ...RequestOption) (*Webhook, error) {
	if u, err := url.Parse(rawURL); err != nil || !u.IsAbs() || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return nil, fmt.Errorf("%w: webhook URL %q must be an absolute http(s) URL", ErrInvalidArgument, rawURL)
	}
	return fetch[Webhook](ctx, s.client, call{method: http.MethodPost, pattern: "customer/me/webhook", body: &Webhook{URL: rawURL}, opts: opts})
}

// List returns a customer's webhooks.
func (s *WebhooksService) List(ctx context.Context, customer CustomerRef, opts ...RequestOption) (*Webhooks, error) {
	return fetch[Webhooks](ctx, s.client, call{method: http.MethodGet, pattern: "customer/{customer_id}/webhook", params: []any{customer}, opts: opts})
}

// Delete removes a webhook (204); it is not called again.
func (s *WebhooksService) Delete(ctx context.Context, customer CustomerRef, id int64, opts ...RequestOption) error {
	return s.client.send(ctx, call{method: http.MethodDelete, pattern: "customer/{customer_id}/webhook/{webhook_id}", params: []any{customer, id}, opts: opts})
}
