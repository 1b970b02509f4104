package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"sync"
	"time"

	escrow "github.com/escrowkit/escrow-go"
	"github.com/escrowkit/escrow-go/webhook"
)

// runWebhooks is "escrow webhooks".
func runWebhooks(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return runGroup(ctx, "escrow webhooks", map[string]command{
		"list":   {summary: "list the account's webhooks", run: runWebhooksList},
		"add":    {summary: "register a URL the API will post events to", run: runWebhooksAdd},
		"rm":     {summary: "remove a webhook by id", run: runWebhooksRemove},
		"listen": {summary: "receive webhooks here and print the events once confirmed", run: runWebhooksListen},
	}, args, stdout, stderr)
}

// runWebhooksList is "escrow webhooks list".
func runWebhooksList(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	const name = "escrow webhooks list"
	fs := newFlagSet(name, "escrow webhooks list [api flags]", stderr)
	var api apiFlags
	api.register(fs, false)
	if code, ok := parseNone(fs, name, args, stderr); !ok {
		return code
	}
	client, release, err := api.connect(stderr)
	if err != nil {
		return exitCode(stderr, name, err)
	}
	defer release()
	hooks, err := client.Webhooks.List(ctx, escrow.Me)
	if err != nil {
		return exitCode(stderr, name, err)
	}
	return api.print(stdout, stderr, name, hooks, func(w io.Writer) {
		tw := newTable(w)
		fmt.Fprintln(tw, "ID\tURL")
		for _, h := range hooks.Webhooks {
			fmt.Fprintf(tw, "%d\t%s\n", h.ID, h.URL)
		}
		tw.Flush()
	})
}

// runWebhooksAdd is "escrow webhooks add URL".
func runWebhooksAdd(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	const name = "escrow webhooks add"
	fs := newFlagSet(name, "escrow webhooks add URL [api flags]", stderr)
	var api apiFlags
	api.register(fs, false)
	positional, err := parseFlags(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err == nil {
		err = checkWebhookURL(positional)
	}
	if err != nil {
		return exitCode(stderr, name, err)
	}
	client, release, err := api.connect(stderr)
	if err != nil {
		return exitCode(stderr, name, err)
	}
	defer release()
	h, err := client.Webhooks.Create(ctx, escrow.Me, positional[0])
	if err != nil {
		return exitCode(stderr, name, err)
	}
	return api.print(stdout, stderr, name, h, func(w io.Writer) { fmt.Fprintf(w, "Added webhook %d: %s\n", h.ID, h.URL) })
}

// checkWebhookURL wants one absolute http(s) URL, the only kind the API can call.
func checkWebhookURL(positional []string) error {
	if len(positional) != 1 {
		return usagef("want one URL, got %d arguments", len(positional))
	}
	u, err := url.Parse(positional[0])
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return usagef("%q is not an absolute http or https URL", positional[0])
	}
	return nil
}

// runWebhooksRemove is "escrow webhooks rm ID". It prints nothing with --json: the API
// answers 204 with no body.
func runWebhooksRemove(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	const name = "escrow webhooks rm"
	fs := newFlagSet(name, "escrow webhooks rm ID [api flags]", stderr)
	var api apiFlags
	api.register(fs, false)
	positional, err := parseFlags(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	var id int64
	if err == nil {
		if len(positional) != 1 {
			err = usagef("want one webhook id, got %d arguments", len(positional))
		} else {
			id, err = parseID("webhook id", positional[0])
		}
	}
	if err != nil {
		return exitCode(stderr, name, err)
	}
	client, release, err := api.connect(stderr)
	if err != nil {
		return exitCode(stderr, name, err)
	}
	defer release()
	if err := client.Webhooks.Delete(ctx, escrow.Me, id); err != nil {
		return exitCode(stderr, name, err)
	}
	if !api.json {
		fmt.Fprintf(stdout, "Removed webhook %d.\n", id)
	}
	return 0
}

// runWebhooksListen is "escrow webhooks listen": a receiver for the account's webhooks.
// Each delivery is confirmed by fetching its transaction before it is printed (deliveries
// are unsigned), repeated ones are dropped, and a reconciler re-reads ongoing transactions
// so that deliveries the API lost (it never retries) still show. It stops on SIGINT or
// SIGTERM, after the events already received are printed.
func runWebhooksListen(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	const name = "escrow webhooks listen"
	fs := newFlagSet(name, "escrow webhooks listen [--addr host:port] [--reconcile interval] [api flags]", stderr)
	var api apiFlags
	api.register(fs, false)
	addr := fs.String("addr", ":8080", "`host:port` to receive deliveries on (port 0 picks a free one)")
	every := fs.Duration("reconcile", 5*time.Minute, "look for lost deliveries this often (0: never)")
	if code, ok := parseNone(fs, name, args, stderr); !ok {
		return code
	}
	if *every < 0 {
		return exitCode(stderr, name, usagef("--reconcile must not be negative"))
	}
	client, release, err := api.connect(stderr)
	if err != nil {
		return exitCode(stderr, name, err)
	}
	defer release()
	level := slog.LevelInfo
	if api.verbose {
		level = slog.LevelDebug
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))
	p := &eventPrinter{w: stdout, json: api.json}
	return exitCode(stderr, name, listen(ctx, client, *addr, *every, p, stderr, log))
}

