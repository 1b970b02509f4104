package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	escrow "github.com/escrowkit/escrow-go"
	"github.com/escrowkit/escrow-go/internal/prommetrics"
	"github.com/escrowkit/escrow-go/webhook"
)

// healthWait bounds each check of /healthz; healthCache is how long a result is reused, so
// that a scraper polling /healthz every second costs the API one request per interval.
const (
	healthWait  = 5 * time.Second
	healthCache = 10 * time.Second
)

// metricsServer serves the listener's metrics and health on their own address (the
// --metrics-addr), away from the address deliveries reach: the page need not be public.
type metricsServer struct {
	hs     *http.Server
	ln     net.Listener
	served chan error
}

// startMetrics serves /metrics (Prometheus' text format, from m) and /healthz on addr.
func startMetrics(addr string, m *prommetrics.Metrics, store webhook.Store, client *escrow.Client, log *slog.Logger) (*metricsServer, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("--metrics-addr: %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", m)
	mux.Handle("GET /healthz", &health{store: store, client: client})
	s := &metricsServer{
		hs:     &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelDebug)},
		ln:     ln,
		served: make(chan error, 1),
	}
	go func() { s.served <- s.hs.Serve(ln) }()
	return s, nil
}

// URL is where the metrics page is.
func (s *metricsServer) URL() string { return listenerURL(s.ln.Addr()) + "metrics" }

// shutdown stops the server, waiting at most until ctx ends for scrapes under way.
func (s *metricsServer) shutdown(ctx context.Context) error {
	err := s.hs.Shutdown(ctx)
	if serr := <-s.served; !errors.Is(serr, http.ErrServerClosed) {
		err = errors.Join(err, serr)
	}
	return err
}

// health answers /healthz: 200 when the store and the API both answer, else 503; the
// body says which of them failed ("store: ok", "api: failing: 503"; a 401 adds
// "credentials refused", since the client sent them). The API check reads
// the account itself (GET /customer/me); the store check reads the reconciler's mark.
// The API's failure is named by its kind (escrow.ErrorType), never by its text: that may
// quote the server, which may echo the account's e-mail, and this page is for whoever
// reaches the metrics address.
type health struct {
	store  webhook.Store
	client *escrow.Client

	mu       sync.Mutex
	checked  time.Time
	storeErr error
	apiErr   error
}

func (h *health) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	storeErr, apiErr := h.check(r.Context())
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	if storeErr != nil || apiErr != nil {
		w.WriteHeader(http.StatusServiceUnavailable)
	}
	storeFailure := ""
	if storeErr != nil {
		storeFailure = storeErr.Error()
	}
	fmt.Fprintln(w, "store:", verdict(storeFailure))
	apiFailure := escrow.ErrorType(apiErr)
	if errors.Is(apiErr, escrow.ErrUnauthorized) {
		apiFailure += " credentials refused" // the client sent them: a 401 means refused
	}
	fmt.Fprintln(w, "api:", verdict(apiFailure))
}

// verdict is "ok" for no failure, else "failing: " and the failure.
func verdict(failure string) string {
	if failure == "" {
		return "ok"
	}
	return "failing: " + failure
}

// check runs both checks, or reuses the last results while they are fresh.
func (h *health) check(ctx context.Context) (storeErr, apiErr error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.checked.IsZero() && time.Since(h.checked) < healthCache {
		return h.storeErr, h.apiErr
	}
	ctx, cancel := context.WithTimeout(ctx, healthWait)
	defer cancel()
	_, _, h.storeErr = h.store.Mark(ctx)
	_, h.apiErr = h.client.Customers.Get(ctx, escrow.Me)
	h.checked = time.Now()
	return h.storeErr, h.apiErr
}
