package main

import (
	"fmt"
	"strings"
	"testing"

	escrow "github.com/escrowkit/escrow-go"
)

// TestCLIExplainsAStalledSale: a sale whose seller chose no payout method stalls after
// the inspection period; 'emulator advance', 'emulator ledger' and 'transactions get' say
// who must do what and why nothing was paid out, and the seller's choice, made with --as
// and no key copied, completes it.
func TestCLIExplainsAStalledSale(t *testing.T) {
	e := newEmulator(t)
	tx := e.sale(t, "stalled-1")
	id := fmt.Sprint(tx.ID)
	for _, args := range [][]string{
		{"transactions", "act", id, "agree", "--as-customer", "buyer@example.com"},
		{"transactions", "act", id, "agree", "--as-customer", "seller@example.com"},
	} {
		if code, _, errOut := e.api(t, 3, args...); code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, errOut)
		}
	}
	code, out, _ := e.api(t, 2, "transactions", "get", id)
	if code != 0 || !strings.Contains(out, "next: buyer@example.com pays") {
		t.Errorf("get before funding: exit %d\n%s", code, out)
	}
	if err := e.srv.ApprovePayment(tx.ID); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"transactions", "act", id, "ship", "--as-customer", "seller@example.com"},
		{"transactions", "act", id, "receive", "--as-customer", "buyer@example.com"},
	} {
		if code, _, errOut := e.api(t, 3, args...); code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, errOut)
		}
	}

	code, out, errOut := e.api(t, 2, "emulator", "advance", "1d")
	want := []string{
		"transaction " + id + ": funded (item " + fmt.Sprint(tx.Items[0].ID) + " accepted), paid out 0.00",
		"next: seller@example.com selects a disbursement method",
		"not paid out: 250.00 owed to seller@example.com (seller) for item",
		"no disbursement method selected",
	}
	for _, w := range want {
		if code != 0 || !strings.Contains(out, w) {
			t.Errorf("advance: exit %d, want %q in\n%s%s", code, w, out, errOut)
		}
	}
	code, out, _ = e.api(t, 2, "emulator", "ledger", id)
	if code != 0 || !strings.Contains(out, "Held  258.13") || !strings.Contains(out, "no disbursement method selected") {
		t.Errorf("ledger: exit %d\n%s", code, out)
	}
	code, out, _ = e.api(t, 2, "transactions", "get", id)
	if code != 0 || !strings.Contains(out, "next: seller@example.com selects a disbursement method") ||
		!strings.Contains(out, "nothing owed to seller@example.com is paid out until then") {
		t.Errorf("get: exit %d\n%s", code, out)
	}

	code, out, _ = e.api(t, 2, "transactions", "list")
	if code != 0 || !strings.Contains(out, "NEXT") || !strings.Contains(out, "seller@example.com selects a disbursement method") {
		t.Errorf("list: exit %d\n%s", code, out)
	}

	// The seller chooses, as itself, through --as: the emulator hands the CLI its key.
	code, out, errOut = e.api(t, 3, "transactions", "disbursement", "add", id, "--as", "seller@example.com",
		"--type", "ach", "--account-name", "Sam Seller", "--account-type", "checking",
		"--routing-number", "121000248", "--account-number", "000123456789", "--bank-name", "First Bank")
	if code != 0 || !strings.Contains(out, "paid out 250.00") {
		t.Errorf("disbursement add --as: exit %d\n%s%s", code, out, errOut)
	}
	code, out, _ = e.api(t, 2, "transactions", "get", id)
	if code != 0 || !strings.Contains(out, "State        complete") || strings.Contains(out, "next:") {
		t.Errorf("get after the choice: exit %d\n%s", code, out)
	}
}

// TestAsNeedsAnEmulator: --as says why it cannot work against the live API, and what to
// use there instead.
func TestAsNeedsAnEmulator(t *testing.T) {
	t.Setenv(envBaseURL, "")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"customers", "me", "--as", "b@example.com"}, "--as works against an emulator only"},
		{[]string{"customers", "me", "--as", "b@example.com", "--sandbox"}, "set ESCROW_EMAIL and ESCROW_API_KEY"},
		{[]string{"customers", "me", "--as", "b@example.com", "--base-url", "https://api.example.com/2017-09-01/"}, "not on a loopback address"},
		{[]string{"transactions", "act", "1", "agree", "--as", "b@example.com", "--as-customer", "c@example.com", "--base-url", "https://127.0.0.1:1/2017-09-01/"}, "--as and --as-customer do not go together"},
	} {
		code, _, errOut := cli(t, c.args...)
		if code != exitUsage || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: exit %d, want %q in %s", c.args, code, c.want, errOut)
		}
	}
}

// TestDescribeStepsJoinsAChoice: accept and reject of one good are one choice, on one line;
// steps of other goods or parties stay apart.
func TestDescribeStepsJoinsAChoice(t *testing.T) {
	b, s := "b@example.com", "s@example.com"
	got := describeSteps([]escrow.NextStep{
		{Role: escrow.RoleBuyer, Customer: b, Action: escrow.NextAccept, ItemID: 7},
		{Role: escrow.RoleBuyer, Customer: b, Action: escrow.NextReject, ItemID: 7},
		{Role: escrow.RoleSeller, Customer: s, Action: escrow.NextAcceptReturn},
		{Role: escrow.RoleSeller, Customer: s, Action: escrow.NextRejectReturn},
		{Role: escrow.RoleBuyer, Customer: b, Action: escrow.NextAccept, ItemID: 8},
		{Role: escrow.RoleSeller, Customer: s, Action: escrow.NextShip, ItemID: 9},
	})
	want := []string{
		"b@example.com accepts or rejects the goods of item 7",
		"s@example.com accepts or rejects the returned goods",
		"b@example.com accepts the goods of item 8",
		"s@example.com ships the goods of item 9",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
