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
	"net/mail"
	"strings"
	"sync"
	"time"

	escrow "github.com/escrowkit/escrow-go"
	"github.com/escrowkit/escrow-go/escrowtest"
	"github.com/escrowkit/escrow-go/webhook"
)

// Who performs a step, as the demo's table shows it. "As-Customer" marks the partner acting
// for a party with the As-Customer header; "own key" a party using its own credentials.
const (
	actorPartner  = "partner"
	actorBroker   = "partner (as broker)"
	actorBuyer    = "buyer (own key)"
	actorBuyerAs  = "buyer (As-Customer)"
	actorSeller   = "seller (own key)"
	actorSellerAs = "seller (As-Customer)"
	actorEmulator = "emulator"
	actorClock    = "emulator clock"
)

// rowFormat lays out the demo's table. Rows are printed one by one as the steps happen,
// so the widths are fixed rather than measured (text/tabwriter needs the whole table).
const rowFormat = "%-22s %-20s %-18s %9s  %10s  %10s  %9s  %9s  %9s\n"

// demoPartner is the partner account the emulator demo creates.
const demoPartner = "market@example.com"

// runDemo is "escrow demo": a whole escrow lifecycle on the embedded emulator, or on the
// sandbox up to the payment a person has to make.
func runDemo(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	const name = "escrow demo"
	fs := newFlagSet(name, "escrow demo [--milestone | --domain] [--sandbox] [--buyer email] [--seller email] [-v]", stderr)
	milestone := fs.Bool("milestone", false, "run a milestone contract, acting on each milestone in turn")
	domain := fs.Bool("domain", false, "run a domain name sale")
	sandbox := fs.Bool("sandbox", false, "run against the provider's sandbox with "+envSandboxEmail+" and "+envSandboxAPIKey+", up to the payment a person must make")
	buyer := fs.String("buyer", "buyer@example.com", "the buyer's `email`")
	seller := fs.String("seller", "seller@example.com", "the seller's `email`")
	verbose := fs.Bool("v", false, "log requests and webhook handling on stderr")
	positional, err := parseFlags(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err == nil {
		err = checkDemoArgs(positional, *milestone, *domain, *buyer, *seller)
	}
	if err != nil {
		return exitCode(stderr, name, err)
	}
	log := slog.New(slog.DiscardHandler)
	if *verbose {
		log = slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	f := flowFor(*milestone, *domain)
	if *sandbox {
		flags := apiFlags{sandbox: true, verbose: *verbose}
		return exitCode(stderr, name, demoRemote(ctx, &flags, f, *buyer, *seller, stdout, stderr))
	}
	return exitCode(stderr, name, demoEmulator(ctx, f, strings.ToLower(*buyer), strings.ToLower(*seller), stdout, log))
}

// checkDemoArgs refuses what the demo cannot run.
func checkDemoArgs(positional []string, milestone, domain bool, buyer, seller string) error {
	switch {
	case len(positional) > 0:
		return usagef("unexpected argument %q", positional[0])
	case milestone && domain:
		return usagef("--milestone and --domain cannot be used together: the demo runs one kind of sale; pick one, or neither for general merchandise")
	case strings.EqualFold(buyer, seller):
		return usagef("the buyer and the seller must be different customers")
	}
	for _, addr := range []string{buyer, seller} {
		if a, err := mail.ParseAddress(addr); err != nil || a.Address != addr {
			return usagef("%q is not an e-mail address", addr)
		}
	}
	return nil
}

// demo is one run of a flow: the clients that act, and where the table goes.
type demo struct {
	out  io.Writer
	flow flow
	// partner creates the transaction, is its broker, and acts As-Customer for the buyer
	// and the seller.
	partner *escrow.Client
	// buyer and seller use their own keys for what As-Customer may not do: accept, and
	// disbursement methods. They are nil on the sandbox, where only the partner's
	// credentials are known.
	buyer, seller           *escrow.Client
	partnerEmail            string
	buyerEmail, sellerEmail string
	reference               string
	now                     time.Time
	// emu is nil on the sandbox; the demo then stops where a person has to pay.
	emu *escrowtest.Server
	// hook and events receive the partner's webhooks; nil when none is registered.
	hook   *webhook.Handler
	events *eventLog
	// paymentFee is what the chosen payment method adds to the buyer's total (zero for
	// a wire), as the API's payment methods listing says.
	paymentFee escrow.Amount
}

// demoEmulator runs a flow to completion on an emulator of its own, with a webhook
// receiver on the loopback interface, and shuts both down before returning.
func demoEmulator(ctx context.Context, f flow, buyerEmail, sellerEmail string, out io.Writer, log *slog.Logger) (err error) {
	// A frozen clock: inspection periods end only when the demo moves time, never while it
	// runs, which keeps the output the same from run to run.
	srv := escrowtest.NewServer(escrowtest.WithClock(time.Now().UTC().Truncate(time.Second)), escrowtest.WithLogger(log))
	defer srv.Close()
	d := &demo{
		out: out, flow: f, emu: srv, now: srv.Now(),
		partnerEmail: demoPartner, buyerEmail: buyerEmail, sellerEmail: sellerEmail,
		reference: "demo-" + f.name + "-1",
	}
	connect := func(a escrowtest.Account) *escrow.Client {
		c, cerr := escrow.NewClient(a.Email, a.APIKey, escrow.WithBaseURL(srv.URL), escrow.WithHTTPClient(srv.Client()), escrow.WithLogger(log))
		err = errors.Join(err, cerr)
		return c
	}
	d.partner = connect(srv.AddPartner(demoPartner))
	d.buyer, d.seller = connect(srv.AddCustomer(buyerEmail)), connect(srv.AddCustomer(sellerEmail))
	if err != nil {
		return err
	}

	stop, err := d.listen(ctx, log)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, stop()) }()

	fmt.Fprintf(out, "escrow demo: %s, on the embedded emulator\n\n", f.title)
	tw := newTable(out)
	fmt.Fprintf(tw, "  partner\t%s\tcreates the transaction, is its broker, acts As-Customer for buyer and seller\n", demoPartner)
	fmt.Fprintf(tw, "  buyer\t%s\t\n", buyerEmail)
	fmt.Fprintf(tw, "  seller\t%s\t\n", sellerEmail)
	fmt.Fprintf(tw, "  webhook\tlocal receiver\tregistered for the partner; each delivery is confirmed with a GET\n")
	tw.Flush()
	fmt.Fprintln(out)

	tx, err := d.run(ctx)
	if err != nil {
		return err
	}
	// The last step's answer is rendered for the buyer; the partner sees every party's address.
	if tx, err = d.partner.Transactions.Get(ctx, tx.ID); err != nil {
		return err
	}
	d.settlement(tx)
	if s := tx.State(); s != escrow.StateComplete {
		return fmt.Errorf("the transaction ended %s, not complete", s)
	}
	fmt.Fprintf(out, "\nescrow demo: transaction %d is complete; %s confirmed.\n", tx.ID, plural(d.events.count(), "webhook event", "webhook events"))
	return nil
}

