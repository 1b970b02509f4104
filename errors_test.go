package escrow

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestErrorForEveryStatusOfTheSpec(t *testing.T) {
	tests := []struct {
		status   int
		body     string
		sentinel error
		message  string
		code     string
	}{
		{400, `{"error": "invalid_action", "message": "cannot ship: not funded"}`, nil, "cannot ship: not funded", "invalid_action"},
		{401, `{"error": "Authentication required"}`, ErrUnauthorized, "Authentication required", ""},
		{403, `{"message": "Forbidden"}`, ErrForbidden, "Forbidden", ""},
		{404, `{"error": {"detail": "no such transaction"}}`, ErrNotFound, `{"detail":"no such transaction"}`, ""},
		{422, `{"errors": {"currency": ["Not a valid choice."]}}`, nil, "Unprocessable Entity", ""},
		{429, `{"error": "Too many requests"}`, ErrRateLimited, "Too many requests", ""},
		{500, `{"message": "Internal error", "error": "internal"}`, nil, "Internal error", "internal"},
	}
	for _, tt := range tests {
		t.Run(http.StatusText(tt.status), func(t *testing.T) {
			c, mt := setup(t, WithMaxRetries(0))
			mt.RegisterResponder("GET", testBase+"transaction/7", respond(tt.status, tt.body))
			_, err := c.Transactions.Get(context.Background(), 7)
			var apiErr *APIError
			if !errors.As(err, &apiErr) {
				t.Fatalf("error %T %v is not an *APIError", err, err)
			}
			if apiErr.StatusCode != tt.status || apiErr.Method != "GET" || apiErr.Path != "/2017-09-01/transaction/7" {
				t.Errorf("APIError = %d %s %s", apiErr.StatusCode, apiErr.Method, apiErr.Path)
			}
			if apiErr.Message != tt.message || apiErr.Code != tt.code {
				t.Errorf("Message, Code = %q, %q; want %q, %q", apiErr.Message, apiErr.Code, tt.message, tt.code)
			}
			if string(apiErr.Body) != tt.body {
				t.Errorf("Body = %s", apiErr.Body)
			}
			for _, s := range []error{ErrUnauthorized, ErrForbidden, ErrNotFound, ErrRateLimited} {
				if got := errors.Is(err, s); got != (s == tt.sentinel) {
					t.Errorf("errors.Is(err, %v) = %v", s, got)
				}
			}
			if !strings.Contains(err.Error(), "GET /2017-09-01/transaction/7") {
				t.Errorf("Error() = %q does not name the request", err)
			}
		})
	}
}