// shutdownWait bounds how long listen waits, when stopping, for events still being
// confirmed.
const shutdownWait = 10 * time.Second

// listen serves a webhook.Handler on addr until ctx ends, then shuts down: the HTTP server
// first, so that nothing new arrives, then the handler, which finishes the queued events.
func listen(ctx context.Context, client *escrow.Client, addr string, every time.Duration, p *eventPrinter, stderr io.Writer, log *slog.Logger) error {
	h := webhook.NewHandler(client, p.callback, webhook.Options{Logger: log})
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	hs := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelDebug)}
	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()
	fmt.Fprintf(stderr, "escrow webhooks listen: listening on http://%s/ for %s's webhooks\n", ln.Addr(), client.BaseURL())

	var wg sync.WaitGroup
	if every > 0 {
		wg.Go(func() {
			// It logs its own failures and tries again at the next tick.
			h.RunReconciler(ctx, every)
		})
	}
	var serveErr error
	select {
	case <-ctx.Done():
	case serveErr = <-served:
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownWait)
	defer cancel()
	err = errors.Join(hs.Shutdown(sctx), h.Shutdown(sctx))
	wg.Wait()
	if serveErr == nil {
		serveErr = <-served
	}
	if !errors.Is(serveErr, http.ErrServerClosed) {
		err = errors.Join(serveErr, err)
	}
	return err
}

// eventPrinter prints confirmed events, one line each, from the handler's goroutines.
type eventPrinter struct {
	mu   sync.Mutex
	w    io.Writer
	json bool
}

// listenedEvent is an event as "listen --json" prints it, one JSON object per line.
type listenedEvent struct {
	Event         escrow.EventName        `json:"event"`
	EventType     escrow.EventType        `json:"event_type"`
	TransactionID int64                   `json:"transaction_id"`
	ItemIDs       []int64                 `json:"item_ids,omitempty"`
	Source        webhook.Source          `json:"source"`
	State         escrow.TransactionState `json:"state"`
	Transaction   *escrow.Transaction     `json:"transaction"`
}

// callback is the webhook.Callback. A failed write is returned so the handler retries it.
func (p *eventPrinter) callback(_ context.Context, ev webhook.ConfirmedEvent) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	st := ev.Transaction.State()
	if p.json {
		b, err := json.Marshal(listenedEvent{
			Event: ev.Name, EventType: ev.EventType, TransactionID: ev.TransactionID,
			ItemIDs: ev.ItemIDs, Source: ev.Source, State: st, Transaction: ev.Transaction,
		})
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(p.w, "%s\n", b)
		return err
	}
	line := fmt.Sprintf("%s  transaction %d  %s", time.Now().UTC().Format(time.RFC3339), ev.TransactionID, ev.Name)
	if len(ev.ItemIDs) > 0 {
		line += " (item " + joinIDs(ev.ItemIDs) + ")"
	}
	line += "  now " + string(st)
	if ev.Source == webhook.FromReconcile {
		line += "  [delivery lost; found by reconciling]"
	}
	_, err := fmt.Fprintln(p.w, line)
	return err
}