// listen serves a webhook.Handler on a loopback port and registers it as the partner's
// webhook. The emulator posts to it over plain HTTP, which its default client allows.
// stop shuts the receiver down: queued events first, then the HTTP server.
func (d *demo) listen(ctx context.Context, log *slog.Logger) (stop func() error, err error) {
	d.events = &eventLog{}
	d.hook = webhook.NewHandler(d.partner, d.events.callback, webhook.Options{Logger: log})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	hs := &http.Server{Handler: d.hook, ReadHeaderTimeout: 5 * time.Second, ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelDebug)}
	served := make(chan struct{})
	go func() {
		defer close(served)
		hs.Serve(ln)
	}()
	stop = func() error {
		// Not ctx: after an interrupt the receiver still deserves its few seconds to stop.
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		err := errors.Join(d.hook.Shutdown(sctx), hs.Shutdown(sctx))
		<-served
		if err != nil {
			return fmt.Errorf("stopping the webhook receiver: %w", err)
		}
		return nil
	}
	if _, err := d.partner.Webhooks.Create(ctx, escrow.Me, "http://"+ln.Addr().String()+"/escrow/events"); err != nil {
		return nil, errors.Join(fmt.Errorf("registering the webhook: %w", err), stop())
	}
	return stop, nil
}

// run creates the transaction and takes it as far as it can go: to the end on the
// emulator, to the payment on the sandbox. It returns the transaction as last seen.
func (d *demo) run(ctx context.Context) (*escrow.Transaction, error) {
	fmt.Fprintf(d.out, rowFormat, "STEP", "ACTOR", "STATE", "ITEMS", "BROKER FEE", "ESCROW FEE", "TOTAL", "SECURED", "DISBURSED")
	tx, err := d.partner.Transactions.Create(ctx, d.flow.request(d.buyerEmail, d.sellerEmail, d.reference, d.now))
	if err != nil {
		return nil, fmt.Errorf("create (%s): %w", actorBroker, err)
	}
	if err := d.row(ctx, "create", actorBroker, tx, nil, fmt.Sprintf("transaction %d, reference %s", tx.ID, d.reference)); err != nil {
		return nil, err
	}
	id := tx.ID
	tx, err = d.partner.Transactions.Agree(ctx, id, escrow.AsCustomer(d.buyerEmail))
	if err := d.row(ctx, "agree", actorBuyerAs, tx, err); err != nil {
		return nil, err
	}
	tx, err = d.partner.Transactions.Agree(ctx, id, escrow.AsCustomer(d.sellerEmail))
	if err := d.row(ctx, "agree", actorSellerAs, tx, err); err != nil {
		return nil, err
	}
	if funded, err := d.pay(ctx, tx); err != nil || !funded {
		return tx, err
	}
	if tx, err = d.payouts(ctx, id); err != nil {
		return nil, err
	}
	return d.flow.deliver(ctx, d, tx)
}

