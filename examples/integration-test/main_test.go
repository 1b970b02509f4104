package main

// Every test runs once per backend: the emulator always, the sandbox when its credentials
// are set. A step the sandbox cannot take without a person (the seller agreeing, a payment
// arriving, days passing) skips there through the backend's methods, so that each test
// says once what it checks and runs as far as each backend allows.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	escrow "github.com/escrowkit/escrow-go"
	"github.com/escrowkit/escrow-go/escrowtest"
)

// backend is where one run of a test goes.
type backend struct {
	buyer      *escrow.Client // the account under test
	buyerEmail string
	seller     string
	// On the emulator only: the seller's own client and the emulator's controls.
	sellerClient *escrow.Client
	srv          *escrowtest.Server
}

// forEachBackend runs test as the subtests "emulator" and "sandbox".
func forEachBackend(t *testing.T, test func(t *testing.T, b *backend)) {
	t.Run("emulator", func(t *testing.T) { test(t, emulator(t)) })
	t.Run("sandbox", func(t *testing.T) { test(t, sandbox(t)) })
}

// emulator starts a fresh emulator for one test; its clock stands still until Advance, so
// dates and inspection periods are the same in every run.
func emulator(t *testing.T) *backend {
	t.Helper()
	srv := escrowtest.NewServer(escrowtest.WithClock(time.Date(2025, 1, 6, 9, 0, 0, 0, time.UTC)))
	t.Cleanup(srv.Close)
	connect := func(a escrowtest.Account) *escrow.Client {
		c, err := escrow.NewClient(a.Email, a.APIKey, escrow.WithBaseURL(srv.URL), escrow.WithHTTPClient(srv.Client()))
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	return &backend{
		buyer:        connect(srv.AddCustomer("buyer@example.com")),
		buyerEmail:   "buyer@example.com",
		seller:       "seller@example.com",
		sellerClient: connect(srv.AddCustomer("seller@example.com")),
		srv:          srv,
	}
}

// sandbox connects to the provider's sandbox, or skips the test when no credentials are set.
func sandbox(t *testing.T) *backend {
	t.Helper()
	email, key := os.Getenv("ESCROW_SANDBOX_EMAIL"), os.Getenv("ESCROW_SANDBOX_API_KEY")
	if email == "" || key == "" {
		t.Skip("set ESCROW_SANDBOX_EMAIL and ESCROW_SANDBOX_API_KEY to run against the sandbox")
	}
	c, err := escrow.NewClient(email, key, escrow.WithSandbox())
	if err != nil {
		t.Fatal(err)
	}
	seller := os.Getenv("ESCROW_SANDBOX_SELLER")
	if seller == "" {
		seller = "seller@example.com"
	}
	return &backend{buyer: c, buyerEmail: email, seller: seller}
}

// isBuyer reports whether a transaction's customer field names the account under test:
// the emulator and the live API write the address; older emulators wrote "me".
func (b *backend) isBuyer(customer string) bool {
	return customer == "me" || strings.EqualFold(customer, b.buyerEmail)
}

// order is a purchase with a reference no other run has used: the sandbox keeps every
// transaction of every run.
func (b *backend) order(t *testing.T) Order {
	return Order{
		Ref:    fmt.Sprintf("%s-%d", strings.ReplaceAll(t.Name(), "/", "-"), time.Now().UnixNano()),
		Seller: b.seller, Title: "Standing desk", Price: escrow.MustAmount("640.00"), Currency: escrow.USD,
	}
}

// open is OpenEscrow that cancels the transaction when the test ends, unless it has moved on
// too far to be cancelled (which only happens on the emulator).
func (b *backend) open(t *testing.T, o Order) *escrow.Transaction {
	t.Helper()
	ctx := context.Background()
	tx, err := OpenEscrow(ctx, b.buyer, o)
	if err != nil {
		t.Fatalf("OpenEscrow: %v", err)
	}
	t.Cleanup(func() {
		if _, err := b.buyer.Transactions.Cancel(ctx, tx.ID, "test cleanup"); err != nil && b.srv == nil {
			t.Logf("cancelling %d: %v", tx.ID, err)
		}
	})
	return tx
}

// ship takes a fresh escrow to where the goods are on their way: the seller agrees and
// chooses how to be paid, the buyer pays, the seller ships. The seller's steps need the
// seller's own credentials, and the payment a person, so on the sandbox the test skips here.
func (b *backend) ship(t *testing.T, id int64) {
	t.Helper()
	if b.srv == nil {
		t.Skip("the seller's steps and the payment need the emulator")
	}
	ctx := context.Background()
	if _, err := b.sellerClient.Transactions.Agree(ctx, id); err != nil {
		t.Fatalf("seller agrees: %v", err)
	}
	if _, err := b.sellerClient.Transactions.SelectDisbursementMethod(ctx, id, &escrow.DisbursementMethod{
		Type: escrow.DisbursementACH, AccountName: "Sam Seller", AccountType: "checking",
		BankABARoutingNumber: "021000021", BankAccountNumber: "000123456789", BankName: "Example Bank",
	}); err != nil {
		t.Fatalf("seller's disbursement method: %v", err)
	}
	if err := b.srv.ApprovePayment(id); err != nil { // the buyer's bank, emulated
		t.Fatalf("ApprovePayment: %v", err)
	}
	if _, err := b.sellerClient.Transactions.Ship(ctx, id, nil); err != nil {
		t.Fatalf("seller ships: %v", err)
	}
}

func TestOpenEscrow(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		o := b.order(t)
		tx := b.open(t, o)

		if buyer, ok := tx.Party(escrow.RoleBuyer); !ok || !b.isBuyer(buyer.Customer) || !buyer.Agreed {
			t.Errorf("buyer %+v: want me, agreed at creation", buyer)
		}
		if seller, ok := tx.Party(escrow.RoleSeller); !ok || seller.Agreed {
			t.Errorf("seller %+v: want present, not agreed yet", seller)
		}
		it := tx.Items[0]
		if got := it.Schedule[0].Amount; got.String() != "640.00" {
			t.Errorf("price %s, want 640.00", got)
		}
		// The fee table is not public: the emulator's is documented, the sandbox's is whatever
		// it is, so the exact amount is checked on the emulator only.
		var fee *escrow.Fee
		for i := range it.Fees {
			if it.Fees[i].Type == escrow.FeeEscrow {
				fee = &it.Fees[i]
			}
		}
		if fee == nil || !b.isBuyer(fee.PayerCustomer) || fee.Amount.IsZero() || fee.Amount.IsNegative() {
			t.Fatalf("fees %+v: want an escrow fee paid by the buyer", it.Fees)
		}
		if b.srv != nil && fee.Amount.String() != "20.80" {
			t.Errorf("escrow fee %s, want 20.80 (3.25 %%)", fee.Amount)
		}

		// The order's reference finds the escrow again.
		found, err := b.buyer.Transactions.GetByReference(context.Background(), o.Ref)
		if err != nil || found.ID != tx.ID {
			t.Errorf("GetByReference(%q) = %v, %v; want transaction %d", o.Ref, found, err, tx.ID)
		}
	})
}

