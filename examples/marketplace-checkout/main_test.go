package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	escrow "github.com/escrowkit/escrow-go"
	"github.com/escrowkit/escrow-go/escrowtest"
)

func TestRun(t *testing.T) {
	srv := escrowtest.NewServer()
	defer srv.Close()
	var out bytes.Buffer
	if err := run(context.Background(), &out, srv); err != nil {
		t.Fatalf("run: %v\n%s", err, out.String())
	}
	t.Log("\n" + out.String())

	// The order is one transaction, complete, and every webhook call was answered.
	market := srv.AddCustomer("market@example.com") // a fresh key for the same account
	c, err := escrow.NewClient(market.Email, market.APIKey, escrow.WithBaseURL(srv.URL), escrow.WithHTTPClient(srv.Client()))
	if err != nil {
		t.Fatal(err)
	}
	page, err := c.Partner.Transactions(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Transactions) != 1 {
		t.Fatalf("%d transactions, want 1 for one order", len(page.Transactions))
	}
	tx := page.Transactions[0]
	if tx.Reference != "order-1042" || tx.CloseDate.IsZero() {
		t.Errorf("transaction %d: reference %q, close date %v; want order-1042, closed", tx.ID, tx.Reference, tx.CloseDate)
	}
	for _, it := range tx.Items {
		if it.Type.Transferable() && !(it.Status.Shipped && it.Status.Received && it.Status.Accepted) {
			t.Errorf("item %d status %+v, want shipped, received and accepted", it.ID, it.Status)
		}
		for _, s := range it.Schedule {
			if !s.Status.DisbursedToBeneficiary {
				t.Errorf("item %d not disbursed", it.ID)
			}
		}
	}
	// The receiver answers before the emulator records the call: wait for the records.
	if err := srv.FlushWebhooks(context.Background()); err != nil {
		t.Fatal(err)
	}
	var events []string
	for _, d := range srv.Deliveries() {
		if d.StatusCode != 200 {
			t.Errorf("delivery %+v: want answered 200", d)
		}
		events = append(events, d.Event)
	}
	if got := strings.Join(events, " "); !strings.Contains(got, "payment_approved ship receive accept") || !strings.HasSuffix(got, "complete") {
		t.Errorf("deliveries %q", got)
	}
	for _, want := range []string{
		"checkout order-1042: transaction 200001",
		"checkout order-1042 again: transaction 200001; transactions with that reference: 1",
		"redirect the buyer to https://",
		"webhook payment_approved: funds secured, the seller ships",
		"order order-1042 closed: transaction 200001 complete",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q", want)
		}
	}
}

// TestRunSandbox runs the sandbox half against the emulator, the account buying for itself.
func TestRunSandbox(t *testing.T) {
	srv := escrowtest.NewServer()
	defer srv.Close()
	acct := srv.AddCustomer("sandbox@example.com")
	c, err := escrow.NewClient(acct.Email, acct.APIKey, escrow.WithBaseURL(srv.URL), escrow.WithHTTPClient(srv.Client()))
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := runSandbox(context.Background(), &out, c, "seller@example.com", "order-7"); err != nil {
		t.Fatalf("runSandbox: %v\n%s", err, out.String())
	}
	list, err := c.Transactions.List(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Transactions) != 1 || !list.Transactions[0].IsCancelled {
		t.Errorf("transactions %+v, want one, cancelled", list.Transactions)
	}
	if !strings.Contains(out.String(), "checkout order-7 again: transaction 200001") {
		t.Errorf("output:\n%s", out.String())
	}
}
