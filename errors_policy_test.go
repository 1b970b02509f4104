package escrow

// Error policies that mutation testing (scripts/mutate errors.go) found unpinned: what each
// error type says and matches, and the edges of the validation listing and of the summary of
// a body that is not JSON.

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

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