func TestOpenEscrowRefusesUppercaseCurrency(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		o := b.order(t)
		o.Currency = "USD" // the API wants "usd"
		_, err := OpenEscrow(context.Background(), b.buyer, o)
		var ve *escrow.ValidationError
		if !errors.As(err, &ve) {
			t.Fatalf("err = %v, want a *escrow.ValidationError", err)
		}
		if ve.Field("currency") == nil {
			t.Errorf("fields %v, want one on currency", ve.Fields())
		}
	})
}

func TestEscrowSettlesAfterAcceptance(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		ctx := context.Background()
		tx := b.open(t, b.order(t))
		b.ship(t, tx.ID)

		if _, err := b.buyer.Transactions.Receive(ctx, tx.ID); err != nil {
			t.Fatal(err)
		}
		got, err := b.buyer.Transactions.Accept(ctx, tx.ID)
		if err != nil {
			t.Fatal(err)
		}
		if !got.Completed() || got.CloseDate.IsZero() {
			t.Errorf("after acceptance: complete %t, closed %v; want complete and closed", got.Completed(), got.CloseDate)
		}
	})
}

// TestEscrowSettlesWhenInspectionLapses moves the emulator's clock instead of waiting three
// days.
func TestEscrowSettlesWhenInspectionLapses(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		ctx := context.Background()
		tx := b.open(t, b.order(t))
		b.ship(t, tx.ID)
		if _, err := b.buyer.Transactions.Receive(ctx, tx.ID); err != nil {
			t.Fatal(err)
		}

		get := func() *escrow.Transaction {
			got, err := b.buyer.Transactions.Get(ctx, tx.ID)
			if err != nil {
				t.Fatal(err)
			}
			return got
		}
		b.srv.Advance(72*time.Hour - time.Second)
		if get().Completed() {
			t.Fatal("complete before the inspection period ended")
		}
		b.srv.Advance(time.Second)
		if got := get(); !got.Items[0].Status.Accepted || !got.Completed() {
			t.Errorf("after the inspection period: status %+v, complete %t; want accepted, complete", got.Items[0].Status, got.Completed())
		}
	})
}

// TestOpenEscrowSurvivesALostAnswer has the emulator create the transaction and then drop
// the connection, as a timeout would: the reference keeps it from being created twice.
func TestOpenEscrowSurvivesALostAnswer(t *testing.T) {
	b := emulator(t)
	if err := b.srv.InjectFault(escrowtest.Fault{Endpoint: "POST /transaction", Drop: escrowtest.DropAfter}); err != nil {
		t.Fatal(err)
	}
	tx := b.open(t, b.order(t))
	b.srv.ClearFaults()

	list, err := b.buyer.Transactions.List(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Transactions) != 1 || list.Transactions[0].ID != tx.ID {
		t.Errorf("%d transactions, want only %d", len(list.Transactions), tx.ID)
	}
}

// TestRun runs the program itself on the emulator.
func TestRun(t *testing.T) {
	b := emulator(t)
	var out bytes.Buffer
	o := b.order(t)
	if err := run(context.Background(), &out, b.buyer, o); err != nil {
		t.Fatalf("run: %v\n%s", err, out.String())
	}
	for _, want := range []string{"transaction 200001 (" + o.Ref + ")", "escrow fee 20.80 paid by ", "cancelled: true"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}
