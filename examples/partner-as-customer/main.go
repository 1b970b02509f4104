// Command partner-as-customer shows an approved partner running escrows for its users
// through the As-Customer header: it agrees, ships and receives on behalf of the buyer and
// the seller, cancels as itself, meets the one step the API keeps for the buyer alone (accepting the
// goods answers 403, a typed escrow.ErrForbidden), and finds its transactions again through
// the partner listings and their filters.
//
// It runs against an embedded emulator (package escrowtest) only: As-Customer needs an
// account the provider has approved as a partner, and funding needs a real payment, which
// the emulator stands in for.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"time"

	escrow "github.com/escrowkit/escrow-go"
	"github.com/escrowkit/escrow-go/escrowtest"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	srv := newEmulator()
	defer srv.Close()
	if err := run(ctx, os.Stdout, srv); err != nil {
		fmt.Fprintln(os.Stderr, "partner-as-customer:", err)
		os.Exit(1)
	}
}

// start is the emulator's frozen clock: creation dates, and so the listing filters on
// them, come out the same in every run.
var start = time.Date(2025, 3, 3, 9, 0, 0, 0, time.UTC)

func newEmulator() *escrowtest.Server { return escrowtest.NewServer(escrowtest.WithClock(start)) }

const (
	alice = "alice@example.com" // buys a bicycle from bob
	bob   = "bob@example.com"
	carol = "carol@example.com" // buys a lamp from bob
)

// run drives three transactions of the partner "rides@example.com" on the emulator.
func run(ctx context.Context, w io.Writer, srv *escrowtest.Server) error {
	r, err := connect(w, srv)
	if err != nil {
		return err
	}
	// 1. A sale taken from agreement to payout, every step but acceptance As-Customer.
	bike, err := r.shipped(ctx)
	if err != nil {
		return err
	}
	if err := r.accepted(ctx, bike); err != nil {
		return err
	}
	// 2. A sale the seller withdraws before agreeing.
	srv.Advance(24 * time.Hour)
	if err := r.withdrawn(ctx); err != nil {
		return err
	}
	// 3. A sale waiting for carol's payment.
	srv.Advance(24 * time.Hour)
	if err := r.awaitingPayment(ctx); err != nil {
		return err
	}
	// The partner listings: the partner finds its users' transactions without their keys.
	return r.listings(ctx)
}

// rides is the partner's client, and the two users' own clients the example needs.
type rides struct {
	w                         io.Writer
	srv                       *escrowtest.Server
	partner, aliceOwn, bobOwn *escrow.Client
}

// as is the per-call option a partner acts for one of its users with.
func as(email string) escrow.RequestOption { return escrow.AsCustomer(email) }

func connect(w io.Writer, srv *escrowtest.Server) (*rides, error) {
	client := func(a escrowtest.Account) (*escrow.Client, error) {
		return escrow.NewClient(a.Email, a.APIKey, escrow.WithBaseURL(srv.URL), escrow.WithHTTPClient(srv.Client()))
	}
	r := &rides{w: w, srv: srv}
	var err error
	if r.partner, err = client(srv.AddPartner("rides@example.com")); err != nil {
		return nil, err
	}
	// The partner never holds its users' keys, except in this example: alice needs hers to
	// accept, which no partner may do for her.
	if r.aliceOwn, err = client(srv.AddCustomer(alice)); err != nil {
		return nil, err
	}
	r.bobOwn, err = client(srv.AddCustomer(bob))
	return r, err
}