// pay starts the buyer's payment through As-Customer and, on the emulator, has it arrive.
// On the sandbox a person has to pay, so it explains what to do next and reports false.
func (d *demo) pay(ctx context.Context, tx *escrow.Transaction) (funded bool, err error) {
	if err := d.noteMethods(ctx, tx.ID); err != nil {
		return false, err
	}
	start := d.payOnPage
	if d.flow.payment == escrow.PaymentWireTransfer {
		start = d.payByWire
	}
	if tx, err = start(ctx, tx); err != nil || tx == nil {
		return false, err
	}
	err = d.emu.ApprovePayment(tx.ID)
	tx, err = d.refetch(ctx, tx.ID, err)
	return true, d.row(ctx, "payment arrives", actorEmulator, tx, err)
}

// noteMethods notes the payment methods offered to the buyer, and the payment fee of the
// flow's method.
func (d *demo) noteMethods(ctx context.Context, id int64) error {
	methods, err := d.partner.Transactions.GetPaymentMethods(ctx, id, escrow.AsCustomer(d.buyerEmail))
	if err != nil {
		return fmt.Errorf("payment methods: %w", err)
	}
	var offered []string
	for _, m := range methods.AvailablePaymentMethods {
		offered = append(offered, fmt.Sprintf("%s %s", m.Type, m.Total))
		if m.Type == d.flow.payment {
			// Card and PayPal cost the buyer a payment fee on top of the transaction's
			// sums, which the settlement must show for its numbers to be what was paid.
			d.paymentFee = m.Total.Sub(methods.TotalWithoutPaymentFee)
		}
	}
	d.note("the buyer may pay by " + strings.Join(offered, ", "))
	return nil
}

