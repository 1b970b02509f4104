// Package hookguard shields a caller from the observer hooks it calls: the SDK's
// escrow.Observer and the webhook receiver's webhook.Observer are code the application
// owns, run on the SDK's own path (a call, a delivery's confirmation). A panic in one must
// not end the call, nor leave a lock held, nor crash the process; it is recovered and
// logged, the first at Error level and the later ones at Debug, so that an observer failing
// on every call is seen once without flooding the log.
package hookguard

import (
	"context"
	"fmt"
	"log/slog"
	"runtime/debug"
	"sync/atomic"
)

// Guard recovers and logs the panics of one observer's hooks. It is safe for concurrent
// use; the zero value is not usable (see New).
type Guard struct {
	log   *slog.Logger
	msg   string
	scrub func(string) string
	// panicked is set at the first panic, logged at Error level; the later ones at Debug.
	panicked atomic.Bool
}

// New returns a Guard that logs to log with the message msg, after passing the panic's
// value and stack through scrub, which removes the credentials the caller holds: the value
// is the observer's own and observers are handed none, but whatever is logged is scrubbed
// all the same. A nil scrub leaves the text as it is.
func New(log *slog.Logger, msg string, scrub func(string) string) *Guard {
	if scrub == nil {
		scrub = func(s string) string { return s }
	}
	return &Guard{log: log, msg: msg, scrub: scrub}
}

// Survive recovers a panic of the hook named, and logs it. It must be deferred directly by
// the function that calls the hook (defer g.Survive("Name")), so that recover sees the
// panic.
func (g *Guard) Survive(hook string) {
	v := recover()
	if v == nil {
		return
	}
	level := slog.LevelDebug
	if g.panicked.CompareAndSwap(false, true) {
		level = slog.LevelError
	}
	if !g.log.Enabled(context.Background(), level) {
		return
	}
	g.log.LogAttrs(context.Background(), level, g.msg,
		slog.String("hook", hook), slog.String("panic", g.scrub(fmt.Sprint(v))),
		slog.String("stack", g.scrub(string(debug.Stack()))))
}

// Started runs a hook that returns a context, named hook: the context it returned, or ctx
// when it returned none or panicked.
func (g *Guard) Started(ctx context.Context, hook string, start func() context.Context) (hookCtx context.Context) {
	hookCtx = ctx
	defer g.Survive(hook)
	if got := start(); got != nil {
		hookCtx = got
	}
	return hookCtx
}
