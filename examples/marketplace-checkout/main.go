// Command marketplace-checkout is a marketplace's checkout on the escrow API.
//
// It shows three things a marketplace gets wrong at its peril:
//
//   - The escrow is created under the order's own reference, so neither a dropped
//     connection nor a second click on "Pay" makes a second transaction.
//   - The buyer pays on the provider's page: the checkout asks for it (ChoosePaymentMethod)
//     and redirects the buyer there.
//   - Fulfilment is driven by webhooks, received by webhook.NewHandler on a local listener:
//     only a confirmed payment_approved makes the seller ship, and the order closes on
//     complete.
//
// By default it runs against an embedded emulator (package escrowtest), where the
// marketplace is an approved partner that acts As-Customer for its buyer and seller. With
// ESCROW_SANDBOX_EMAIL and ESCROW_SANDBOX_API_KEY set it runs the checkout half against the
// provider's sandbox instead, the sandbox account buying from ESCROW_SANDBOX_SELLER
// (default seller@example.com); it stops at the payment page, since the sandbox can neither
// take a payment without a person nor call a webhook on this machine, and cancels the
// transaction it made.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/signal"
	"strings"
	"time"

	escrow "github.com/escrowkit/escrow-go"
	"github.com/escrowkit/escrow-go/escrowtest"
	"github.com/escrowkit/escrow-go/webhook"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := start(ctx, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "marketplace-checkout:", err)
		os.Exit(1)
	}
}

// start picks the sandbox when its credentials are set, the emulator otherwise.
func start(ctx context.Context, w io.Writer) error {
	email, key := os.Getenv("ESCROW_SANDBOX_EMAIL"), os.Getenv("ESCROW_SANDBOX_API_KEY")
	if email == "" || key == "" {
		srv := escrowtest.NewServer()
		defer srv.Close()
		return run(ctx, w, srv)
	}
	client, err := escrow.NewClient(email, key, escrow.WithSandbox())
	if err != nil {
		return err
	}
	seller := os.Getenv("ESCROW_SANDBOX_SELLER")
	if seller == "" {
		seller = "seller@example.com"
	}
	// A fixed reference would find the previous run's transaction in the sandbox.
	ref := fmt.Sprintf("order-%d", time.Now().Unix())
	return runSandbox(ctx, w, client, seller, ref)
}

// An order of the marketplace's own system, as its checkout page submits it.
type order struct {
	ID            string // the marketplace's order id: the escrow's reference
	Buyer, Seller string // e-mail addresses, or "me"
	Title         string
	Price         escrow.Amount
	Shipping      escrow.Amount
}

// request is the escrow for an order. The escrow fee is shared half and half, a common
// marketplace policy; without fee entries the buyer would pay it all.
func (o order) request() *escrow.CreateTransactionRequest {
	fees := []escrow.FeeInput{
		{Type: escrow.FeeEscrow, PayerCustomer: o.Buyer, Split: escrow.SplitHalf},
		{Type: escrow.FeeEscrow, PayerCustomer: o.Seller, Split: escrow.SplitHalf},
	}
	pay := func(a escrow.Amount) []escrow.ScheduleInput {
		return []escrow.ScheduleInput{{Amount: a, PayerCustomer: o.Buyer, BeneficiaryCustomer: o.Seller}}
	}
	return &escrow.CreateTransactionRequest{
		Reference:   o.ID,
		Currency:    escrow.USD,
		Description: "Order " + o.ID + ": " + o.Title,
		Parties: []escrow.PartyInput{
			{Role: escrow.RoleBuyer, Customer: o.Buyer},
			{Role: escrow.RoleSeller, Customer: o.Seller},
		},
		Items: []escrow.ItemInput{
			{
				Title: o.Title, Type: escrow.ItemGeneralMerchandise, Category: escrow.CategoryCollectibles,
				InspectionPeriod: escrow.Days(3), Quantity: 1, Schedule: pay(o.Price), Fees: fees,
			},
			{Title: "Shipping", Type: escrow.ItemShippingFee, Schedule: pay(o.Shipping), Fees: fees},
		},
	}
}

// checkout returns the order's escrow, creating it only if it does not exist yet.
//
// Looking the reference up first makes a second submit of the order (a double click, a
// retried form post) find the escrow rather than create another. Create itself covers the
// other gap: when its answer is lost, it looks the reference up before trying again.
func checkout(ctx context.Context, c *escrow.Client, o order) (*escrow.Transaction, error) {
	tx, err := c.Transactions.GetByReference(ctx, o.ID)
	if !errors.Is(err, escrow.ErrNotFound) {
		return tx, err
	}
	tx, err = c.Transactions.Create(ctx, o.request())
	var ve *escrow.ValidationError
	if errors.As(err, &ve) && ve.Field("reference") != nil {
		// A concurrent submit of the same order created it between our look-up and our
		// create.
		return c.Transactions.GetByReference(ctx, o.ID)
	}
	return tx, err
}

