package escrow

// Retry-layer policies that mutation testing (scripts/mutate ratelimit.go) found unpinned:
// what a retried call logs, and what it says of its outcome when cancelled between attempts.

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/escrowkit/escrow-go/internal/logtest"
)

// TestRetriesAreLogged: with a Debug logger, every attempt's failure or status and every
// retry's wait is logged, and a transport error's text is logged without the key it echoes.
func TestRetriesAreLogged(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var logs logtest.Lines
		c, mt := setup(t, WithLogger(slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))))
		reset := &net.OpError{Op: "read", Net: "tcp", Err: errors.New("reset by peer (key " + testKey + ")")}
		mt.RegisterResponder("GET", testBase+"transaction/9", sequence(fail(reset), respond(503, `{}`, "Retry-After", "2"), respond(200, `{"id": 9}`)))
		if _, err := c.Transactions.Get(context.Background(), 9); err != nil {
			t.Fatal(err)
		}
		text := logs.String()
		for _, want := range []string{
			`msg="escrow: request failed"`, `reset by peer`, `msg="escrow: response"`, `status=503`,
			`status=200`, `msg="escrow: retrying"`, `wait=2s`,
		} {
			if !strings.Contains(text, want) {
				t.Errorf("the log lacks %s:\n%s", want, text)
			}
		}
		if n := strings.Count(text, `msg="escrow: retrying"`); n != 2 {
			t.Errorf("%d retries logged, want 2:\n%s", n, text)
		}
		if strings.Contains(text, testKey) {
			t.Errorf("the key is in the log:\n%s", text)
		}
	})
}

// TestCancelledAttemptIsNotRetried: a call whose context ends during an attempt stops there:
// no retry is announced, and the error is the context's.
func TestCancelledAttemptIsNotRetried(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var logs logtest.Lines
		c, mt := setup(t, WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
		ctx, cancel := context.WithCancel(context.Background())
		mt.RegisterResponder("GET", testBase+"transaction/9", func(req *http.Request) (*http.Response, error) {
			cancel()
			return respond(503, `{}`)(req)
		})
		if _, err := c.Transactions.Get(ctx, 9); !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v, want context.Canceled", err)
		}
		if n := logs.Count("retrying"); n != 0 {
			t.Errorf("a cancelled call announced %d retries", n)
		}
	})
}

// TestServerErrorThenCancelLeavesTheOutcomeUnknown: a DELETE answered 503 may have been
// carried out; cancelled while waiting to retry, the call says its outcome is unknown.
func TestServerErrorThenCancelLeavesTheOutcomeUnknown(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, mt := setup(t)
		mt.RegisterResponder("DELETE", testBase+"transaction/9", respond(503, `{}`, "Retry-After", "5"))
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		err := doMethod(ctx, c, "DELETE")
		var te *TransportError
		if !errors.As(err, &te) || !te.OutcomeUnknown {
			t.Errorf("err = %#v, want a *TransportError with OutcomeUnknown", err)
		}
	})
}

// TestHeldCallIsLogged: a call held for an exhausted endpoint says so at Info, with the wait.
func TestHeldCallIsLogged(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var logs logtest.Lines
		c, mt := setup(t, WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
		mt.RegisterResponder("GET", testBase+"transaction/9", respond(200, `{"id": 9}`, "RateLimit-Remaining", "0", "RateLimit-Reset", "3"))
		for range 2 {
			if _, err := c.Transactions.Get(context.Background(), 9); err != nil {
				t.Fatal(err)
			}
		}
		if n := logs.Count(`msg="escrow: holding call, no requests remaining"`); n != 1 || logs.Count("wait=3s") != 1 {
			t.Errorf("the held call logged %d holds:\n%s", n, logs.String())
		}
	})
}
