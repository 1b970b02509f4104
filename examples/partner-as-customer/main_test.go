package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	escrow "github.com/escrowkit/escrow-go"
)

func TestRun(t *testing.T) {
	srv := newEmulator()
	defer srv.Close()
	var out bytes.Buffer
	if err := run(context.Background(), &out, srv); err != nil {
		t.Fatalf("run: %v\n%s", err, out.String())
	}
	t.Log("\n" + out.String())

	partner := srv.AddCustomer("rides@example.com") // a fresh key for the partner's account
	c, err := escrow.NewClient(partner.Email, partner.APIKey, escrow.WithBaseURL(srv.URL), escrow.WithHTTPClient(srv.Client()))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	want := map[int64]escrow.TransactionState{200001: escrow.StateComplete, 200002: escrow.StateCancelled, 200003: escrow.StateAwaitingPayment}
	for id, w := range want {
		tx, err := c.Transactions.Get(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if got := tx.State(); got != w {
			t.Errorf("transaction %d is %s, want %s", id, got, w)
		}
	}
	for _, line := range []string{
		"accept   as alice: refused, 403 forbidden:",
		"status=completed            200001\n",
		"status=ongoing              200003\n",
		"customer_ids=1004 (carol)   200003\n",
		"min_amount=100.00           200002 200001\n",
		"created since 2025-03-04    200003 200002\n",
	} {
		if !strings.Contains(out.String(), line) {
			t.Errorf("output lacks %q", line)
		}
	}
}
