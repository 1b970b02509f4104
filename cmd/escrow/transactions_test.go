package main

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"

	escrow "github.com/escrowkit/escrow-go"
)

func TestTransactionsList(t *testing.T) {
	e := newEmulator(t)
	for i := range 23 {
		e.sale(t, fmt.Sprintf("order-%02d", i))
	}

	// Three pages of 10 are walked; newest first by default.
	code, out, errOut := e.api(t, 2, "transactions", "list", "--per-page", "10", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var txs []escrow.Transaction
	if err := json.Unmarshal([]byte(out), &txs); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if len(txs) != 23 || txs[0].Reference != "order-22" || txs[22].Reference != "order-00" {
		t.Fatalf("%d transactions, first %q", len(txs), txs[0].Reference)
	}
	if errOut != "" {
		t.Errorf("progress on a stderr that is not a terminal: %q", errOut)
	}

	code, out, _ = e.api(t, 2, "transactions", "list", "--limit", "2", "--asc")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if code != 0 || len(lines) != 3 || !strings.HasPrefix(lines[0], "ID ") ||
		!strings.Contains(lines[1], "order-00") || !strings.Contains(lines[1], "awaiting_agreement") || !strings.Contains(lines[1], "250.00") {
		t.Errorf("exit %d:\n%s", code, out)
	}

	// An empty listing is an empty JSON list, not null.
	other := e.srv.AddCustomer("nobody@example.com")
	t.Setenv(envEmail, other.Email)
	t.Setenv(envAPIKey, other.APIKey)
	if code, out, _ := e.api(t, 2, "transactions", "list", "--json"); code != 0 || strings.TrimSpace(out) != "[]" {
		t.Errorf("exit %d: %q", code, out)
	}
}

func TestTransactionsGet(t *testing.T) {
	e := newEmulator(t)
	tx := e.sale(t, "order-7")
	id := fmt.Sprint(tx.ID)

	for _, args := range [][]string{{id}, {"--reference", "order-7"}} {
		code, out, errOut := e.api(t, 2, append([]string{"transactions", "get"}, append(args, "--json")...)...)
		var got escrow.Transaction
		if err := json.Unmarshal([]byte(out), &got); code != 0 || err != nil {
			t.Fatalf("%v: exit %d, %v\n%s%s", args, code, err, out, errOut)
		}
		if got.ID != tx.ID || got.Reference != "order-7" || len(got.Items) != 1 || got.Items[0].Schedule[0].Amount.String() != "250.00" {
			t.Errorf("%v: %+v", args, got)
		}
	}

	code, out, _ := e.api(t, 2, "transactions", "get", id)
	for _, want := range []string{"Transaction  " + id, "State        awaiting_agreement", "buyer    buyer@example.com   no", "general_merchandise", "escrow fee 8.13"} {
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("exit %d, missing %q in\n%s", code, want, out)
		}
	}

	code, _, errOut := e.api(t, 2, "transactions", "get", "999")
	if code != exitAPI || !strings.Contains(errOut, "escrow transactions get: GET /2017-09-01/transaction/999: 404") {
		t.Errorf("exit %d: %s", code, errOut)
	}
}

func TestTransactionsAct(t *testing.T) {
	e := newEmulator(t)
	tx := e.sale(t, "")
	id := fmt.Sprint(tx.ID)

	code, out, errOut := e.api(t, 2, "transactions", "act", id, "agree", "--as-customer", "buyer@example.com", "--json")
	var got escrow.Transaction
	if err := json.Unmarshal([]byte(out), &got); code != 0 || err != nil {
		t.Fatalf("exit %d, %v\n%s%s", code, err, out, errOut)
	}
	if p, _ := got.Party(escrow.RoleBuyer); !p.Agreed {
		t.Errorf("the buyer has not agreed: %+v", got.Parties)
	}

	// Flags after the arguments, as people type them.
	code, out, errOut = e.api(t, 2, "transactions", "act", id, "agree", "--as-customer", "seller@example.com")
	if code != 0 || !strings.HasPrefix(out, "agree: done.") || !strings.Contains(out, "awaiting_payment") {
		t.Errorf("exit %d\n%s%s", code, out, errOut)
	}

	// A step the state does not allow: the API's 400, exit 1.
	code, _, errOut = e.api(t, 2, "transactions", "act", id, "receive", "--as-customer", "buyer@example.com")
	if code != exitAPI || !strings.Contains(errOut, "400") || !strings.Contains(errOut, "receive") {
		t.Errorf("exit %d: %s", code, errOut)
	}

	if err := e.srv.ApprovePayment(tx.ID); err != nil {
		t.Fatal(err)
	}
	code, out, errOut = e.api(t, 2, "transactions", "act", id, "ship", "--carrier", "UPS", "--tracking", "1Z999", "--as-customer", "seller@example.com")
	if code != 0 || !strings.Contains(out, "State        shipped") {
		t.Errorf("exit %d\n%s%s", code, out, errOut)
	}
	// The API refuses accept through As-Customer: exit 1 with its 403.
	code, _, errOut = e.api(t, 2, "transactions", "act", id, "receive", "--as-customer", "buyer@example.com")
	if code != 0 {
		t.Fatalf("receive: exit %d: %s", code, errOut)
	}
	code, _, errOut = e.api(t, 2, "transactions", "act", id, "accept", "--as-customer", "buyer@example.com")
	if code != exitAPI || !strings.Contains(errOut, "403") {
		t.Errorf("accept As-Customer: exit %d: %s", code, errOut)
	}
	// With the buyer's own key it goes through.
	buyer := e.srv.AddCustomer("buyer@example.com")
	t.Setenv(envEmail, buyer.Email)
	t.Setenv(envAPIKey, buyer.APIKey)
	code, out, errOut = e.api(t, 2, "transactions", "act", id, "accept")
	if code != 0 || !strings.Contains(out, "accepted") {
		t.Errorf("accept: exit %d\n%s%s", code, out, errOut)
	}
}

