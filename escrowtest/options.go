package escrowtest

import (
	"fmt"
	"log/slog"
	"net/http"
	"time"
)

// Option configures an Emulator or a Server.
type Option func(*config)

type config struct {
	start          time.Time
	frozen         bool
	rateLimit      int
	rateWindow     time.Duration
	seed           int64
	webhookClient  *http.Client
	webhookTimeout time.Duration
	logger         *slog.Logger
	// minimumEscrowFee: a buyer must pay at least this, and at least the escrow fee.
	minimumEscrowFee cents
	// ui serves the page at /_emulator/ui/.
	ui bool
	// eventIdle ends an event stream that long without a change; defaultEventIdle
	// unless a test shortens or lengthens it.
	eventIdle time.Duration
	// hosts are the Host names requests may use beside the loopback ones (WithHosts).
	hosts []string
}

// Defaults: see the package comment.
const (
	defaultRateLimit      = 1000
	defaultRateWindow     = time.Minute
	defaultSeed           = 1
	defaultWebhookTimeout = 10 * time.Second
)

func newConfig(opts []Option) config {
	c := config{
		start:            time.Now(),
		rateLimit:        defaultRateLimit,
		rateWindow:       defaultRateWindow,
		seed:             defaultSeed,
		webhookTimeout:   defaultWebhookTimeout,
		logger:           slog.New(slog.DiscardHandler),
		minimumEscrowFee: defaultMinimumEscrowFee,
		eventIdle:        defaultEventIdle,
	}
	for _, o := range opts {
		o(&c)
	}
	return c
}

// WithClock freezes the emulator's clock at start: it then moves only through Advance,
// which makes creation dates, inspection periods and rate-limit windows deterministic.
// Without it the clock follows the wall clock, shifted by every Advance.
func WithClock(start time.Time) Option {
	return func(c *config) { c.start, c.frozen = start, true }
}

// WithRateLimit sets how many requests each account may make to each endpoint per
// window. A limit of 0 or less turns rate limiting off. The default is 1000 per minute.
func WithRateLimit(limit int, window time.Duration) Option {
	return func(c *config) { c.rateLimit, c.rateWindow = limit, window }
}

// WithSeed seeds the randomness of fault injection, so that faults with a probability
// below 1 fire on the same requests in every run. The default seed is 1.
func WithSeed(seed int64) Option {
	return func(c *config) { c.seed = seed }
}

// WithWebhookClient sets the client that delivers webhooks, for example one that trusts a
// receiver's TLS certificate. Its own Timeout, if shorter, still applies. Close leaves
// the client's idle connections to its owner.
func WithWebhookClient(hc *http.Client) Option {
	return func(c *config) { c.webhookClient = hc }
}

// WithWebhookTimeout changes the 10-second limit on each webhook call, so that tests of a
// slow receiver need not wait 10 seconds.
func WithWebhookTimeout(d time.Duration) Option {
	return func(c *config) { c.webhookTimeout = d }
}

// WithLogger sets where the emulator logs requests and webhook deliveries. It is silent by
// default. Credentials are never logged.
func WithLogger(l *slog.Logger) Option {
	return func(c *config) { c.logger = l }
}

// WithMinimumEscrowFee sets the minimum escrow fee, a decimal amount such as "50.00" in
// the transaction's currency: a transaction whose buyer pays less than it, or less than its
// escrow fee, is refused at creation (422 at items.all), as the live API refused a 15.00
// sale. The default is 25.00 (the package comment says why); "0" turns the minimum off,
// leaving only the escrow fee itself. It panics when amount is not such an amount.
func WithMinimumEscrowFee(amount string) Option {
	minimum := cents(0)
	if amount != "0" && amount != "0.00" {
		c, err := parseCents(amount)
		if err != nil {
			panic(fmt.Sprintf("escrowtest: WithMinimumEscrowFee(%q): %v", amount, err))
		}
		minimum = c
	}
	return func(c *config) { c.minimumEscrowFee = minimum }
}

// WithUI serves the emulator's page at /_emulator/ui/ (on Server, at srv.UIURL()): a
// person watches transactions, who must act next, ledgers and webhook deliveries live,
// and uses the control API's controls. Like the control API, it answers loopback clients
// only. `escrow emulator` serves it always; a test turns it on to watch itself run.
func WithUI() Option {
	return func(c *config) { c.ui = true }
}
