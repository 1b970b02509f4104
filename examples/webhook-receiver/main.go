// Command webhook-receiver shows the receiving side of the escrow API's webhooks: a
// webhook.Handler that confirms every delivery by fetching its transaction, hands each
// state change to the order system once and in order, and reconciles the deliveries the
// API never retries.
//
// With no flags it runs on the embedded emulator, which loses 30% of its webhook calls on
// purpose: watch the reconciler recover them. With -serve it receives real deliveries on
// -addr for the account in ESCROW_SANDBOX_EMAIL / ESCROW_SANDBOX_API_KEY (the sandbox)
// until interrupted; register the public URL that reaches it with
// `escrow webhooks add URL`.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	escrow "github.com/escrowkit/escrow-go"
	"github.com/escrowkit/escrow-go/escrowtest"
	"github.com/escrowkit/escrow-go/webhook"
)

func main() {
	serve := flag.Bool("serve", false, "receive the sandbox's deliveries instead of running on the emulator")
	addr := flag.String("addr", "127.0.0.1:8080", "address to receive deliveries on, with -serve")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	var err error
	if *serve {
		err = serveSandbox(ctx, os.Stdout, *addr)
	} else {
		err = run(ctx, os.Stdout)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "webhook-receiver:", err)
		os.Exit(1)
	}
}

// orders is the marketplace's side: what it does with each confirmed event. A real one
// would update its database idempotently; this one prints and counts.
type orders struct {
	mu      sync.Mutex
	out     io.Writer
	handled map[escrow.EventName]int
}

func (o *orders) handle(_ context.Context, ev webhook.ConfirmedEvent) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.handled[ev.Name]++
	fmt.Fprintf(o.out, "  transaction %d: %-17s (from %s)\n", ev.TransactionID, ev.Name, ev.Source)
	return nil
}

// run takes three sales through their lifecycle on the emulator while it drops 30% of its
// webhook calls, and shows every state change reaching the order system once.
func run(ctx context.Context, out io.Writer) error {
	srv := escrowtest.NewServer(escrowtest.WithSeed(3))
	defer srv.Close()
	market := srv.AddPartner("market@example.com")
	srv.AddCustomer("buyer@example.com")
	seller := srv.AddCustomer("seller@example.com")
	if err := srv.InjectFault(escrowtest.Fault{Endpoint: "WEBHOOK *", Probability: 0.3, Drop: escrowtest.DropBefore}); err != nil {
		return err
	}
	client, err := escrow.NewClient(market.Email, market.APIKey, escrow.WithBaseURL(srv.URL), escrow.WithHTTPClient(srv.Client()))
	if err != nil {
		return err
	}
	sellerClient, err := escrow.NewClient(seller.Email, seller.APIKey, escrow.WithBaseURL(srv.URL), escrow.WithHTTPClient(srv.Client()))
	if err != nil {
		return err
	}

	o := &orders{out: out, handled: make(map[escrow.EventName]int)}
	h := webhook.NewHandler(client, o.handle, webhook.Options{})
	url, stopServing, err := listen(h, "127.0.0.1:0")
	if err != nil {
		return err
	}
	defer stopServing()
	if err := h.Reconcile(ctx); err != nil { // marks where history ends, as RunReconciler does
		return err
	}
	if _, err := client.Webhooks.Create(ctx, escrow.Me, url); err != nil {
		return err
	}

	fmt.Fprintln(out, "Three sales, with 30% of webhook calls lost on the way:")
	for range 3 {
		if err := sell(ctx, client, sellerClient, srv); err != nil {
			return err
		}
	}
	if err := srv.FlushWebhooks(ctx); err != nil {
		return err
	}
	if err := h.Flush(ctx); err != nil {
		return err
	}
	fmt.Fprintf(out, "The reconciler looks for what the %d lost calls did not say:\n", lost(srv))
	if err := h.Reconcile(ctx); err != nil {
		return err
	}
	if err := h.Shutdown(ctx); err != nil {
		return err
	}
	fmt.Fprintf(out, "Each sale was completed once in the order system: %d completions, %d shipments.\n",
		o.handled[escrow.EventComplete], o.handled[escrow.EventShip])
	if o.handled[escrow.EventComplete] != 3 || o.handled[escrow.EventShip] != 3 {
		return errors.New("a state change was lost or handed over twice")
	}
	return nil
}

