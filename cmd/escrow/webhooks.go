package main

import (
	"bytes"
	"cmp"
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
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	escrow "github.com/escrowkit/escrow-go"
	"github.com/escrowkit/escrow-go/internal/prommetrics"
	"github.com/escrowkit/escrow-go/webhook"
	"github.com/escrowkit/escrow-go/webhook/sqlstore"
)

// webhooksCommands are the subcommands of "escrow webhooks"; main.go's command table
// holds them, so dispatch and -h read the same list.
var webhooksCommands = map[string]command{
	"list":   {summary: "list the account's webhooks", run: runWebhooksList},
	"add":    {args: "URL", summary: "register a URL the API will post events to", run: runWebhooksAdd},
	"rm":     {args: "ID", summary: "remove a webhook by id", run: runWebhooksRemove},
	"listen": {summary: "receive webhooks here and print the events once confirmed (--store, --register, --json)", run: runWebhooksListen},
}

// runWebhooksList is "escrow webhooks list". A URL's delivery secret is shown as SECRET
// (webhook.MaskURL), in the table and in --json, unless --show-secrets.
func runWebhooksList(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	var show bool
	return apiCommand(ctx, "escrow webhooks list", "escrow webhooks list", args, stdout, stderr, false, showSecretsFlag(&show), want(),
		func(ctx context.Context, client *escrow.Client, opts []escrow.RequestOption) (any, func(io.Writer), error) {
			hooks, err := client.Webhooks.List(ctx, escrow.Me, opts...)
			if err != nil {
				return nil, nil, err
			}
			if !show {
				for i := range hooks.Webhooks {
					hooks.Webhooks[i].URL = webhook.MaskURL(hooks.Webhooks[i].URL)
				}
			}
			return hooks, func(w io.Writer) {
				tw := newTable(w)
				fmt.Fprintln(tw, "ID\tURL")
				for _, h := range hooks.Webhooks {
					fmt.Fprintf(tw, "%d\t%s\n", h.ID, h.URL)
				}
				tw.Flush()
			}, nil
		})
}

// showSecretsFlag registers --show-secrets: a delivery secret in a URL is a credential,
// and terminals and CI logs keep what is printed.
func showSecretsFlag(show *bool) func(fs *flag.FlagSet) {
	return func(fs *flag.FlagSet) {
		fs.BoolVar(show, "show-secrets", false, "print webhook URLs whole, their delivery secrets included (shown as SECRET otherwise)")
	}
}

// runWebhooksAdd is "escrow webhooks add URL". The URL is printed back as list prints it.
// A URL that carries a delivery secret is a credential, which a command line shows every
// user of the machine (ps): "-" reads the URL from standard input instead.
func runWebhooksAdd(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	var hookURL string
	var show bool
	return apiCommand(ctx, "escrow webhooks add", "escrow webhooks add URL|-\n\n- reads the URL from standard input, where a delivery secret in it stays off the command line", args, stdout, stderr, false, showSecretsFlag(&show),
		func(positional []string) error {
			if len(positional) == 1 && positional[0] == "-" {
				data, err := readFileOrStdin("-")
				if err != nil {
					return usagef("reading the URL from standard input: %v", err)
				}
				positional = []string{strings.TrimSpace(string(data))}
				if !absoluteHTTP(positional[0]) {
					// Not quoted: what was piped in may hold a secret.
					return usagef("standard input holds no absolute http or https URL")
				}
			} else if len(positional) == 1 && webhook.MaskURL(positional[0]) != positional[0] {
				fmt.Fprintln(stderr, "escrow webhooks add: warning: the URL's delivery secret on the command line is visible to every user of this machine (ps) and kept in shell history: give - and the URL on standard input")
			}
			if err := checkWebhookURL(positional); err != nil {
				return err
			}
			hookURL = positional[0]
			return nil
		},
		func(ctx context.Context, client *escrow.Client, opts []escrow.RequestOption) (any, func(io.Writer), error) {
			h, err := client.Webhooks.Create(ctx, escrow.Me, hookURL, opts...)
			if err != nil {
				return nil, nil, err
			}
			if !show {
				h.URL = webhook.MaskURL(h.URL)
			}
			return h, func(w io.Writer) { fmt.Fprintf(w, "Added webhook %d: %s\n", h.ID, h.URL) }, nil
		})
}