// payByWire shows the buyer's wire instructions and reports the wire sent. It returns the
// transaction then, or nil when a person has to wire the funds on the sandbox.
func (d *demo) payByWire(ctx context.Context, tx *escrow.Transaction) (*escrow.Transaction, error) {
	if d.buyer != nil {
		w, err := d.buyer.Transactions.GetWireTransferDetails(ctx, tx.ID)
		if err != nil {
			return nil, fmt.Errorf("wire transfer details: %w", err)
		}
		d.note(fmt.Sprintf("wire instructions for the buyer: %s, account %s (%s), SWIFT %s", w.BankName, w.CreditAccountNumber, w.CreditAccountName, w.SwiftCode))
	}
	if d.emu == nil {
		d.stopForPerson(tx, fmt.Sprintf("the buyer wires the funds at their bank, with the details of\n"+
			"  escrow transactions pay wire --sandbox %d   (with the buyer's own %s and %s)\n"+
			"and reports the wire sent:\n"+
			"  escrow transactions pay wire-sent --sandbox --as-customer %s %[1]d", tx.ID, envSandboxEmail, envSandboxAPIKey, d.buyerEmail))
		return nil, nil
	}
	_, err := d.partner.Transactions.MarkWireSent(ctx, tx.ID, escrow.AsCustomer(d.buyerEmail))
	tx, err = d.refetch(ctx, tx.ID, err)
	if err := d.row(ctx, "report wire sent", actorBuyerAs, tx, err); err != nil {
		return nil, err
	}
	return tx, nil
}

// payOnPage chooses the flow's payment method for the buyer, whose landing page it shows.
// It returns the transaction then, or nil when a person has to pay on the sandbox.
func (d *demo) payOnPage(ctx context.Context, tx *escrow.Transaction) (*escrow.Transaction, error) {
	page, err := d.partner.Transactions.ChoosePaymentMethod(ctx, tx.ID, d.flow.payment,
		&escrow.ChoosePaymentMethodRequest{ReturnURL: "https://market.example.com/orders/" + d.reference}, escrow.AsCustomer(d.buyerEmail))
	step := "choose " + string(d.flow.payment)
	if tx, err = d.refetch(ctx, tx.ID, err); err != nil {
		return nil, fmt.Errorf("%s (%s): %w", step, actorBuyerAs, err)
	}
	if err := d.row(ctx, step, actorBuyerAs, tx, nil, "the buyer pays on the landing page "+page.LandingPage); err != nil {
		return nil, err
	}
	if d.emu == nil {
		d.stopForPerson(tx, "open the landing page above and pay with one of the sandbox's test cards or accounts")
		return nil, nil
	}
	return tx, nil
}

// payouts has the seller and the broker choose how they are paid before the goods are
// accepted, so that the API disburses on acceptance without waiting for them (spec part 4,
// disbursement rule 4). Disbursement methods are not among what As-Customer may do, so
// the seller uses their own key.
func (d *demo) payouts(ctx context.Context, id int64) (*escrow.Transaction, error) {
	m, err := d.seller.Transactions.SelectDisbursementMethod(ctx, id, &escrow.DisbursementMethod{
		Type: escrow.DisbursementACH, AccountName: "Sam Seller", AccountType: "checking",
		BankABARoutingNumber: "121000248", BankAccountNumber: "000123456789", BankName: "First Bank of Example",
	})
	tx, err := d.refetch(ctx, id, err)
	if err := d.row(ctx, "payout by ach "+methodTotal(m, escrow.DisbursementACH), actorSeller, tx, err); err != nil {
		return nil, err
	}
	m, err = d.partner.Transactions.SelectDisbursementMethod(ctx, id, &escrow.DisbursementMethod{
		Type: escrow.DisbursementWireTransfer, AccountName: "Example Market LLC", BankName: "Second Bank of Example",
		BankSwiftCode: "EXAMUS33", BankAccountNumber: "9876543210",
	})
	tx, err = d.refetch(ctx, id, err)
	return tx, d.row(ctx, "payout by wire "+methodTotal(m, escrow.DisbursementWireTransfer), actorBroker, tx, err)
}

// methodTotal is what a disbursement method would pay out, as the API computed it.
func methodTotal(m *escrow.DisbursementMethods, typ escrow.DisbursementMethodType) string {
	if m == nil {
		return ""
	}
	for _, a := range m.AvailableDisbursementMethods {
		if escrow.DisbursementMethodType(a.Type) == typ {
			return a.Total.String()
		}
	}
	return ""
}

