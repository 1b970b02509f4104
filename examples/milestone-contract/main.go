// Command milestone-contract shows a services contract paid in milestones: one milestone
// item per stage of the work, each with its own due date, amount and inspection period,
// funded once and then delivered, received and accepted stage by stage through the item
// endpoint (ActOnItem), each stage paid out as soon as it is accepted. It prints every
// item's status and the exact amounts: prices, each party's share of the escrow fee, and
// what the buyer pays and the seller receives in the end.
//
// The buyer creates the contract with its own account; no partner is involved. By default
// it runs against an embedded emulator (package escrowtest). With ESCROW_SANDBOX_EMAIL and
// ESCROW_SANDBOX_API_KEY set, the sandbox account creates the same contract with the seller
// ESCROW_SANDBOX_SELLER (default seller@example.com), prints the fees the sandbox computes
// and cancels it: the rest needs the seller's agreement and a real payment.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"text/tabwriter"
	"time"

	escrow "github.com/escrowkit/escrow-go"
	"github.com/escrowkit/escrow-go/escrowtest"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := start(ctx, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "milestone-contract:", err)
		os.Exit(1)
	}
}

func start(ctx context.Context, w io.Writer) error {
	email, key := os.Getenv("ESCROW_SANDBOX_EMAIL"), os.Getenv("ESCROW_SANDBOX_API_KEY")
	if email == "" || key == "" {
		srv := newEmulator()
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
	return runSandbox(ctx, w, client, seller, time.Now().UTC().Truncate(24*time.Hour))
}

// epoch is the emulator's frozen clock, so that due dates and payout dates print the same
// in every run.
var epoch = time.Date(2025, 4, 1, 0, 0, 0, 0, time.UTC)

func newEmulator() *escrowtest.Server { return escrowtest.NewServer(escrowtest.WithClock(epoch)) }

// stage is one milestone of the contract.
type stage struct {
	title      string
	price      string
	due        int // days from the contract's start
	inspection int // days the buyer has to check the delivery
}

var stages = []stage{
	{"Design", "1500.00", 14, 5},
	{"Build", "4000.00", 42, 10},
	{"Launch", "1500.00", 56, 5},
}

// contract is the request: the fee is shared half and half, so every item carries the same
// two fee entries (the API wants the fee schedule identical across items).
func contract(seller string, from time.Time) *escrow.CreateTransactionRequest {
	req := &escrow.CreateTransactionRequest{
		Currency:    escrow.USD,
		Description: "Web shop for a bakery, in three milestones",
		Parties: []escrow.PartyInput{
			{Role: escrow.RoleBuyer, Customer: escrow.Me},
			{Role: escrow.RoleSeller, Customer: seller},
		},
	}
	for _, s := range stages {
		req.Items = append(req.Items, escrow.ItemInput{
			Title: s.title, Type: escrow.ItemMilestone, Category: escrow.CategoryBusinessAndInternet,
			InspectionPeriod: escrow.Days(s.inspection), Quantity: 1,
			Schedule: []escrow.ScheduleInput{{
				Amount: escrow.MustAmount(s.price), PayerCustomer: escrow.Me, BeneficiaryCustomer: seller,
				DueDate: escrow.Timestamp{Time: from.AddDate(0, 0, s.due)},
			}},
			Fees: []escrow.FeeInput{
				{Type: escrow.FeeEscrow, PayerCustomer: escrow.Me, Split: escrow.SplitHalf},
				{Type: escrow.FeeEscrow, PayerCustomer: seller, Split: escrow.SplitHalf},
			},
		})
	}
	return req
}

// run takes the contract from creation to the last payout on the emulator.
func run(ctx context.Context, w io.Writer, srv *escrowtest.Server) error {
	c, err := newContract(ctx, w, srv)
	if err != nil {
		return err
	}
	if err := c.fund(ctx); err != nil {
		return err
	}
	// A milestone contract moves item by item: an action on the whole transaction is refused.
	_, err = c.seller.Transactions.Ship(ctx, c.tx.ID, nil)
	var apiErr *escrow.APIError
	if !errors.As(err, &apiErr) {
		return fmt.Errorf("ship on the whole transaction: got %v, want it refused", err)
	}
	fmt.Fprintf(w, "ship on the whole transaction: refused, %d %s\n", apiErr.StatusCode, apiErr.Message)
	design, build, launch := c.tx.Items[0].ID, c.tx.Items[1].ID, c.tx.Items[2].ID

	// Design: delivered, checked and accepted ten days in.
	srv.Advance(10 * 24 * time.Hour)
	if err := c.steps(ctx, design, "day 10: design delivered, received and accepted", escrow.ActionShip, escrow.ActionReceive, escrow.ActionAccept); err != nil {
		return err
	}
	// Build: the buyer lets its 10-day inspection period run out, which counts as acceptance.
	srv.Advance(30 * 24 * time.Hour)
	if err := c.steps(ctx, build, "day 40: build delivered and received", escrow.ActionShip, escrow.ActionReceive); err != nil {
		return err
	}
	srv.Advance(10 * 24 * time.Hour)
	if err := c.steps(ctx, build, "day 50: the build's inspection period ended"); err != nil {
		return err
	}
	// Launch: the last acceptance completes the contract.
	srv.Advance(5 * 24 * time.Hour)
	if err := c.steps(ctx, launch, "day 55: launch delivered, received and accepted", escrow.ActionShip, escrow.ActionReceive, escrow.ActionAccept); err != nil {
		return err
	}
	final, err := c.buyer.Transactions.Get(ctx, c.tx.ID)
	if err != nil {
		return err
	}
	paid, received := settle(final)
	fmt.Fprintf(w, "complete %s: the buyer paid %s, the seller received %s\n",
		final.CloseDate.Format(time.DateOnly), paid, received)
	return nil
}

const dev = "dev@example.com" // the seller

// milestones is the contract between the bakery and the developer, as each of them sees it.
type milestones struct {
	w             io.Writer
	srv           *escrowtest.Server
	buyer, seller *escrow.Client
	tx            *escrow.Transaction
}

// newContract creates the contract; the seller agrees and chooses how to be paid.
func newContract(ctx context.Context, w io.Writer, srv *escrowtest.Server) (*milestones, error) {
	connect := func(a escrowtest.Account) (*escrow.Client, error) {
		return escrow.NewClient(a.Email, a.APIKey, escrow.WithBaseURL(srv.URL), escrow.WithHTTPClient(srv.Client()))
	}
	c := &milestones{w: w, srv: srv}
	var err error
	if c.buyer, err = connect(srv.AddCustomer("bakery@example.com")); err != nil {
		return nil, err
	}
	if c.seller, err = connect(srv.AddCustomer(dev)); err != nil {
		return nil, err
	}
	if c.tx, err = c.buyer.Transactions.Create(ctx, contract(dev, srv.Now())); err != nil {
		return nil, fmt.Errorf("create: %w", err)
	}
	fmt.Fprintf(w, "transaction %d: %s\n", c.tx.ID, c.tx.Description)
	printItems(w, c.tx, dev)
	if _, err := c.seller.Transactions.Agree(ctx, c.tx.ID); err != nil {
		return nil, fmt.Errorf("seller agrees: %w", err)
	}
	if _, err := c.seller.Transactions.SelectDisbursementMethod(ctx, c.tx.ID, &escrow.DisbursementMethod{
		Type: escrow.DisbursementWireTransfer, AccountName: "Dev & Co", BankName: "Example Bank",
		BankSwiftCode: "EXAMUS33", BankAccountNumber: "000987654321",
	}); err != nil {
		return nil, fmt.Errorf("seller's disbursement method: %w", err)
	}
	fmt.Fprintln(w, "the seller agreed and chose a wire for the payouts")
	return c, nil
}

// fund has the buyer fund the whole contract up front, by wire: the details come from
// the API every time, since they may differ between transactions.
func (c *milestones) fund(ctx context.Context) error {
	wire, err := c.buyer.Transactions.GetWireTransferDetails(ctx, c.tx.ID)
	if err != nil {
		return fmt.Errorf("wire details: %w", err)
	}
	pm, err := c.buyer.Transactions.GetPaymentMethods(ctx, c.tx.ID)
	if err != nil {
		return fmt.Errorf("payment methods: %w", err)
	}
	if _, err := c.buyer.Transactions.MarkWireSent(ctx, c.tx.ID); err != nil {
		return fmt.Errorf("mark wire sent: %w", err)
	}
	fmt.Fprintf(c.w, "the buyer wires %s to %s, account %s\n", pm.TotalWithoutPaymentFee, wire.BankName, wire.CreditAccountNumber)
	return c.srv.ApprovePayment(c.tx.ID) // the emulator stands in for the bank
}

// steps takes a milestone through the actions, each by the party whose step it is, then
// reports the contract under the heading.
func (c *milestones) steps(ctx context.Context, itemID int64, heading string, actions ...escrow.Action) error {
	for _, a := range actions {
		by := c.buyer
		if a == escrow.ActionShip {
			by = c.seller
		}
		if _, err := by.Transactions.ActOnItem(ctx, c.tx.ID, itemID, &escrow.ActionRequest{Action: a}); err != nil {
			return fmt.Errorf("%s item %d: %w", a, itemID, err)
		}
	}
	return report(ctx, c.w, c.buyer, c.tx.ID, dev, heading)
}

// report prints the items as the buyer now sees them.
func report(ctx context.Context, w io.Writer, c *escrow.Client, id int64, seller, what string) error {
	tx, err := c.Transactions.Get(ctx, id)
	if err != nil {
		return err
	}
	fmt.Fprintln(w, what)
	printItems(w, tx, seller)
	return nil
}

// printItems prints one line per milestone: due date, price, fee shares, status. The
// buyer's shares are told from the seller's by the seller's address: the buyer's own may be
// written "me".
func printItems(w io.Writer, tx *escrow.Transaction, seller string) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  item\ttitle\tdue\tinspection\tprice\tbuyer's fee\tseller's fee\tstatus")
	for _, it := range tx.Items {
		sch := it.Schedule[0]
		var buyerFee, sellerFee escrow.Amount
		for _, f := range it.Fees {
			if strings.EqualFold(f.PayerCustomer, seller) {
				sellerFee = f.Amount
			} else {
				buyerFee = f.Amount
			}
		}
		fmt.Fprintf(tw, "  %d\t%s\t%s\t%dd\t%s\t%s\t%s\t%s\n", it.ID, it.Title, sch.DueDate.Format(time.DateOnly),
			int(it.InspectionPeriod.Duration().Hours()/24), sch.Amount, buyerFee, sellerFee, it.State())
	}
	tw.Flush()
}