// checkWebhookURL wants one absolute http(s) URL, the only kind the API can call.
func checkWebhookURL(positional []string) error {
	if len(positional) != 1 {
		return usagef("want one URL, got %d arguments", len(positional))
	}
	u, err := url.Parse(positional[0])
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return usagef("%q is not an absolute http or https URL", webhook.MaskURL(positional[0]))
	}
	return nil
}

// runWebhooksRemove is "escrow webhooks rm ID". It prints nothing with --json: the API
// answers 204 with no body.
func runWebhooksRemove(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	var id int64
	return apiCommand(ctx, "escrow webhooks rm", "escrow webhooks rm ID", args, stdout, stderr, false, nil,
		func(positional []string) (err error) {
			if err = want("a webhook id")(positional); err == nil {
				id, err = parseID("webhook id", positional[0])
			}
			return err
		},
		func(ctx context.Context, client *escrow.Client, opts []escrow.RequestOption) (any, func(io.Writer), error) {
			err := client.Webhooks.Delete(ctx, escrow.Me, id, opts...)
			return nil, func(w io.Writer) { fmt.Fprintf(w, "Removed webhook %d.\n", id) }, err
		})
}

// runWebhooksListen is "escrow webhooks listen": a receiver for the account's webhooks,
// and a replica of one when several listeners share a PostgreSQL --store. Each delivery is
// confirmed by fetching its transaction before it is handed over (deliveries are
// unsigned), repeated ones are dropped, and a reconciler re-reads transactions so that
// deliveries the API lost (it never retries) still show. With a delivery secret
// (ESCROW_WEBHOOK_SECRET, or the one --register keeps in the store) a delivery whose URL
// does not carry it is refused before any work. It stops on SIGINT or SIGTERM, after the
// events already received are handed over, and removes the webhook --register added.
func runWebhooksListen(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	const name = "escrow webhooks listen"
	fs, api, lf := listenFlagSet(name, stderr)
	if code, ok := parseNone(fs, name, args, stderr); !ok {
		return code
	}
	lf.storeFromEnvironment(fs, stderr)
	if err := lf.check(); err != nil {
		return exitCode(stderr, name, err)
	}
	if lf.metricsAddr != "" {
		lf.metrics = prommetrics.New()
		api.observer = lf.metrics
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
	if lf.forwardTo != "" {
		p.forward = &forwarder{url: lf.forwardTo, hc: &http.Client{Timeout: 10 * time.Second}}
	}
	return exitCode(stderr, name, listen(ctx, client, *lf, p, stderr, log))
}

// defaultListenAddr is loopback: listening on every interface takes an explicit --addr.
const defaultListenAddr = "127.0.0.1:8080"

// listenFlagSet defines the flags of "escrow webhooks listen".
func listenFlagSet(name string, stderr io.Writer) (*flag.FlagSet, *apiFlags, *listenFlags) {
	fs := newFlagSet(name, "escrow webhooks listen [--addr host:port] [--store dsn] [--register] [--forward-to url] [--reconcile interval] [--max-conns n] [--metrics-addr host:port] [api flags]", stderr)
	api := new(apiFlags)
	api.register(fs, false)
	lf := &listenFlags{limits: defaultLimits}
	fs.StringVar(&lf.addr, "addr", defaultListenAddr, "`host:port` to receive deliveries on (port 0 picks a free one); ':8080' listens on every interface")
	fs.DurationVar(&lf.every, "reconcile", 5*time.Minute, "look for lost deliveries this often (0: never)")
	fs.StringVar(&lf.store, "store", "memory", "where handed-over events and the delivery secret are kept: `dsn` memory (this process only), sqlite:PATH (survives restarts) or a postgres:// URL (shared by replicas); "+
		"default $"+envWebhookStore+", else memory. Keep a password out of it: PGPASSWORD, or the URL in $"+envWebhookStore)
	fs.BoolVar(&lf.register, "register", false, "register this listener's URL, carrying the delivery secret, as a webhook of the account on start, and remove it on exit")
	fs.StringVar(&lf.publicURL, "public-url", "", "the `URL` --register registers (with the secret appended), when the API reaches this listener elsewhere than at --addr (a tunnel)")
	fs.StringVar(&lf.forwardTo, "forward-to", "", "also POST each confirmed event as JSON to this local `URL`; a failure is retried")
	fs.IntVar(&lf.limits.conns, "max-conns", defaultLimits.conns, "connections open at once; more wait until one closes")
	fs.StringVar(&lf.metricsAddr, "metrics-addr", "", "serve the receiver's and the client's metrics for Prometheus at /metrics, and /healthz, on `host:port`")
	return fs, api, lf
}

// listenFlags are the receiver's own flags.
type listenFlags struct {
	addr, store, publicURL, forwardTo string
	every                             time.Duration
	register                          bool
	limits                            serverLimits // --max-conns; the timeouts are not flags
	// metricsAddr, when set, serves metrics, fed to metrics by the client and the handler.
	metricsAddr string
	metrics     *prommetrics.Metrics
}

// envWebhookStore stands in for --store, so that a PostgreSQL URL holding a password stays
// out of the command line, which every user of the machine can read (ps, /proc). A URL
// without a password also works: pgx takes the password from PGPASSWORD (or ~/.pgpass).
const envWebhookStore = "ESCROW_WEBHOOK_STORE"

// storeFromEnvironment takes --store from ESCROW_WEBHOOK_STORE when the flag was not
// given, and warns when the flag carries a password.
func (lf *listenFlags) storeFromEnvironment(fs *flag.FlagSet, stderr io.Writer) {
	if !isSet(fs, "store") {
		lf.store = cmp.Or(os.Getenv(envWebhookStore), lf.store)
		return
	}
	if u, err := url.Parse(lf.store); err == nil && u.User != nil {
		if _, ok := u.User.Password(); ok {
			fmt.Fprintf(stderr, "escrow webhooks listen: warning: the password in --store is visible to every user of this machine (ps): "+
				"set %s to the URL instead, or leave the password out of the URL and set PGPASSWORD\n", envWebhookStore)
		}
	}
}

func (lf *listenFlags) check() error {
	if lf.every < 0 {
		return usagef("--reconcile must not be negative")
	}
	if lf.limits.conns < 1 {
		return usagef("--max-conns must be at least 1")
	}
	if lf.store != "memory" && !strings.HasPrefix(lf.store, "sqlite:") && !strings.HasPrefix(lf.store, "postgres://") && !strings.HasPrefix(lf.store, "postgresql://") {
		return usagef("--store wants memory, sqlite:PATH or a postgres:// URL")
	}
	for flagName, v := range map[string]string{"--forward-to": lf.forwardTo, "--public-url": lf.publicURL} {
		if v != "" && !absoluteHTTP(v) {
			return usagef("%s wants an absolute http or https URL, got %q", flagName, v)
		}
	}
	if lf.publicURL != "" && !lf.register {
		return usagef("--public-url is only used with --register")
	}
	return nil
}

// absoluteHTTP reports whether v is an absolute http or https URL.
func absoluteHTTP(v string) bool {
	u, err := url.Parse(v)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}

// shutdownWait bounds how long listen waits, when stopping, for events still being
// confirmed.
const shutdownWait = 10 * time.Second

// storeOpenWait bounds how long listen waits for a database --store to answer.
const storeOpenWait = 15 * time.Second

// openStore opens the --store: nil closer for memory.
func openStore(ctx context.Context, dsn string) (webhook.Store, func() error, error) {
	if dsn == "memory" {
		return new(webhook.MemoryStore), func() error { return nil }, nil
	}
	ctx, cancel := context.WithTimeout(ctx, storeOpenWait)
	defer cancel()
	s, err := sqlstore.Open(ctx, dsn)
	if err != nil {
		return nil, nil, fmt.Errorf("--store: %w", err)
	}
	return s, s.Close, nil
}

// listen serves a webhook.Handler on lf.addr until ctx ends, then shuts down: the webhook
// it registered first, then the HTTP server, so that nothing new arrives, then the
// handler, which finishes the queued events.
func listen(ctx context.Context, client *escrow.Client, lf listenFlags, p *eventPrinter, stderr io.Writer, log *slog.Logger) (err error) {
	store, closeStore, err := openStore(ctx, lf.store)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, closeStore()) }()
	if lf.metrics != nil {
		ms, merr := startMetrics(lf.metricsAddr, lf.metrics, store, client, log)
		if merr != nil {
			return merr
		}
		defer func() {
			sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownWait)
			defer cancel()
			err = errors.Join(err, ms.shutdown(sctx))
		}()
		fmt.Fprintf(stderr, "escrow webhooks listen: metrics on %s, health on %shealthz\n", ms.URL(), strings.TrimSuffix(ms.URL(), "metrics"))
	}
	secrets, err := listenSecrets(ctx, store, lf.register)
	if err != nil {
		return err
	}
	opts := webhook.Options{Logger: log, Store: store, Secrets: secrets}
	if lf.metrics != nil {
		opts.Observer = lf.metrics // a nil *Metrics would be a non-nil Observer
	}
	h := webhook.NewHandler(client, p.callback, opts)
	ln, err := net.Listen("tcp", lf.addr)
	if err != nil {
		return err
	}
	hs := newServer(h, lf.limits, log)
	served := make(chan error, 1)
	go func() { served <- hs.Serve(newLimitListener(ln, lf.limits.conns)) }()
	own := listenerURL(ln.Addr())

	var unregister func() error
	if lf.register {
		if unregister, err = register(ctx, client, h, current(secrets), cmp.Or(lf.publicURL, own), stderr); err != nil {
			hs.Close()
			<-served
			h.Shutdown(ctx)
			return err
		}
	}
	fmt.Fprintf(stderr, "escrow webhooks listen: listening on %s for %s's webhooks (store: %s; %s)\n", own, client.BaseURL(), storeKind(lf.store), doorKind(secrets))

	var wg sync.WaitGroup
	if lf.every > 0 {
		wg.Go(func() {
			// It logs its own failures and tries again at the next tick.
			h.RunReconciler(ctx, lf.every)
		})
	}
	var serveErr error
	select {
	case <-ctx.Done():
	case serveErr = <-served:
	}
	if unregister != nil {
		err = unregister()
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownWait)
	defer cancel()
	err = errors.Join(err, hs.Shutdown(sctx), h.Shutdown(sctx))
	wg.Wait()
	if serveErr == nil {
		serveErr = <-served
	}
	if !errors.Is(serveErr, http.ErrServerClosed) {
		err = errors.Join(serveErr, err)
	}
	return err
}

