package escrow

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestParseEvent(t *testing.T) {
	tests := []struct {
		name, method, contentType, body string
		status                          int // 0: accepted
		want                            Event
	}{
		{"delivery", "POST", "application/json", `{"event": "ship", "event_type": "transaction", "transaction_id": 29292}`, 0,
			Event{EventShip, EventTypeTransaction, 29292}},
		{"charset and no event_type", "POST", "application/json; charset=utf-8", `{"event": "payment_approved", "transaction_id": 7}`, 0,
			Event{EventPaymentApproved, EventTypeTransaction, 7}},
		{"no content type", "POST", "", `{"event": "agree", "event_type": "transaction", "transaction_id": 7}`, 0,
			Event{EventAgree, EventTypeTransaction, 7}},
		{"unknown event name", "POST", "application/json", `{"event": "offer_countered", "event_type": "transaction", "transaction_id": 7, "extra": 1}`, 0,
			Event{"offer_countered", EventTypeTransaction, 7}},
		{"GET", "GET", "application/json", `{}`, 405, Event{}},
		{"form", "POST", "application/x-www-form-urlencoded", `event=ship`, 415, Event{}},
		{"bad media type", "POST", "application/", `{}`, 415, Event{}},
		{"too large", "POST", "application/json", `{"event": "ship", "pad": "` + strings.Repeat("x", MaxEventBody) + `"}`, 413, Event{}},
		{"not JSON", "POST", "application/json", `ship 29292`, 400, Event{}},
		{"two values", "POST", "application/json", `{"event": "ship", "transaction_id": 1} {"event": "accept", "transaction_id": 1}`, 400, Event{}},
		{"id as string", "POST", "application/json", `{"event": "ship", "transaction_id": "29292"}`, 400, Event{}},
		{"no id", "POST", "application/json", `{"event": "ship"}`, 400, Event{}},
		{"negative id", "POST", "application/json", `{"event": "ship", "transaction_id": -4}`, 400, Event{}},
		{"no event", "POST", "application/json", `{"transaction_id": 4}`, 400, Event{}},
		{"empty", "POST", "application/json", ``, 400, Event{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest(tt.method, "/hook", strings.NewReader(tt.body))
			if tt.contentType != "" {
				r.Header.Set("Content-Type", tt.contentType)
			}
			ev, err := ParseEvent(r)
			if tt.status == 0 {
				if err != nil || *ev != tt.want {
					t.Fatalf("ParseEvent = %+v, %v; want %+v", ev, err, tt.want)
				}
				return
			}
			var pe *EventError
			if !errors.As(err, &pe) || pe.StatusCode != tt.status || !errors.Is(err, ErrInvalidEvent) || pe.Reason == "" {
				t.Fatalf("ParseEvent error = %#v, want status %d", err, tt.status)
			}
		})
	}
}

func TestParseEventWithoutBody(t *testing.T) {
	r := httptest.NewRequest("POST", "/hook", nil)
	r.Body = nil
	var pe *EventError
	if _, err := ParseEvent(r); !errors.As(err, &pe) || pe.StatusCode != http.StatusBadRequest {
		t.Fatalf("err = %v", err)
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
