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
	srv := newEmulator()
	defer srv.Close()
	var out bytes.Buffer
	if err := run(context.Background(), &out, srv); err != nil {
		t.Fatalf("run: %v\n%s", err, out.String())
	}
	t.Log("\n" + out.String())

	buyer := srv.AddCustomer("bakery@example.com")
	c, err := escrow.NewClient(buyer.Email, buyer.APIKey, escrow.WithBaseURL(srv.URL), escrow.WithHTTPClient(srv.Client()))
	if err != nil {
		t.Fatal(err)
	}
	tx, err := c.Transactions.Get(context.Background(), 200001)
	if err != nil {
		t.Fatal(err)
	}
	if got := tx.CloseDate.Format("2006-01-02"); got != "2025-05-26" {
		t.Errorf("closed %s, want 2025-05-26 (day 55)", got)
	}
	for _, it := range tx.Items {
		if !it.Status.Accepted || !it.Schedule[0].Status.DisbursedToBeneficiary {
			t.Errorf("item %d %s: status %+v, schedule %+v; want accepted and paid out", it.ID, it.Title, it.Status, it.Schedule[0].Status)
		}
	}
	// 1500.00 and 4000.00 milestones pay 3.575 %: 53.63 and 143.00, shared half and half,
	// the buyer taking the odd cent.
	for _, line := range []string{
		"  300002  Build   2025-05-13  10d         4000.00  71.50        71.50         in_inspection\n",
		"day 50: the build's inspection period ended\n",
		"  300002  Build   2025-05-13  10d         4000.00  71.50        71.50         disbursed\n",
		"complete 2025-05-26: the buyer paid 7125.14, the seller received 6874.88\n",
	} {
		if !strings.Contains(out.String(), line) {
			t.Errorf("output lacks %q", line)
		}
	}
}

// TestRunSandbox runs the sandbox half against the emulator.
func TestRunSandbox(t *testing.T) {
	srv := escrowtest.NewServer(escrowtest.WithClock(epoch))
	defer srv.Close()
	acct := srv.AddCustomer("sandbox@example.com")
	c, err := escrow.NewClient(acct.Email, acct.APIKey, escrow.WithBaseURL(srv.URL), escrow.WithHTTPClient(srv.Client()))
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := runSandbox(context.Background(), &out, c, "seller@example.com", epoch); err != nil {
		t.Fatalf("runSandbox: %v\n%s", err, out.String())
	}
	tx, err := c.Transactions.Get(context.Background(), 200001)
	if err != nil {
		t.Fatal(err)
	}
	if !tx.IsCancelled {
		t.Error("the sandbox run left its transaction open")
	}
	if want := "the buyer will have paid 7125.14 and the seller received 6874.88"; !strings.Contains(out.String(), want) {
		t.Errorf("output lacks %q:\n%s", want, out.String())
	}
}
