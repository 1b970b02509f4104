package escrowtest

import (
	"crypto/x509"
	"log/slog"
	"net/http"
	"net/http/httptest"
)

// Server is an Emulator served over HTTPS on a loopback address, as
// httptest.NewTLSServer serves a handler. The methods a test calls are the Emulator's,
// which Server embeds (go doc …/escrowtest.Emulator shows them):
//
//	AddCustomer, AddPartner   accounts, with an API key each
//	ApprovePayment            the buyer's funds arrive (RejectPayment: they do not)
//	Advance, Now              the clock: inspection periods end
//	NextSteps                 who must do what next, and why nothing was paid out
//	Ledger                    the transaction's money: in = out + fees + held
//	Deliveries, FlushWebhooks the webhook calls made
//	InjectFault, SetRateLimit faults and rate limits; Reset forgets everything
//
// An SDK client for an account is one line: escrow.NewClient(a.Email, a.APIKey,
// escrow.WithEmulator(srv)).
type Server struct {
	*Emulator
	// URL is the API's base URL, with the version segment and a trailing slash:
	// "https://127.0.0.1:PORT/2017-09-01/".
	URL string

	ts *httptest.Server
}

// NewServer starts an emulator on 127.0.0.1 with a self-signed certificate. Use Client to
// talk to it, and Close when done.
func NewServer(opts ...Option) *Server {
	e := NewEmulator(opts...)
	ts := httptest.NewUnstartedServer(e)
	// Connections the emulator drops on purpose make net/http log; send it to our logger.
	ts.Config.ErrorLog = slog.NewLogLogger(e.log.Handler(), slog.LevelDebug)
	ts.StartTLS()
	// httptest's client keeps net/http's default of 2 idle connections per host: with a few
	// replicas and parties calling at once, every other call paid a new TLS handshake.
	if t, ok := ts.Client().Transport.(*http.Transport); ok {
		t.MaxIdleConnsPerHost = clientIdleConnsPerHost
	}
	return &Server{Emulator: e, URL: ts.URL + versionRoot + "/", ts: ts}
}

// clientIdleConnsPerHost is how many idle connections Client keeps to the server.
const clientIdleConnsPerHost = 64

// Client returns an HTTP client that trusts the server's certificate. It is shared and
// safe for concurrent use: it keeps up to 64 idle connections to the server, enough for
// the replicas and parties of one test calling at once (as the SDK's default transport
// keeps several per host), so concurrent callers reuse connections instead of paying a
// TLS handshake per call. Close closes its idle connections.
func (s *Server) Client() *http.Client { return s.ts.Client() }

// Certificate returns the server's self-signed certificate, for clients built elsewhere
// (a CLI given a CA file, another language's HTTP client).
func (s *Server) Certificate() *x509.Certificate { return s.ts.Certificate() }

// Close stops webhook deliveries and injected latencies, then the listener, and waits for
// requests in flight. It leaves no goroutine behind.
func (s *Server) Close() {
	s.Emulator.Close()
	s.ts.Close()
}

// BaseURL returns URL, the API's base URL: with escrow.WithEmulator, it points an SDK
// client at the server.
func (s *Server) BaseURL() string { return s.URL }

// UIURL returns the address of the emulator's page, which WithUI turns on: open it in a
// browser on the same machine to watch the test run.
func (s *Server) UIURL() string { return s.ts.URL + UIPath }