// paymentPage returns where to send the buyer to pay by card, and then back to the order.
func paymentPage(ctx context.Context, c *escrow.Client, id int64, o order, opts ...escrow.RequestOption) (string, error) {
	page, err := c.Transactions.ChoosePaymentMethod(ctx, id, escrow.PaymentCreditCard,
		&escrow.ChoosePaymentMethodRequest{ReturnURL: "https://market.example/orders/" + o.ID}, opts...)
	if err != nil {
		return "", err
	}
	return page.LandingPage, nil
}

// printPaymentMethods shows what the buyer will be charged by each method.
func printPaymentMethods(ctx context.Context, w io.Writer, c *escrow.Client, id int64, opts ...escrow.RequestOption) error {
	pm, err := c.Transactions.GetPaymentMethods(ctx, id, opts...)
	if err != nil {
		return err
	}
	methods := make([]string, len(pm.AvailablePaymentMethods))
	for i, m := range pm.AvailablePaymentMethods {
		methods[i] = fmt.Sprintf("%s %s", m.Type, m.Total)
	}
	fmt.Fprintf(w, "buyer owes %s before payment fees; by method: %s\n", pm.TotalWithoutPaymentFee, strings.Join(methods, ", "))
	return nil
}

// run is the whole order on the emulator: checkout, payment, webhook-driven fulfilment.
func run(ctx context.Context, w io.Writer, srv *escrowtest.Server) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	s, err := openShop(w, srv)
	if err != nil {
		return err
	}
	stop, err := s.listen(ctx)
	if err != nil {
		return err
	}
	defer stop()
	tx, err := s.checkout(ctx)
	if err != nil {
		return err
	}
	if err := s.agree(ctx, tx); err != nil {
		return err
	}
	if err := s.pay(ctx, tx); err != nil {
		return err
	}
	return s.deliver(ctx, tx)
}

// shop is the marketplace on the emulator: its client, the two parties' own clients, the
// order, and the fulfilment its webhook receiver drives.
type shop struct {
	w                     io.Writer
	srv                   *escrowtest.Server
	market, buyer, seller *escrow.Client
	o                     order
	f                     *fulfilment
}

func openShop(w io.Writer, srv *escrowtest.Server) (*shop, error) {
	connect := func(a escrowtest.Account) (*escrow.Client, error) {
		return escrow.NewClient(a.Email, a.APIKey, escrow.WithBaseURL(srv.URL), escrow.WithHTTPClient(srv.Client()))
	}
	s := &shop{w: w, srv: srv, o: order{
		ID: "order-1042", Buyer: "buyer@example.com", Seller: "seller@example.com",
		Title: "Leica M6 camera", Price: escrow.MustAmount("1200.00"), Shipping: escrow.MustAmount("25.00"),
	}}
	var err error
	if s.market, err = connect(srv.AddPartner("market@example.com")); err != nil {
		return nil, err
	}
	// The buyer and the seller act with their own keys only where As-Customer cannot reach:
	// accepting the goods, and choosing how the seller is paid out.
	if s.buyer, err = connect(srv.AddCustomer(s.o.Buyer)); err != nil {
		return nil, err
	}
	s.seller, err = connect(srv.AddCustomer(s.o.Seller))
	s.f = &fulfilment{client: s.market, seller: s.o.Seller, notes: make(chan note, 64)}
	return s, err
}

// listen starts the receiver and registers it: the API posts deliveries there; the
// handler confirms each by fetching the transaction and hands fulfil the events that
// really happened, once each, in order. stop shuts it down.
func (s *shop) listen(ctx context.Context) (stop func(), err error) {
	h := webhook.NewHandler(s.market, s.f.handle, webhook.Options{})
	mux := http.NewServeMux()
	mux.Handle("POST /escrow/webhook", h)
	recv := httptest.NewServer(mux) // plain HTTP on loopback, which the emulator may call
	stop = func() {
		sctx, scancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer scancel()
		// A fetch hands over every event it shows, so the last events may have been
		// handed over before their own deliveries came: let those arrive (and be answered)
		// before the receiver goes.
		s.srv.FlushWebhooks(sctx)
		h.Shutdown(sctx)
		recv.Close()
	}
	hook, err := s.market.Webhooks.Create(ctx, escrow.Me, recv.URL+"/escrow/webhook")
	if err != nil {
		stop()
		return nil, fmt.Errorf("registering the webhook: %w", err)
	}
	fmt.Fprintf(s.w, "webhook %d registered: %s\n", hook.ID, hook.URL)
	return stop, nil
}