// TestTransactionsActValidation: a 422 is printed with the path of every refused field.
func TestTransactionsActValidation(t *testing.T) {
	e := newEmulator(t)
	tx := e.sale(t, "")
	// agree applies to whole transactions only: on the item path it is refused on "action".
	code, out, errOut := e.api(t, 2, "transactions", "act", fmt.Sprint(tx.ID), "agree", "--item", fmt.Sprint(tx.Items[0].ID), "--as-customer", "buyer@example.com")
	if code != exitAPI || out != "" {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	want := fmt.Sprintf("escrow transactions act: PATCH /2017-09-01/transaction/%d/item/%d: 422: the request was refused:\n  action: ", tx.ID, tx.Items[0].ID)
	if !strings.HasPrefix(errOut, want) {
		t.Errorf("got\n%s\nwant a start of\n%s", errOut, want)
	}
}

// TestTransactionsActSendsActionsTheSDKDoesNotKnow: like the SDK, the CLI sends an action
// that is not in the SDK's table, with the flags given, and the API decides (here the
// emulator's 422 on "action").
func TestTransactionsActSendsActionsTheSDKDoesNotKnow(t *testing.T) {
	e := newEmulator(t)
	tx := e.sale(t, "")
	code, out, errOut := e.api(t, 2, "transactions", "act", fmt.Sprint(tx.ID), "escalate", "--reason", "late", "--as-customer", "buyer@example.com")
	if code != exitAPI || out != "" || !strings.Contains(errOut, "422") || !strings.Contains(errOut, "action") {
		t.Errorf("exit %d, want %d with the API's 422 on action\n%s%s", code, exitAPI, out, errOut)
	}
}

func TestTransactionsUsage(t *testing.T) {
	e := newEmulator(t)
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"transactions"}, "usage: escrow transactions <command>"},
		{[]string{"transactions", "delete"}, `unknown command "delete"`},
		{[]string{"transactions", "get"}, "give a transaction id or --reference"},
		{[]string{"transactions", "get", "7", "--reference", "x"}, "give a transaction id or --reference"},
		{[]string{"transactions", "get", "seven"}, `transaction id "seven" is not a positive integer`},
		{[]string{"transactions", "get", "7", "--bogus"}, "no flag --bogus here: its flags are"},
		{[]string{"transactions", "list", "--per-page", "500"}, "--per-page must be from 1 to 100"},
		{[]string{"transactions", "list", "extra"}, `unexpected argument "extra"`},
		{[]string{"transactions", "act", "7"}, "want a transaction id and an action, got 1"},
		{[]string{"transactions", "act", "7", "Explode!"}, `"Explode!" is no action name`},
		{[]string{"transactions", "act", "7", "agree", "--carrier", "UPS"}, "go with ship and ship_return only"},
		{[]string{"transactions", "act", "7", "ship", "--reason", "why"}, "--reason goes with cancel only"},
		{[]string{"transactions", "act", "7", "ship", "--authorization", "fax"}, "--authorization must be"},
		{[]string{"transactions", "act", "7", "ship", "--item", "-1"}, "--item must be a positive id"},
		{[]string{"transactions", "list", "--sandbox", "--base-url", e.srv.URL}, "cannot be used together"},
		{[]string{"transactions", "list", "--base-url", e.srv.URL, "--ca-cert", "/nonexistent.pem"}, "--ca-cert: open /nonexistent.pem"},
		{[]string{"transactions", "list", "--base-url", "ftp://example.com/"}, "escrow transactions list:"},
	}
	for _, tc := range tests {
		code, out, errOut := cli(t, tc.args...)
		if code != exitUsage || !strings.Contains(out+errOut, tc.want) {
			t.Errorf("%v: exit %d, want 2 with %q; output:\n%s%s", tc.args, code, tc.want, out, errOut)
		}
	}
	if code, out, _ := cli(t, "transactions", "act", "-h"); code != 0 {
		t.Errorf("-h: exit %d\n%s", code, out)
	}
}