// shipped creates alice's bicycle sale and takes it, As-Customer, through agreement,
// payment and shipping to receipt.
func (r *rides) shipped(ctx context.Context) (*escrow.Transaction, error) {
	w, partner := r.w, r.partner
	bike, err := partner.Transactions.Create(ctx, sale(alice, bob, "Road bicycle", "1450.00"))
	if err != nil {
		return nil, fmt.Errorf("create: %w", err)
	}
	fmt.Fprintf(w, "transaction %d: %s, created by the partner for %s and %s\n", bike.ID, bike.Description, alice, bob)
	for _, party := range []string{alice, bob} {
		if _, err := partner.Transactions.Agree(ctx, bike.ID, as(party)); err != nil {
			return nil, fmt.Errorf("agree as %s: %w", party, err)
		}
	}
	fmt.Fprintln(w, "  agree    as alice and as bob")
	pm, err := partner.Transactions.GetPaymentMethods(ctx, bike.ID, as(alice))
	if err != nil {
		return nil, fmt.Errorf("payment methods: %w", err)
	}
	fmt.Fprintf(w, "  alice owes %s by wire (payment methods listed as alice)\n", pm.TotalWithoutPaymentFee)
	if err := r.srv.ApprovePayment(bike.ID); err != nil { // the emulator stands in for alice's bank
		return nil, err
	}
	tx, err := partner.Transactions.Ship(ctx, bike.ID, &escrow.ShippingInformation{
		TrackingInformation: &escrow.TrackingInformation{Carrier: "DHL", TrackingID: "JD014600006281230704"},
	}, as(bob))
	if err != nil {
		return nil, fmt.Errorf("ship as bob: %w", err)
	}
	fmt.Fprintf(w, "  ship     as bob:   %s\n", state(tx))
	if tx, err = partner.Transactions.Receive(ctx, bike.ID, as(alice)); err != nil {
		return nil, fmt.Errorf("receive as alice: %w", err)
	}
	fmt.Fprintf(w, "  receive  as alice: %s\n", state(tx))
	return tx, nil
}

// accepted meets the steps the API keeps for the parties themselves: the buyer's
// acceptance, and the seller's payout details.
func (r *rides) accepted(ctx context.Context, bike *escrow.Transaction) error {
	w := r.w
	// Accepting releases the money to the seller: the API lets only the buyer do it.
	_, err := r.partner.Transactions.Accept(ctx, bike.ID, as(alice))
	var apiErr *escrow.APIError
	if !errors.Is(err, escrow.ErrForbidden) || !errors.As(err, &apiErr) {
		return fmt.Errorf("accept as alice: got %v, want a 403", err)
	}
	fmt.Fprintf(w, "  accept   as alice: refused, %d %s: %s\n", apiErr.StatusCode, apiErr.Code, apiErr.Message)
	tx, err := r.aliceOwn.Transactions.Accept(ctx, bike.ID)
	if err != nil {
		return fmt.Errorf("accept by alice: %w", err)
	}
	fmt.Fprintf(w, "  accept   by alice with her own key: %s\n", state(tx))
	// Payout details are the seller's too: the disbursement endpoints take no As-Customer.
	if _, err := r.bobOwn.Transactions.SelectDisbursementMethod(ctx, bike.ID, &escrow.DisbursementMethod{
		Type: escrow.DisbursementACH, AccountName: "Bob Builder", AccountType: "checking",
		BankABARoutingNumber: "021000021", BankAccountNumber: "000111222333", BankName: "Example Bank",
	}); err != nil {
		return fmt.Errorf("bob's disbursement method: %w", err)
	}
	if tx, err = r.partner.Transactions.Get(ctx, bike.ID); err != nil {
		return err
	}
	fmt.Fprintf(w, "  payout   chosen by bob with his own key: %s\n", state(tx))
	return nil
}

// withdrawn is a sale the seller withdraws before agreeing. Cancel is not among the
// actions a partner may take As-Customer, and needs not be: the partner is a party, and
// may cancel whenever anyone may.
func (r *rides) withdrawn(ctx context.Context) error {
	frame, err := r.partner.Transactions.Create(ctx, sale(alice, bob, "Spare frame", "300.00"))
	if err != nil {
		return fmt.Errorf("create: %w", err)
	}
	fmt.Fprintf(r.w, "transaction %d: %s\n", frame.ID, frame.Description)
	if _, err := r.partner.Transactions.Agree(ctx, frame.ID, as(alice)); err != nil {
		return fmt.Errorf("agree as alice: %w", err)
	}
	tx, err := r.partner.Transactions.Cancel(ctx, frame.ID, "sold elsewhere")
	if err != nil {
		return fmt.Errorf("cancel: %w", err)
	}
	fmt.Fprintf(r.w, "  agree    as alice; cancel as the partner: %s\n", state(tx))
	return nil
}

