// Command integration-test shows how to write integration tests for code that uses the
// escrow SDK: main_test.go runs each test against an embedded emulator (package
// escrowtest) and again against the provider's sandbox when ESCROW_SANDBOX_EMAIL and
// ESCROW_SANDBOX_API_KEY are set, skipping the sandbox otherwise, and skipping there the
// steps only the emulator can take (funding, moving the clock, injecting faults).
//
//	go test ./examples/integration-test
//	ESCROW_SANDBOX_EMAIL=you@example.com ESCROW_SANDBOX_API_KEY=... go test -v ./examples/integration-test
//
// The code under test is OpenEscrow below, with the SDK's Transaction.Completed. Run as a program, it opens one
// escrow where the tests would, prints it and cancels it.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"time"

	escrow "github.com/escrowkit/escrow-go"
	"github.com/escrowkit/escrow-go/escrowtest"
)

// Order is a purchase the account makes from a seller.
type Order struct {
	Ref      string // the order's id in our system, the escrow's reference
	Seller   string // the seller's e-mail address
	Title    string
	Price    escrow.Amount
	Currency escrow.Currency
}

// OpenEscrow opens the escrow in which the account buys the order's item. The buyer pays
// the whole escrow fee, the API's default.
func OpenEscrow(ctx context.Context, c *escrow.Client, o Order) (*escrow.Transaction, error) {
	return c.Transactions.Create(ctx, &escrow.CreateTransactionRequest{
		Reference:   o.Ref,
		Currency:    o.Currency,
		Description: o.Title,
		Parties: []escrow.PartyInput{
			{Role: escrow.RoleBuyer, Customer: escrow.Me},
			{Role: escrow.RoleSeller, Customer: o.Seller},
		},
		Items: []escrow.ItemInput{{
			Title: o.Title, Type: escrow.ItemGeneralMerchandise, Category: escrow.CategoryOtherMerchandise,
			InspectionPeriod: escrow.Days(3), Quantity: 1,
			Schedule: []escrow.ScheduleInput{{Amount: o.Price, PayerCustomer: escrow.Me, BeneficiaryCustomer: o.Seller}},
		}},
	})
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	c, seller, closeFn, err := connect()
	if err == nil {
		defer closeFn()
		err = run(ctx, os.Stdout, c, Order{
			Ref: fmt.Sprintf("order-%d", time.Now().Unix()), Seller: seller,
			Title: "Standing desk", Price: escrow.MustAmount("640.00"), Currency: escrow.USD,
		})
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "integration-test:", err)
		os.Exit(1)
	}
}

// connect returns a client for the sandbox when its credentials are set, and for a fresh
// emulator otherwise, with the seller to buy from.
func connect() (c *escrow.Client, seller string, closeFn func(), err error) {
	email, key := os.Getenv("ESCROW_SANDBOX_EMAIL"), os.Getenv("ESCROW_SANDBOX_API_KEY")
	if email != "" && key != "" {
		seller = os.Getenv("ESCROW_SANDBOX_SELLER")
		if seller == "" {
			seller = "seller@example.com"
		}
		c, err = escrow.NewClient(email, key, escrow.WithSandbox())
		return c, seller, func() {}, err
	}
	srv := escrowtest.NewServer()
	buyer := srv.AddCustomer("buyer@example.com")
	c, err = escrow.NewClient(buyer.Email, buyer.APIKey, escrow.WithBaseURL(srv.URL), escrow.WithHTTPClient(srv.Client()))
	return c, "seller@example.com", srv.Close, err
}

// run opens one escrow, prints it, and cancels it, which its creator may do until the
// seller agrees.
func run(ctx context.Context, w io.Writer, c *escrow.Client, o Order) error {
	tx, err := OpenEscrow(ctx, c, o)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "transaction %d (%s) on %s\n", tx.ID, tx.Reference, c.BaseURL())
	for _, it := range tx.Items {
		fmt.Fprintf(w, "  %s %s", it.Title, it.Schedule[0].Amount)
		for _, f := range it.Fees {
			fmt.Fprintf(w, ", %s fee %s paid by %s", f.Type, f.Amount, f.PayerCustomer)
		}
		fmt.Fprintln(w)
	}
	if tx, err = c.Transactions.Cancel(ctx, tx.ID, "example run"); err != nil {
		return err
	}
	fmt.Fprintf(w, "transaction %d cancelled: %t; complete: %t\n", tx.ID, tx.Cancelled(), tx.Completed())
	fmt.Fprintln(w, "the tests are the example: go test -v ./examples/integration-test")
	return nil
}
