// Command screenshot makes docs/emulator.md's picture of the emulator's page: a marketplace's
// sales on an emulator, one transaction's page open in headless Chromium, saved as PNG.
// `go generate` in escrowtest/uitest runs it.
package main

import (
	"context"
	"flag"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/escrowkit/escrow-go/escrowtest"
	"github.com/escrowkit/escrow-go/escrowtest/uitest"
)

func main() {
	out := flag.String("o", "emulator-transaction.png", "write the PNG to `file`")
	width := flag.Int("width", 1280, "window width in CSS pixels")
	flag.Parse()
	if err := run(*out, *width); err != nil {
		fmt.Fprintln(os.Stderr, "screenshot:", err)
		os.Exit(1)
	}
}

func run(out string, width int) error {
	browser, err := uitest.FindChromium()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	srv := escrowtest.NewServer(escrowtest.WithUI(), escrowtest.WithClock(time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)))
	defer srv.Close()
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {}))
	defer hook.Close()
	id, err := seed(ctx, srv, hook.URL)
	if err != nil {
		return err
	}
	tab, stop := uitest.NewBrowser(ctx, browser, width, 1000)
	defer stop()
	if err := chromedp.Do(tab, uitest.OpenTransaction(srv.UIURL(), id), uitest.WaitText("#d-deliveries", "receive")); err != nil {
		return err
	}
	png, err := chromedp.Run(tab, chromedp.FullScreenshot(100))
	if err != nil {
		return err
	}
	return os.WriteFile(out, png, 0o644)
}

// seed makes three sales: one paid out, one received and inspected (the one shown) and
// one waiting for the buyer's payment, and leaves a fault standing. It returns the one
// shown.
func seed(ctx context.Context, srv *escrowtest.Server, webhook string) (int64, error) {
	m, err := uitest.NewMarket(ctx, srv, webhook)
	if err != nil {
		return 0, err
	}
	s := seeder{m: m, srv: srv}
	done, err := s.deliveredSale(ctx, "Vintage camera", "640.00")
	if err != nil {
		return 0, err
	}
	srv.Advance(3 * 24 * time.Hour)
	if err := m.ChoosePayout(ctx, done); err != nil {
		return 0, err
	}
	shown, err := s.deliveredSale(ctx, "Road bike", "1500.00")
	if err != nil {
		return 0, err
	}
	if _, err := m.Sell(ctx, "Helmet", "120.00"); err != nil {
		return 0, err
	}
	// A fault standing, as a test of a client's retries leaves one.
	if err := srv.InjectFault(escrowtest.Fault{Endpoint: "POST /transaction", Status: 503, Probability: 0.1}); err != nil {
		return 0, err
	}
	return shown, srv.FlushWebhooks(ctx)
}

// seeder makes sales of a market on the emulator.
type seeder struct {
	m   *uitest.Market
	srv *escrowtest.Server
}

// deliveredSale makes a sale the buyer has paid for and received, whose inspection runs.
func (s seeder) deliveredSale(ctx context.Context, title, amount string) (int64, error) {
	id, err := s.m.Sell(ctx, title, amount)
	if err != nil {
		return 0, err
	}
	if err := s.srv.ApprovePayment(id); err != nil {
		return 0, err
	}
	return id, s.m.Deliver(ctx, id)
}