// checkout submits the order twice, losing the first answer, and shows that one
// transaction exists for it.
func (s *shop) checkout(ctx context.Context) (*escrow.Transaction, error) {
	w, o := s.w, s.o
	// The first submit's answer is lost after the API created the transaction, as a
	// timeout would lose it: Create finds the transaction by its reference.
	if err := s.srv.InjectFault(escrowtest.Fault{Endpoint: "POST /transaction", Drop: escrowtest.DropAfter}); err != nil {
		return nil, err
	}
	tx, err := checkout(ctx, s.market, o)
	s.srv.ClearFaults()
	if err != nil {
		return nil, fmt.Errorf("checkout: %w", err)
	}
	fmt.Fprintf(w, "checkout %s: transaction %d (its answer was lost; Create found it by reference)\n", o.ID, tx.ID)
	if err := s.f.await(ctx, w, escrow.EventCreate); err != nil {
		return nil, err
	}
	again, err := checkout(ctx, s.market, o)
	if err != nil {
		return nil, fmt.Errorf("second checkout: %w", err)
	}
	n, err := countOrders(ctx, s.market, o.ID)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(w, "checkout %s again: transaction %d; transactions with that reference: %d\n", o.ID, again.ID, n)
	printItems(w, tx)
	return tx, nil
}

// agree records both parties' agreement and the seller's payout method.
func (s *shop) agree(ctx context.Context, tx *escrow.Transaction) error {
	// The seller agreed to the marketplace's terms when listing, the buyer at checkout; the
	// marketplace records both As-Customer.
	for _, party := range []string{s.o.Seller, s.o.Buyer} {
		if _, err := s.market.Transactions.Agree(ctx, tx.ID, escrow.AsCustomer(party)); err != nil {
			return fmt.Errorf("agree as %s: %w", party, err)
		}
	}
	fmt.Fprintln(s.w, "seller and buyer agreed (As-Customer)")
	if err := s.f.await(ctx, s.w, escrow.EventAgree); err != nil {
		return err
	}
	if _, err := s.seller.Transactions.SelectDisbursementMethod(ctx, tx.ID, &escrow.DisbursementMethod{
		Type: escrow.DisbursementACH, AccountName: "Sam Seller", AccountType: "checking",
		BankABARoutingNumber: "021000021", BankAccountNumber: "000123456789", BankName: "Example Bank",
	}); err != nil {
		return fmt.Errorf("seller's disbursement method: %w", err)
	}
	fmt.Fprintln(s.w, "seller chose ACH for the payout (own key)")
	return nil
}

// pay shows the buyer's payment methods and page, and has the buyer pay.
func (s *shop) pay(ctx context.Context, tx *escrow.Transaction) error {
	if err := printPaymentMethods(ctx, s.w, s.market, tx.ID, escrow.AsCustomer(s.o.Buyer)); err != nil {
		return err
	}
	page, err := paymentPage(ctx, s.market, tx.ID, s.o, escrow.AsCustomer(s.o.Buyer))
	if err != nil {
		return fmt.Errorf("payment page: %w", err)
	}
	fmt.Fprintf(s.w, "redirect the buyer to %s\n", page)
	// The buyer pays on that page; the emulator stands in for the card network.
	if err := s.srv.ApprovePayment(tx.ID); err != nil {
		return err
	}
	return s.f.await(ctx, s.w, escrow.EventPaymentApproved, escrow.EventShip)
}

// deliver takes the parcel's arrival to the transaction's close.
func (s *shop) deliver(ctx context.Context, tx *escrow.Transaction) error {
	// The parcel arrives: the buyer confirms receipt on the marketplace, which passes it on,
	// and accepts with the buyer's own key (the API refuses accept through As-Customer).
	if _, err := s.market.Transactions.Receive(ctx, tx.ID, escrow.AsCustomer(s.o.Buyer)); err != nil {
		return fmt.Errorf("receive: %w", err)
	}
	if err := s.f.await(ctx, s.w, escrow.EventReceive); err != nil {
		return err
	}
	if _, err := s.buyer.Transactions.Accept(ctx, tx.ID); err != nil {
		return fmt.Errorf("accept: %w", err)
	}
	if err := s.f.await(ctx, s.w, escrow.EventAccept, escrow.EventComplete); err != nil {
		return err
	}
	final, err := s.market.Transactions.Get(ctx, tx.ID)
	if err != nil {
		return err
	}
	fmt.Fprintf(s.w, "order %s closed: transaction %d complete, closed %s\n",
		s.o.ID, final.ID, final.CloseDate.Format(time.RFC3339))
	return nil
}