// refetch reads the transaction after a step whose answer is not the transaction, unless
// the step failed.
func (d *demo) refetch(ctx context.Context, id int64, stepErr error) (*escrow.Transaction, error) {
	if stepErr != nil {
		return nil, stepErr
	}
	return d.partner.Transactions.Get(ctx, id)
}

// row prints a step with the transaction's state and sums, remarks about it, then the
// webhook events it caused. A failed step is returned, named.
func (d *demo) row(ctx context.Context, step, actor string, tx *escrow.Transaction, err error, notes ...string) error {
	if err != nil {
		return fmt.Errorf("%s (%s): %w", step, actor, err)
	}
	a := tx.Totals()
	fmt.Fprintf(d.out, rowFormat, step, actor, tx.State(),
		a.Items.String(), a.BrokerFee.String(), a.EscrowFee.String(), a.Total.String(), a.Secured.String(), a.Disbursed.String())
	for _, n := range notes {
		d.note(n)
	}
	if steps := tx.NextSteps(); len(steps) > 0 {
		d.note("next: " + strings.Join(describeSteps(steps), "; "))
	}
	return d.settle(ctx)
}

// settle waits until the emulator has posted the step's webhooks and the receiver has
// confirmed them, then prints them. Waiting keeps events under the step that caused them.
func (d *demo) settle(ctx context.Context) error {
	if d.hook == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := d.emu.FlushWebhooks(ctx); err != nil {
		return fmt.Errorf("waiting for webhook deliveries: %w", err)
	}
	if err := d.hook.Flush(ctx); err != nil {
		return fmt.Errorf("waiting for webhook confirmations: %w", err)
	}
	for _, ev := range d.events.drain() {
		line := "    webhook: " + string(ev.Name)
		if len(ev.ItemIDs) > 0 {
			line += fmt.Sprintf(" (item %s)", joinIDs(ev.ItemIDs))
		}
		fmt.Fprintln(d.out, line)
	}
	return nil
}

// note prints a remark under the current step.
func (d *demo) note(text string) {
	fmt.Fprintln(d.out, "    "+text)
}

// stopForPerson ends a sandbox run where only a person can go on, saying what to do.
func (d *demo) stopForPerson(tx *escrow.Transaction, what string) {
	fmt.Fprintf(d.out, "\nescrow demo: stopped at transaction %d (%s): a person must act now.\n", tx.ID, tx.State())
	fmt.Fprintln(d.out, "Only the emulator can approve a payment by itself (ApprovePayment); on the sandbox,")
	fmt.Fprintln(d.out, what)
	target := fmt.Sprint(tx.ID)
	for _, it := range tx.Items {
		if it.Type == escrow.ItemMilestone {
			target = fmt.Sprintf("%d --item %d", tx.ID, it.ID) // and likewise for every milestone
			break
		}
	}
	fmt.Fprintf(d.out, "Then go on from the command line:\n")
	fmt.Fprintf(d.out, "  escrow transactions act --sandbox --as-customer %s %s ship --carrier UPS --tracking 1Z999AA10123456784\n", d.sellerEmail, target)
	fmt.Fprintf(d.out, "  escrow transactions act --sandbox --as-customer %s %s receive\n", d.buyerEmail, target)
	fmt.Fprintf(d.out, "  escrow transactions act --sandbox %s accept   (with the buyer's own %s and %s: As-Customer may not accept)\n", target, envSandboxEmail, envSandboxAPIKey)
}