// TestCredentials: missing variables are named, values never printed, and wrong ones are
// the API's 401 (exit 1), still without the key.
func TestCredentials(t *testing.T) {
	e := newEmulator(t)
	key := e.partner.APIKey

	t.Setenv(envEmail, "")
	code, out, errOut := e.api(t, 2, "transactions", "list")
	if code != exitUsage || !strings.Contains(errOut, "credentials for "+e.srv.URL+" are missing: set ESCROW_EMAIL (the account's e-mail address)") ||
		strings.Contains(errOut, "ESCROW_API_KEY") || strings.Contains(out+errOut, key) {
		t.Errorf("exit %d\n%s%s", code, out, errOut)
	}

	t.Setenv(envEmail, e.partner.Email)
	t.Setenv(envAPIKey, "")
	code, _, errOut = cli(t, "customers", "me")
	if code != exitUsage || !strings.Contains(errOut, "credentials for production are missing: set ESCROW_API_KEY") {
		t.Errorf("exit %d: %s", code, errOut)
	}

	// The sandbox reads its own variables, not the production ones.
	t.Setenv(envAPIKey, key)
	code, _, errOut = cli(t, "webhooks", "list", "--sandbox")
	if code != exitUsage || !strings.Contains(errOut, "set ESCROW_SANDBOX_EMAIL") || strings.Contains(errOut, key) {
		t.Errorf("exit %d: %s", code, errOut)
	}

	wrong := key[:len(key)-4] + "XXXX"
	t.Setenv(envAPIKey, wrong)
	code, out, errOut = e.api(t, 2, "customers", "me")
	if code != exitAPI || !strings.Contains(errOut, "401") || strings.Contains(out+errOut, wrong) || strings.Contains(out+errOut, key) {
		t.Errorf("exit %d\n%s%s", code, out, errOut)
	}
}

// TestUntrustedCertificate: without --ca-cert the emulator's certificate is refused, and the
// message says what to do.
func TestUntrustedCertificate(t *testing.T) {
	e := newEmulator(t)
	code, _, errOut := cli(t, "customers", "me", "--base-url", e.srv.URL)
	if code != exitAPI || !strings.Contains(errOut, "certificate signed by unknown authority") || !strings.Contains(errOut, "--ca-cert") {
		t.Errorf("exit %d: %s", code, errOut)
	}
}

func TestCustomersMe(t *testing.T) {
	e := newEmulator(t)
	code, out, errOut := e.api(t, 2, "customers", "me")
	if code != 0 || !strings.Contains(out, "E-mail                   market@example.com") || !strings.Contains(out, "API                      "+e.srv.URL) {
		t.Errorf("exit %d\n%s%s", code, out, errOut)
	}
	code, out, errOut = e.api(t, 2, "customers", "me", "--json")
	var c escrow.Customer
	if err := json.Unmarshal([]byte(out), &c); code != 0 || err != nil || c.Email != "market@example.com" || c.ID != e.partner.ID {
		t.Errorf("exit %d, %v: %+v\n%s", code, err, c, errOut)
	}
	if strings.Contains(out, e.partner.APIKey) {
		t.Error("the API key was printed")
	}
}

// TestIsTerminal: progress goes only to character devices, never to files or pipes.
func TestIsTerminal(t *testing.T) {
	f, err := os.CreateTemp(t.TempDir(), "stderr")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	if isTerminal(f) || isTerminal(w) || isTerminal(&strings.Builder{}) {
		t.Error("a file, a pipe or a buffer taken for a terminal")
	}
	null, err := os.Open(os.DevNull)
	if err != nil {
		t.Skip(err)
	}
	defer null.Close()
	if !isTerminal(null) {
		t.Error("a character device not taken for a terminal")
	}
}

// TestCLIExplainsAStalledSale: a sale whose seller chose no payout method stalls after
// the inspection period; 'emulator advance', 'emulator ledger' and 'transactions get' say
// who must do what and why nothing was paid out, naming the state with the same word, and
// the seller's choice, made with --as
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
		"transaction " + id + ": accepted (item " + fmt.Sprint(tx.Items[0].ID) + " accepted), paid out 0.00",
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
	// 'transactions get' (the SDK's reading) names the state 'emulator advance' named.
	if !regexp.MustCompile(`(?m)^State +accepted$`).MatchString(out) {
		t.Errorf("get after the inspection period: want the state accepted, as 'emulator advance' said\n%s", out)
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