// settle is what the buyer pays (prices and its fee shares) and what the seller nets
// (prices less its fee shares), exactly, as the SDK totals them.
func settle(tx *escrow.Transaction) (paid, received escrow.Amount) {
	totals := tx.Totals()
	buyer, _ := tx.Party(escrow.RoleBuyer)
	seller, _ := tx.Party(escrow.RoleSeller)
	return totals.Of(buyer.Customer).Pays(), totals.Of(seller.Customer).Net()
}

// runSandbox creates the contract in the sandbox, prints what the sandbox computed, and
// cancels it, which its creator may do while the seller has not agreed.
func runSandbox(ctx context.Context, w io.Writer, c *escrow.Client, seller string, from time.Time) error {
	tx, err := c.Transactions.Create(ctx, contract(seller, from))
	if err != nil {
		return fmt.Errorf("create: %w", err)
	}
	fmt.Fprintf(w, "transaction %d: %s\n", tx.ID, tx.Description)
	printItems(w, tx, seller)
	paid, received := settle(tx)
	fmt.Fprintf(w, "once complete, the buyer will have paid %s and the seller received %s\n", paid, received)
	if _, err := c.Transactions.Cancel(ctx, tx.ID, "example run"); err != nil {
		return fmt.Errorf("cancel: %w", err)
	}
	fmt.Fprintf(w, "transaction %d cancelled\n", tx.ID)
	return nil
}