// doorKind says, for the start line, whether deliveries need a secret.
func doorKind(secrets []string) string {
	if len(secrets) > 0 {
		return "a delivery's URL must carry the delivery secret"
	}
	return "any delivery is taken (no delivery secret)"
}

// envWebhookSecret holds the delivery secrets of "webhooks listen", current first,
// separated by commas; it overrides the one kept in the store.
const envWebhookSecret = "ESCROW_WEBHOOK_SECRET"

// listenSecrets are the delivery secrets the listener requires: ESCROW_WEBHOOK_SECRET's,
// else the store's; with --register and neither, a new one is kept in the store, where
// replicas and restarts find it. None: deliveries need no secret (plain registrations).
func listenSecrets(ctx context.Context, store webhook.Store, register bool) ([]string, error) {
	if env := os.Getenv(envWebhookSecret); env != "" {
		secrets, err := webhook.ParseSecrets(env)
		if err != nil {
			return nil, usagef("%s: %v", envWebhookSecret, err)
		}
		return secrets, nil
	}
	if register {
		secrets, err := webhook.SharedSecrets(ctx, store)
		if err != nil {
			return nil, fmt.Errorf("--store: %w", err)
		}
		return secrets, nil
	}
	settings, ok := store.(webhook.Settings)
	if !ok {
		return nil, nil
	}
	kept, ok, err := settings.Setting(ctx, webhook.SecretsSetting)
	if err != nil || !ok {
		return nil, err
	}
	return webhook.ParseSecrets(kept)
}