// sell takes one sale from creation to completion: the marketplace acts As-Customer where
// the API allows it; acceptance, which it does not allow, comes from the inspection period
// running out.
func sell(ctx context.Context, market, seller *escrow.Client, srv *escrowtest.Server) error {
	tx, err := market.Transactions.Create(ctx, &escrow.CreateTransactionRequest{
		Currency: escrow.USD, Description: "A road bicycle",
		Parties: []escrow.PartyInput{
			{Role: escrow.RoleBuyer, Customer: "buyer@example.com"},
			{Role: escrow.RoleSeller, Customer: "seller@example.com"},
		},
		Items: []escrow.ItemInput{{
			Title: "Bicycle", Type: escrow.ItemGeneralMerchandise, InspectionPeriod: escrow.Days(1),
			Schedule: []escrow.ScheduleInput{{Amount: escrow.MustAmount("480.00"), PayerCustomer: "buyer@example.com", BeneficiaryCustomer: "seller@example.com"}},
		}},
	})
	if err != nil {
		return err
	}
	buyer, sellerAs := escrow.AsCustomer("buyer@example.com"), escrow.AsCustomer("seller@example.com")
	steps := []func() error{
		func() error { _, err := market.Transactions.Agree(ctx, tx.ID, buyer); return err },
		func() error { _, err := market.Transactions.Agree(ctx, tx.ID, sellerAs); return err },
		func() error { return srv.ApprovePayment(tx.ID) }, // on the live API the buyer pays
		func() error {
			_, err := seller.Transactions.SelectDisbursementMethod(ctx, tx.ID, &escrow.DisbursementMethod{
				Type: escrow.DisbursementACH, AccountName: "Seller", AccountType: "checking",
				BankABARoutingNumber: "121000248", BankAccountNumber: "12345678", BankName: "First Bank",
			})
			return err
		},
		func() error {
			_, err := market.Transactions.Ship(ctx, tx.ID, &escrow.ShippingInformation{
				TrackingInformation: &escrow.TrackingInformation{Carrier: "UPS", TrackingID: "1Z999AA10123456784"},
			}, sellerAs)
			return err
		},
		func() error { _, err := market.Transactions.Receive(ctx, tx.ID, buyer); return err },
		func() error { srv.Advance(25 * time.Hour); return nil }, // the inspection period ends: accepted
	}
	for _, step := range steps {
		if err := step(); err != nil {
			return fmt.Errorf("transaction %d: %w", tx.ID, err)
		}
	}
	return nil
}

// listen serves h on addr and returns the URL to register and a function that stops it.
func listen(h http.Handler, addr string) (url string, stop func(), err error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", nil, err
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second}
	go srv.Serve(ln)
	return "http://" + ln.Addr().String() + "/escrow/webhook", func() { srv.Close() }, nil
}

// serveSandbox receives the sandbox's deliveries for the account in the environment until
// ctx ends, reconciling every minute.
func serveSandbox(ctx context.Context, out io.Writer, addr string) error {
	email, key := os.Getenv("ESCROW_SANDBOX_EMAIL"), os.Getenv("ESCROW_SANDBOX_API_KEY")
	if email == "" || key == "" {
		return errors.New("set ESCROW_SANDBOX_EMAIL and ESCROW_SANDBOX_API_KEY to receive the sandbox's deliveries")
	}
	client, err := escrow.NewClient(email, key, escrow.WithSandbox())
	if err != nil {
		return err
	}
	o := &orders{out: out, handled: make(map[escrow.EventName]int)}
	h := webhook.NewHandler(client, o.handle, webhook.Options{Logger: slog.New(slog.NewTextHandler(os.Stderr, nil))})
	url, stopServing, err := listen(h, addr)
	if err != nil {
		return err
	}
	defer stopServing()
	fmt.Fprintf(out, "Receiving on %s; register a public URL that reaches it. Ctrl-C stops.\n", url)
	err = h.RunReconciler(ctx, time.Minute)
	shutdown, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if serr := h.Shutdown(shutdown); serr != nil {
		return serr
	}
	if errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}

// lost counts the webhook calls the emulator's faults lost.
func lost(srv *escrowtest.Server) int {
	n := 0
	for _, d := range srv.Deliveries() {
		if d.Error != "" {
			n++
		}
	}
	return n
}