// countOrders counts the marketplace's transactions that carry an order's reference.
func countOrders(ctx context.Context, c *escrow.Client, ref string) (int, error) {
	n := 0
	for tx, err := range c.Partner.AllTransactions(ctx, nil) {
		if err != nil {
			return 0, err
		}
		if tx.Reference == ref {
			n++
		}
	}
	return n, nil
}

// printItems shows what each item costs and the escrow fee each party pays on it.
func printItems(w io.Writer, tx *escrow.Transaction) {
	for _, it := range tx.Items {
		fmt.Fprintf(w, "  item %d %-16s %8s", it.ID, it.Title, it.Schedule[0].Amount)
		for _, fee := range it.Fees {
			fmt.Fprintf(w, "  %s fee %s paid by %s", fee.Type, fee.Amount, fee.PayerCustomer)
		}
		fmt.Fprintln(w)
	}
}

// fulfilment is the marketplace's reaction to confirmed events.
type fulfilment struct {
	client *escrow.Client
	seller string
	// notes carries what the callback did to run, which prints it: the callback runs on the
	// handler's goroutines, and printing from one place keeps the output in order.
	notes chan note
}

// note is what the callback did with one event.
type note struct {
	event escrow.EventName
	text  string
}

// handle is the webhook callback. It may see an event twice (after a crash between the
// callback and the store's record), so every step checks the transaction first.
func (f *fulfilment) handle(ctx context.Context, ev webhook.ConfirmedEvent) error {
	tx := ev.Transaction
	n := note{ev.Name, fmt.Sprintf("webhook %s%s", ev.Name, itemList(ev.ItemIDs))}
	switch ev.Name {
	case escrow.EventPaymentApproved:
		if tx.State() != escrow.StateFunded {
			break // already shipped: this is a repeated event
		}
		// The funds are secured, and the handler has confirmed it with the API: only now
		// does the seller's parcel leave, tracked.
		info := &escrow.ShippingInformation{TrackingInformation: &escrow.TrackingInformation{
			Carrier: "UPS", TrackingID: "1Z999AA10123456784",
		}}
		if _, err := f.client.Transactions.Ship(ctx, tx.ID, info, escrow.AsCustomer(f.seller)); err != nil {
			return err // the handler tries again later
		}
		n.text += ": funds secured, the seller ships by UPS 1Z999AA10123456784 (As-Customer)"
	case escrow.EventComplete:
		n.text += ": every payout made, the order can close"
	}
	select {
	case f.notes <- n:
	case <-ctx.Done():
		return ctx.Err()
	}
	return nil
}

// await prints the callback's notes until it has handled each of the events.
func (f *fulfilment) await(ctx context.Context, w io.Writer, events ...escrow.EventName) error {
	want := make(map[escrow.EventName]bool, len(events))
	for _, e := range events {
		want[e] = true
	}
	for len(want) > 0 {
		select {
		case n := <-f.notes:
			fmt.Fprintln(w, n.text)
			delete(want, n.event)
		case <-ctx.Done():
			return fmt.Errorf("waiting for webhook events %v: %w", events, ctx.Err())
		}
	}
	return nil
}

func itemList(ids []int64) string {
	if len(ids) == 0 {
		return ""
	}
	return fmt.Sprintf(" (items %v)", ids)
}

// runSandbox is the checkout half against the sandbox: the account itself is the buyer.
func runSandbox(ctx context.Context, w io.Writer, c *escrow.Client, seller, ref string) error {
	o := order{
		ID: ref, Buyer: escrow.Me, Seller: seller,
		Title: "Leica M6 camera", Price: escrow.MustAmount("1200.00"), Shipping: escrow.MustAmount("25.00"),
	}
	tx, err := checkout(ctx, c, o)
	if err != nil {
		return fmt.Errorf("checkout: %w", err)
	}
	fmt.Fprintf(w, "checkout %s: transaction %d\n", o.ID, tx.ID)
	again, err := checkout(ctx, c, o)
	if err != nil {
		return fmt.Errorf("second checkout: %w", err)
	}
	fmt.Fprintf(w, "checkout %s again: transaction %d\n", o.ID, again.ID)
	printItems(w, tx)
	if err := printPaymentMethods(ctx, w, c, tx.ID); err != nil {
		return err
	}
	fmt.Fprintf(w, "the seller must agree before the buyer can pay; the buyer then pays on the page of\n"+
		"ChoosePaymentMethod, and webhooks need a public URL (see examples/webhook-receiver)\n")
	// The creator may cancel while the seller has not agreed: leave the sandbox tidy.
	if _, err := c.Transactions.Cancel(ctx, tx.ID, "example run"); err != nil {
		return fmt.Errorf("cancel: %w", err)
	}
	fmt.Fprintf(w, "transaction %d cancelled\n", tx.ID)
	return nil
}