// current is the secret a registration carries: the first.
func current(secrets []string) string {
	if len(secrets) == 0 {
		return ""
	}
	return secrets[0]
}

// register registers target, with the current delivery secret when there is one, as a webhook of
// the account, and returns what removes it. The registered URL is printed with its secret
// replaced by "SECRET": stderr is often a log.
func register(ctx context.Context, client *escrow.Client, h *webhook.Handler, secret, target string, stderr io.Writer) (unregister func() error, err error) {
	shown := target
	if secret != "" {
		if target, err = h.DeliveryURL(target); err != nil {
			return nil, fmt.Errorf("--register: %w", err)
		}
		shown = strings.Replace(target, secret, "SECRET", 1)
	}
	wh, err := client.Webhooks.Create(ctx, escrow.Me, target)
	if err != nil {
		return nil, fmt.Errorf("--register: %w", err)
	}
	fmt.Fprintf(stderr, "escrow webhooks listen: registered webhook %d: %s (removed on exit)\n", wh.ID, shown)
	return func() error {
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownWait)
		defer cancel()
		if err := client.Webhooks.Delete(dctx, escrow.Me, wh.ID); err != nil {
			return fmt.Errorf("removing webhook %d: %w", wh.ID, err)
		}
		fmt.Fprintf(stderr, "escrow webhooks listen: removed webhook %d\n", wh.ID)
		return nil
	}, nil
}