// awaitingPayment is carol's sale, agreed and waiting for her payment.
func (r *rides) awaitingPayment(ctx context.Context) error {
	lamp, err := r.partner.Transactions.Create(ctx, sale(carol, bob, "Brass lamp", "85.00"))
	if err != nil {
		return fmt.Errorf("create: %w", err)
	}
	for _, party := range []string{carol, bob} {
		if lamp, err = r.partner.Transactions.Agree(ctx, lamp.ID, as(party)); err != nil {
			return fmt.Errorf("agree as %s: %w", party, err)
		}
	}
	fmt.Fprintf(r.w, "transaction %d: %s\n  agree    as carol and as bob: %s\n", lamp.ID, lamp.Description, state(lamp))
	return nil
}

// listings prints the partner's transactions under each filter of the partner listings.
func (r *rides) listings(ctx context.Context) error {
	var carolID int64
	for c, err := range r.partner.Partner.AllCustomers(ctx, nil) {
		if err != nil {
			return fmt.Errorf("partner customers: %w", err)
		}
		if c.Email == carol {
			carolID = c.ID
		}
	}
	floor := escrow.MustAmount("100.00")
	listings := []struct {
		name string
		opt  escrow.PartnerTransactionsOptions
	}{
		{"all, 1 per page", escrow.PartnerTransactionsOptions{Limit: 1, SortDirection: escrow.SortAsc}},
		{"status=completed", escrow.PartnerTransactionsOptions{Status: escrow.StatusCompleted}},
		{"status=ongoing", escrow.PartnerTransactionsOptions{Status: escrow.StatusOngoing}},
		{fmt.Sprintf("customer_ids=%d (carol)", carolID), escrow.PartnerTransactionsOptions{CustomerIDs: []int64{carolID}}},
		{"min_amount=100.00", escrow.PartnerTransactionsOptions{MinAmount: &floor}},
		{"created since " + start.Add(24*time.Hour).Format(time.DateOnly), escrow.PartnerTransactionsOptions{InitiationStartDate: start.Add(24 * time.Hour)}},
	}
	fmt.Fprintln(r.w, "partner listings:")
	for _, l := range listings {
		var ids []string
		for tx, err := range r.partner.Partner.AllTransactions(ctx, &l.opt) {
			if err != nil {
				return fmt.Errorf("listing %s: %w", l.name, err)
			}
			ids = append(ids, fmt.Sprint(tx.ID))
		}
		fmt.Fprintf(r.w, "  %-27s %s\n", l.name, strings.Join(ids, " "))
	}
	return nil
}

// sale is one item sold by seller to buyer; the buyer pays the whole escrow fee, the
// API's default.
func sale(buyer, seller, title, price string) *escrow.CreateTransactionRequest {
	return &escrow.CreateTransactionRequest{
		Currency:    escrow.USD,
		Description: title,
		Parties: []escrow.PartyInput{
			{Role: escrow.RoleBuyer, Customer: buyer},
			{Role: escrow.RoleSeller, Customer: seller},
		},
		Items: []escrow.ItemInput{{
			Title: title, Type: escrow.ItemGeneralMerchandise, Category: escrow.CategorySportsAndRecreation,
			InspectionPeriod: escrow.Days(3), Quantity: 1,
			Schedule: []escrow.ScheduleInput{{Amount: escrow.MustAmount(price), PayerCustomer: buyer, BeneficiaryCustomer: seller}},
		}},
	}
}

// state sums up a transaction in words, as the SDK derives it.
func state(tx *escrow.Transaction) string {
	if s := tx.State(); s != escrow.StateComplete || tx.CloseDate.IsZero() {
		return string(s)
	}
	return "complete, closed " + tx.CloseDate.Format(time.DateOnly)
}