// settlement prints who paid and received what, from the final transaction, with exact
// sums: the nets and the escrow fee add up to zero.
func (d *demo) settlement(tx *escrow.Transaction) {
	fmt.Fprintf(d.out, "\nSettlement, paid by %s:\n", d.flow.payment)
	const format = "  %-11s %-22s %9s %9s %9s\n"
	fmt.Fprintf(d.out, format, "PARTY", "CUSTOMER", "PAYS", "RECEIVES", "NET")
	totals := tx.Totals()
	var buyerPays escrow.Amount
	for _, role := range []escrow.Role{escrow.RoleBuyer, escrow.RoleSeller, escrow.RoleBroker} {
		p, ok := tx.Party(role)
		if !ok {
			continue
		}
		s := totals.Of(p.Customer)
		who := p.Customer
		if who == escrow.Me {
			who = d.partnerEmail
		}
		if role == escrow.RoleBuyer {
			buyerPays = s.Pays()
			s.Fees = s.Fees.Add(d.paymentFee)
		}
		fmt.Fprintf(d.out, format, role, who, s.Pays().String(), s.Receives.String(), s.Net().String())
	}
	fee := totals.EscrowFee
	fmt.Fprintf(d.out, format, "escrow fee", "", "", fee.String(), fee.String())
	if d.paymentFee.Cmp(escrow.Amount{}) > 0 {
		fmt.Fprintf(d.out, format, "payment fee", "", "", d.paymentFee.String(), d.paymentFee.String())
		fmt.Fprintf(d.out, "  The buyer paid %s for the transaction and %s more for paying by %s; a wire transfer costs no payment fee.\n",
			buyerPays, d.paymentFee, d.flow.payment)
	}
}

// joinIDs formats ids for a line of output.
func joinIDs(ids []int64) string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = fmt.Sprint(id)
	}
	return strings.Join(s, ", ")
}

// eventLog collects confirmed events from the webhook handler's goroutines until the demo
// prints them.
type eventLog struct {
	mu      sync.Mutex
	pending []webhook.ConfirmedEvent
	total   int
}

// callback is the webhook.Callback: it only records, so it never fails.
func (l *eventLog) callback(_ context.Context, ev webhook.ConfirmedEvent) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.pending = append(l.pending, ev)
	l.total++
	return nil
}

// drain returns the events recorded since the last drain.
func (l *eventLog) drain() []webhook.ConfirmedEvent {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := l.pending
	l.pending = nil
	return out
}

// count is how many events were recorded in all.
func (l *eventLog) count() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.total
}

// demoRemote runs a flow against a real environment (the sandbox) with the partner's
// credentials alone, up to the payment. No webhook is registered: the provider cannot
// reach a receiver on this machine's loopback interface.
func demoRemote(ctx context.Context, flags *apiFlags, f flow, buyerEmail, sellerEmail string, out, stderr io.Writer) error {
	client, release, err := flags.connect(stderr)
	if err != nil {
		return err
	}
	defer release()
	me, err := client.Customers.Get(ctx, escrow.Me)
	if err != nil {
		return fmt.Errorf("reading the account: %w", err)
	}
	now := time.Now()
	d := &demo{
		out: out, flow: f, partner: client, now: now, partnerEmail: me.Email,
		buyerEmail: strings.ToLower(buyerEmail), sellerEmail: strings.ToLower(sellerEmail),
		// A reference is unique per creator: a new one for every run.
		reference: fmt.Sprintf("demo-%s-%d", f.name, now.Unix()),
	}
	fmt.Fprintf(out, "escrow demo: %s, on %s\n\n", f.title, flags.environment())
	tw := newTable(out)
	fmt.Fprintf(tw, "  partner\t%s\tcreates the transaction, is its broker, acts As-Customer (approved partners only)\n", me.Email)
	fmt.Fprintf(tw, "  buyer\t%s\t\n", d.buyerEmail)
	fmt.Fprintf(tw, "  seller\t%s\t\n", d.sellerEmail)
	fmt.Fprintf(tw, "  webhook\tnone\tthe provider cannot reach this machine: use 'escrow webhooks listen' behind a public URL\n")
	tw.Flush()
	fmt.Fprintln(out)
	_, err = d.run(ctx)
	if errors.Is(err, escrow.ErrForbidden) {
		fmt.Fprintf(out, "\nThe API refused a step with 403. Acting As-Customer needs an approved partner account;\n"+
			"otherwise the buyer and the seller agree and pay through the e-mails the provider sends them.\n")
	}
	return err
}