// listenerURL is the URL deliveries reach the listener at: an unspecified address (":8080")
// is reached through loopback.
func listenerURL(a net.Addr) string {
	tcp, ok := a.(*net.TCPAddr)
	if !ok {
		return "http://" + a.String() + "/"
	}
	host := tcp.IP.String()
	if tcp.IP.IsUnspecified() {
		host = "127.0.0.1"
	}
	return "http://" + net.JoinHostPort(host, strconv.Itoa(tcp.Port)) + "/"
}

// storeKind names a --store without its credentials.
func storeKind(dsn string) string {
	switch {
	case dsn == "memory":
		return "memory, this process only"
	case strings.HasPrefix(dsn, "sqlite:"):
		return dsn + ", survives restarts"
	}
	return "postgres, shared by replicas"
}

// eventPrinter prints confirmed events, one line each, from the handler's goroutines, and
// forwards them when --forward-to is set.
type eventPrinter struct {
	mu      sync.Mutex
	w       io.Writer
	json    bool
	forward *forwarder
}

// listenedEvent is an event as "listen --json" prints it, one JSON object per line, and
// as --forward-to posts it (with the transaction).
type listenedEvent struct {
	TransactionID int64               `json:"transaction_id"`
	Event         escrow.EventName    `json:"event"`
	Source        webhook.Source      `json:"source"`
	ItemIDs       []int64             `json:"item_ids"`
	Transaction   *escrow.Transaction `json:"transaction,omitempty"`
}

func newListenedEvent(ev webhook.ConfirmedEvent) listenedEvent {
	items := ev.ItemIDs
	if items == nil {
		items = []int64{}
	}
	return listenedEvent{TransactionID: ev.TransactionID, Event: ev.Name, Source: ev.Source, ItemIDs: items}
}

// callback is the webhook.Callback. A failed write or forward is returned so that the
// handler retries the event (and prints it again: at least once).
func (p *eventPrinter) callback(ctx context.Context, ev webhook.ConfirmedEvent) error {
	if p.forward != nil {
		if err := p.forward.post(ctx, ev); err != nil {
			return err
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.json {
		b, err := json.Marshal(newListenedEvent(ev))
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(p.w, "%s\n", b)
		return err
	}
	st := ev.Transaction.State()
	line := fmt.Sprintf("%s  transaction %d  %s", time.Now().UTC().Format(time.RFC3339), ev.TransactionID, ev.Name)
	if len(ev.ItemIDs) > 0 {
		line += " (item " + joinIDs(ev.ItemIDs) + ")"
	}
	line += "  now " + string(st)
	if ev.Source == webhook.FromReconcile {
		line += "  [from the transaction's state: its own delivery lost or not yet taken]"
	}
	_, err := fmt.Fprintln(p.w, line)
	return err
}

// forwarder posts confirmed events to a local endpoint.
type forwarder struct {
	url string
	hc  *http.Client
}

// errForward is a --forward-to endpoint that did not take an event.
var errForward = errors.New("--forward-to refused the event")

func (f *forwarder) post(ctx context.Context, ev webhook.ConfirmedEvent) error {
	le := newListenedEvent(ev)
	le.Transaction = ev.Transaction
	body, err := json.Marshal(le)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, f.url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := f.hc.Do(req)
	if err != nil {
		return fmt.Errorf("%w: %v", errForward, err)
	}
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return fmt.Errorf("%w: %s answered %s", errForward, f.url, resp.Status)
	}
	return nil
}