func TestErrorFromBodiesThatAreNotJSON(t *testing.T) {
	tests := []struct {
		name, body, contentType, message string
	}{
		{"empty", "", "", "Bad Gateway"},
		{"html", "<!DOCTYPE html><html><head><title>502 Bad Gateway &amp; co</title></head><body><h1>nginx</h1></body></html>", "text/html", "502 Bad Gateway & co"},
		{"html without title", "<html><body>oops</body></html>", "text/html", "Bad Gateway"},
		{"plain text", "\n\nupstream connect error\nreset reason: overflow", "text/plain", "upstream connect error"},
		{"truncated json", `{"message": "half`, "application/json", `{"message": "half`},
		{"json array", `["a", "b"]`, "application/json", `["a", "b"]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, mt := setup(t, WithMaxRetries(0))
			mt.RegisterResponder("POST", testBase+"transaction", respond(502, tt.body, "Content-Type", tt.contentType))
			_, err := c.Transactions.Create(context.Background(), &CreateTransactionRequest{Currency: USD})
			var apiErr *APIError
			if !errors.As(err, &apiErr) {
				t.Fatalf("error %T %v is not an *APIError", err, err)
			}
			if apiErr.StatusCode != 502 || apiErr.Message != tt.message || string(apiErr.Body) != tt.body {
				t.Errorf("APIError = %d %q body %q", apiErr.StatusCode, apiErr.Message, apiErr.Body)
			}
		})
	}
}

func TestErrorBodyIsCappedAtOneMebibyte(t *testing.T) {
	c, mt := setup(t, WithMaxRetries(0))
	huge := `{"message": "big", "pad": "` + strings.Repeat("x", 3<<20) + `"}`
	mt.RegisterResponder("GET", testBase+"transaction/1", respond(500, huge))
	_, err := c.Transactions.Get(context.Background(), 1)
	var apiErr *APIError
	if !errors.As(err, &apiErr) || len(apiErr.Body) != 1<<20 {
		t.Fatalf("err = %v, body length %d", err, len(apiErr.Body))
	}
}

// The spec's part 7 shape, nested at every depth it describes.
const validationBody = `{"errors": {
	"parties": {"0": ["A transaction must have exactly one seller."], "1": ["Unknown role."]},
	"items": {
		"0": {
			"type": ["General merchandise, domain name, motor vehicle and milestone items cannot be mixed."],
			"extra_attributes": {"year": ["This field is required."]},
			"inspection_period": ["Inspection periods must match."],
			"schedule": {"1": {"amount": ["Must be positive."], "payer_customer": ["Not a party."]}},
			"fees": {"all": ["Fee splits must sum to 1.0."], "0": {"split": ["Allowed values are 0.5 and 1."]}}
		},
		"2": {"fees": "The fee schedule must be identical across items."}
	},
	"reference": ["This reference is already in use."],
	"currency": ["Not a valid choice."],
	"odd": {"count": 3, "flag": true, "nothing": null, "empty": []}
}}`

func TestValidationErrorFlattensEveryDepthInOrder(t *testing.T) {
	c, mt := setup(t)
	mt.RegisterResponder("POST", testBase+"transaction", respond(422, validationBody))
	_, err := c.Transactions.Create(context.Background(), &CreateTransactionRequest{Currency: USD})
	var ve *ValidationError
	if !errors.As(err, &ve) {
		t.Fatalf("error %T %v is not a *ValidationError", err, err)
	}
	want := []string{
		"parties[0]", "parties[1]",
		"items[0].type", "items[0].extra_attributes.year", "items[0].inspection_period",
		"items[0].schedule[1].amount", "items[0].schedule[1].payer_customer",
		"items[0].fees.all", "items[0].fees[0].split",
		"items[2].fees",
		"reference", "currency",
	}
	fields := ve.Fields()
	if len(fields) != len(want) {
		t.Fatalf("got %d fields %v, want %d", len(fields), fields, len(want))
	}
	for i, f := range fields {
		if f.Path != want[i] || len(f.Messages) == 0 {
			t.Errorf("field %d = %q %v, want %q", i, f.Path, f.Messages, want[i])
		}
	}
	if got := ve.Field("items[0].extra_attributes.year"); len(got) != 1 || got[0] != "This field is required." {
		t.Errorf("Field(year) = %v", got)
	}
	if ve.StatusCode != 422 || !strings.Contains(err.Error(), "parties[0]: A transaction must have exactly one seller.") ||
		!strings.Contains(err.Error(), "and 9 more") {
		t.Errorf("Error() = %q", err)
	}
	var apiErr *APIError
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 422 {
		t.Error("a ValidationError does not give up its *APIError")
	}
}

func TestValidationShapeOnOtherStatusesAndTaxNumbers(t *testing.T) {
	c, mt := setup(t)
	mt.RegisterResponder("GET", testBase+"customer/me", respond(400, `{"errors": {"type": ["Invalid."], "number": ["Too short."]}}`))
	_, err := c.Customers.Get(context.Background(), Me)
	var ve *ValidationError
	if !errors.As(err, &ve) || len(ve.Fields()) != 2 || ve.Fields()[1].Path != "number" {
		t.Fatalf("err = %#v", err)
	}
}

func TestFlattenErrorsSurvivesBrokenShapes(t *testing.T) {
	for _, raw := range []string{`{"a": ["x"], "b": {`, `"just a string"`, `[1, 2]`, `{}`, strings.Repeat(`{"a":`, 100) + `["deep"]` + strings.Repeat("}", 100)} {
		_ = flattenErrors([]byte(raw)) // must not panic
	}
	if got := flattenErrors([]byte(`{"a": ["x"], "b": {`)); len(got) != 1 || got[0].Path != "a" {
		t.Errorf("fields before a fault were lost: %v", got)
	}
}

// TestRateLimitErrorSaysWhatHappened: a 429 and a call held back read differently, and a
// wait is named only when the server gave one.
func TestRateLimitErrorSaysWhatHappened(t *testing.T) {
	resp := &APIError{StatusCode: 429, Method: "GET", Path: "/t/1", Message: "slow down"}
	tests := []struct {
		err  *RateLimitError
		want string
	}{
		{&RateLimitError{Method: "GET", Path: "/t/1", Response: resp}, "escrow: GET /t/1: 429 Too Many Requests"},
		{&RateLimitError{Method: "GET", Path: "/t/1", Response: resp, RetryAfter: 2 * time.Second}, "escrow: GET /t/1: 429 Too Many Requests (retry after 2s)"},
		{&RateLimitError{Method: "GET", Path: "/t/1"}, "escrow: GET /t/1: held back: no requests remaining"},
		{&RateLimitError{Method: "GET", Path: "/t/1", RetryAfter: time.Second}, "escrow: GET /t/1: held back: no requests remaining (retry after 1s)"},
	}
	for _, tt := range tests {
		if got := tt.err.Error(); got != tt.want {
			t.Errorf("Error() = %q, want %q", got, tt.want)
		}
		if !errors.Is(tt.err, ErrRateLimited) {
			t.Errorf("%v does not match ErrRateLimited", tt.err)
		}
		var apiErr *APIError
		if got := errors.As(tt.err, &apiErr); got != (tt.err.Response != nil) || (got && apiErr != resp) {
			t.Errorf("%v: errors.As(*APIError) = %v, %v", tt.err, got, apiErr)
		}
		if errors.Is(tt.err, ErrNotFound) || errors.Is(tt.err, ErrMalformedResponse) {
			t.Errorf("%v matches another sentinel", tt.err)
		}
	}
}

// TestErrorTypesMatchOnlyTheirSentinel: each error type matches its own sentinel and no
// other, and unwraps to its cause.
func TestErrorTypesMatchOnlyTheirSentinel(t *testing.T) {
	cause := errors.New("unexpected end of JSON input")
	de := &DecodeError{Method: "GET", Path: "/t/1", StatusCode: 200, Err: cause}
	if !errors.Is(de, ErrMalformedResponse) || !errors.Is(de, cause) || errors.Is(de, ErrRateLimited) {
		t.Errorf("DecodeError matches wrongly: %v", de)
	}
	if !strings.Contains(de.Error(), "GET /t/1: 200") || !strings.Contains(de.Error(), cause.Error()) {
		t.Errorf("DecodeError.Error() = %q", de)
	}
	te := &TransportError{Method: "POST", Path: "/t", Err: context.Canceled}
	if !errors.Is(te, context.Canceled) || errors.Is(te, ErrMalformedResponse) {
		t.Errorf("TransportError matches wrongly: %v", te)
	}
	for _, status := range []int{200, 400, 500} {
		e := &APIError{StatusCode: status}
		if e.Is(nil) {
			t.Errorf("APIError %d matches nil", status)
		}
		for _, s := range []error{ErrUnauthorized, ErrForbidden, ErrNotFound, ErrRateLimited, ErrMalformedResponse} {
			if errors.Is(e, s) {
				t.Errorf("APIError %d matches %v", status, s)
			}
		}
	}
}

// TestValidationErrorListsThreeFieldsThenCounts: Error() names up to three fields whole and
// counts the rest, naming none of them; with exactly three there is nothing to count.
func TestValidationErrorListsThreeFieldsThenCounts(t *testing.T) {
	for _, tt := range []struct {
		body string
		want string
	}{
		{`{"errors": {"a": ["x"], "b": ["y"], "c": ["z"]}}`, "422 invalid: a: x, b: y, c: z"},
		{`{"errors": {"a": ["x"], "b": ["y"], "c": ["z"], "d": ["w"]}}`, "422 invalid: a: x, b: y, c: z, and 1 more"},
		{`{"errors": {"a": ["x"], "b": ["y"], "c": ["z"], "d": ["w"], "e": ["v"]}}`, "422 invalid: a: x, b: y, c: z, and 2 more"},
		{`{"errors": {"a": ["x", "v"]}}`, "422 invalid: a: x; v"},
	} {
		c, mt := setup(t, WithMaxRetries(0))
		mt.RegisterResponder("POST", testBase+"transaction", respond(422, tt.body))
		_, err := c.Transactions.Create(context.Background(), &CreateTransactionRequest{Currency: USD})
		var ve *ValidationError
		if !errors.As(err, &ve) {
			t.Fatalf("%s: %T %v", tt.body, err, err)
		}
		if !strings.HasSuffix(err.Error(), tt.want) {
			t.Errorf("Error() = %q, want it to end %q", err, tt.want)
		}
	}
}

// TestValidationErrorsNestUpTo32Deep: fields nested 32 objects deep are listed; at 33 the
// walk stops, so a hostile body cannot recurse without bound.
func TestValidationErrorsNestUpTo32Deep(t *testing.T) {
	nested := func(depth int) string {
		return strings.Repeat(`{"a":`, depth) + `["m"]` + strings.Repeat("}", depth)
	}
	want := strings.TrimSuffix(strings.Repeat("a.", 32), ".")
	if got := flattenErrors([]byte(nested(32))); len(got) != 1 || got[0].Path != want || got[0].Messages[0] != "m" {
		t.Errorf("32 deep: %v", got)
	}
	if got := flattenErrors([]byte(nested(33))); len(got) != 0 {
		t.Errorf("33 deep: %v, want nothing", got)
	}
}

// TestValidationErrorsSkipNumbersOfAnySize: a number where messages were expected is
// skipped, even one too large for a float64, and the fields after it are still listed.
func TestValidationErrorsSkipNumbersOfAnySize(t *testing.T) {
	got := flattenErrors([]byte(`{"count": 1e999, "big": {"n": -1e400}, "a": ["x"]}`))
	if len(got) != 1 || got[0].Path != "a" || got[0].Messages[0] != "x" {
		t.Errorf("fields = %v, want a: x", got)
	}
}

// TestLongMessageShownByItsBeginning: a message of a megabyte, plain or escaped, is shown
// as its first 500 bytes and an ellipsis, as a short one longer than 500 is: reading only
// its beginning changes nothing of what is shown.
func TestLongMessageShownByItsBeginning(t *testing.T) {
	for _, unit := range []string{"abc ", `\u00e9\u0041\n`, `\ud83d\ude00x`, "é"} {
		msg := `"  ` + strings.Repeat(unit, (1<<20)/len(unit)) + `"`
		var whole string
		if err := json.Unmarshal([]byte(msg), &whole); err != nil {
			t.Fatal(err)
		}
		if got, want := jsonText(json.RawMessage(msg)), truncate(strings.TrimSpace(whole), 500); got != want {
			t.Errorf("a megabyte of %q: %q, want %q", unit, got, want)
		}
	}
}
