package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	escrow "github.com/escrowkit/escrow-go"
)

// agreed creates a sale that both parties have agreed to, so that it awaits payment.
func (e *emulator) agreed(t *testing.T) *escrow.Transaction {
	t.Helper()
	tx := e.sale(t, "")
	for _, who := range []string{"buyer@example.com", "seller@example.com"} {
		if _, err := e.client.Transactions.Agree(t.Context(), tx.ID, escrow.AsCustomer(who)); err != nil {
			t.Fatal(err)
		}
	}
	return tx
}

// useAccount points the credential variables at a new account of the emulator.
func (e *emulator) useAccount(t *testing.T, email string) {
	t.Helper()
	a := e.srv.AddCustomer(email)
	t.Setenv(envEmail, a.Email)
	t.Setenv(envAPIKey, a.APIKey)
}

// TestPayByCard: the buyer's methods with their totals, the card's page, and, on an
// emulator, the way a card payment arrives, named wherever the sale waits for it.
func TestPayByCard(t *testing.T) {
	e := newEmulator(t)
	tx := e.agreed(t)
	id := fmt.Sprint(tx.ID)

	// 250.00 and the buyer's escrow fee of 8.13; card and PayPal add 3 %.
	code, out, errOut := e.api(t, 3, "transactions", "pay", "list", id, "--as-customer", "buyer@example.com")
	for _, want := range []string{"wire_transfer  258.13  0.00", "credit_card    265.87  7.74", "Without a payment fee the buyer pays 258.13."} {
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("exit %d, missing %q in\n%s%s", code, want, out, errOut)
		}
	}
	code, out, _ = e.api(t, 3, "transactions", "pay", "list", id, "--as-customer", "buyer@example.com", "--json")
	var methods escrow.PaymentMethods
	if err := json.Unmarshal([]byte(out), &methods); code != 0 || err != nil || len(methods.AvailablePaymentMethods) != 3 {
		t.Errorf("exit %d, %v: %+v", code, err, methods)
	}

	code, out, errOut = e.api(t, 3, "transactions", "pay", "choose", id, "credit_card", "--as-customer", "buyer@example.com", "--return-url", "https://shop.example.com/done")
	if code != 0 || !strings.Contains(out, "The buyer pays by credit_card on this page:") ||
		!strings.Contains(out, fmt.Sprintf("/_emulator/pages/checkout/%d/credit_card?return_url=https%%3A%%2F%%2Fshop.example.com%%2Fdone", tx.ID)) {
		t.Errorf("exit %d\n%s%s", code, out, errOut)
	}
	// Nobody pays on an emulator's page: every command that meets the stall names the way
	// out, as the emulator's page does.
	approve := "'escrow emulator approve " + id + "'"
	if !strings.Contains(out, approve) {
		t.Errorf("pay choose on an emulator does not name %s:\n%s", approve, out)
	}
	code, out, _ = e.api(t, 3, "transactions", "get", id)
	if code != 0 || !strings.Contains(out, "next: buyer@example.com pays") || !strings.Contains(out, approve) {
		t.Errorf("get: exit %d, want the next step and %s\n%s", code, approve, out)
	}
	code, _, errOut = e.api(t, 3, "transactions", "act", id, "ship", "--as-customer", "seller@example.com")
	if code != exitAPI || !strings.Contains(errOut, "awaiting_payment") || !strings.Contains(errOut, "next: buyer@example.com pays") || !strings.Contains(errOut, approve) {
		t.Errorf("act ship before payment: exit %d, want the refusal, the next step and %s\n%s", code, approve, errOut)
	}
	code, out, _ = e.api(t, 2, "emulator", "ledger", id)
	if code != 0 || !strings.Contains(out, approve) {
		t.Errorf("emulator ledger: exit %d, want %s\n%s", code, approve, out)
	}

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"choose", id, "wire_transfer"}, "a wire is not chosen but sent: 'escrow transactions pay wire " + id + "'"},
		{[]string{"choose", id, "bitcoin"}, `unknown payment method "bitcoin"`},
		{[]string{"choose", id}, "want a transaction id and a payment method, got 1 argument"},
		{[]string{"list"}, "want a transaction id, got 0 arguments"},
		{[]string{"wire", "x"}, `transaction id "x" is not a positive integer`},
		{[]string{"refund", id}, `unknown command "refund"`},
	} {
		code, _, errOut := e.api(t, 3, append([]string{"transactions", "pay"}, tc.args...)...)
		if code != exitUsage || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: exit %d, want 2 with %q: %s", tc.args, code, tc.want, errOut)
		}
	}
}

func TestPayByWire(t *testing.T) {
	e := newEmulator(t)
	tx := e.agreed(t)
	id := fmt.Sprint(tx.ID)

	// The wire's details are the buyer's to read, with their own key.
	code, _, errOut := e.api(t, 3, "transactions", "pay", "wire", id)
	if code != exitAPI || !strings.Contains(errOut, "403") {
		t.Errorf("the partner read the wire details: exit %d: %s", code, errOut)
	}
	partnerEmail, partnerKey := os.Getenv(envEmail), os.Getenv(envAPIKey)
	e.useAccount(t, "buyer@example.com")
	code, out, errOut := e.api(t, 3, "transactions", "pay", "wire", id)
	if code != 0 || !strings.Contains(out, "Account number  ") || !strings.Contains(out, "escrow transactions pay wire-sent "+id) {
		t.Errorf("exit %d\n%s%s", code, out, errOut)
	}

	// The partner reports the wire for the buyer; the funds arrive through the emulator.
	t.Setenv(envEmail, partnerEmail)
	t.Setenv(envAPIKey, partnerKey)
	code, out, errOut = e.api(t, 3, "transactions", "pay", "wire-sent", id, "--as-customer", "buyer@example.com")
	if code != 0 || !strings.HasPrefix(out, "wire reported sent") || !strings.Contains(out, "State        awaiting_payment") {
		t.Errorf("exit %d\n%s%s", code, out, errOut)
	}
	// Twice is refused by the API: exit 1.
	code, _, errOut = e.api(t, 3, "transactions", "pay", "wire-sent", id, "--as-customer", "buyer@example.com")
	if code != exitAPI || !strings.Contains(errOut, "400") {
		t.Errorf("exit %d: %s", code, errOut)
	}
	code, out, errOut = e.api(t, 2, "emulator", "approve", id)
	if code != 0 || out != "the payment arrived: transaction "+id+" is funded\n" {
		t.Errorf("exit %d\n%s%s", code, out, errOut)
	}
	if got, _ := e.client.Transactions.Get(t.Context(), tx.ID); got.State() != escrow.StateFunded {
		t.Errorf("state %s after approval", got.State())
	}
}

func TestDisbursement(t *testing.T) {
	e := newEmulator(t)
	tx := e.agreed(t)
	id := fmt.Sprint(tx.ID)
	e.useAccount(t, "seller@example.com")

	code, out, errOut := e.api(t, 3, "transactions", "disbursement", "list", id)
	if code != 0 || !strings.Contains(out, "ach            250.00") || !strings.Contains(out, "No method is selected") {
		t.Errorf("exit %d\n%s%s", code, out, errOut)
	}

	code, out, errOut = e.api(t, 3, "transactions", "disbursement", "add", id, "--type", "ach", "--account-name", "Sam Seller",
		"--account-type", "checking", "--routing-number", "121000248", "--account-number", "000123456789", "--bank-name", "First Bank")
	if code != 0 || !strings.Contains(out, "ach added and selected") || !strings.Contains(out, "Sam Seller    First Bank  …6789    yes") {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	if strings.Contains(out, "000123456789") {
		t.Error("the whole account number was printed")
	}

	// A second method, from a file, is selected in its turn; then the first again.
	file := filepath.Join(t.TempDir(), "wire.json")
	os.WriteFile(file, []byte(`{"type": "wire_transfer", "account_name": "Sam Seller", "bank_name": "Second Bank",
		"bank_swift_code": "EXAMUS33", "bank_account_number": "9876543210"}`), 0o600)
	code, out, errOut = e.api(t, 3, "transactions", "disbursement", "add", id, "--file", file, "--json")
	var m escrow.DisbursementMethods
	if err := json.Unmarshal([]byte(out), &m); code != 0 || err != nil || len(m.SavedDisbursementMethods) != 2 ||
		m.SelectedDisbursementMethod == nil || m.SelectedDisbursementMethod.Type != escrow.DisbursementWireTransfer {
		t.Fatalf("exit %d, %v: %+v\n%s", code, err, m, errOut)
	}
	var first int64
	for _, s := range m.SavedDisbursementMethods {
		if s.Type == escrow.DisbursementACH {
			first = s.ID
		}
	}
	code, out, errOut = e.api(t, 3, "transactions", "disbursement", "select", id, fmt.Sprint(first))
	if code != 0 || !strings.Contains(out, fmt.Sprintf("method %d selected", first)) || !strings.Contains(out, fmt.Sprintf("%d    ach ", first)) {
		t.Errorf("exit %d\n%s%s", code, out, errOut)
	}
	code, _, errOut = e.api(t, 3, "transactions", "disbursement", "select", id, "999999")
	if code != exitAPI {
		t.Errorf("an unknown method: exit %d: %s", code, errOut)
	}
	// The API checks the details: an ach without its routing number is refused by field.
	code, _, errOut = e.api(t, 3, "transactions", "disbursement", "add", id, "--type", "ach", "--account-name", "Sam")
	if code != exitAPI || !strings.Contains(errOut, "422") || !strings.Contains(errOut, "bank_aba_routing_number") {
		t.Errorf("exit %d: %s", code, errOut)
	}

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"add", id}, "missing --type"},
		{[]string{"add", id, "--file", file, "--bank-name", "x"}, "--file holds the whole method"},
		{[]string{"select", id}, "want a transaction id and a saved method's id, got 1 argument"},
		{[]string{"select", id, "first"}, `method id "first" is not a positive integer`},
		{[]string{"list", id, "--as-customer", "seller@example.com"}, "no flag --as-customer here: the API takes As-Customer only"},
	} {
		code, _, errOut := e.api(t, 3, append([]string{"transactions", "disbursement"}, tc.args...)...)
		if code != exitUsage || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: exit %d, want 2 with %q: %s", tc.args, code, tc.want, errOut)
		}
	}
}

func TestDisbursementDetailsFromAFileOrStandardInputStayOffTheCommandLine(t *testing.T) {
	e := newEmulator(t)
	tx := e.agreed(t)
	id := fmt.Sprint(tx.ID)
	e.useAccount(t, "seller@example.com")

	details := filepath.Join(t.TempDir(), "bank")
	os.WriteFile(details, []byte("# the seller's account\naccount-number=000123456789\nrouting-number=121000248\n"), 0o600)
	code, out, errOut := e.api(t, 3, "transactions", "disbursement", "add", id, "--type", "ach", "--account-name", "Sam Seller",
		"--account-type", "checking", "--bank-name", "First Bank", "--from-file", details)
	if code != 0 || !strings.Contains(out, "Sam Seller    First Bank  …6789    yes") || strings.Contains(errOut, "warning") {
		t.Fatalf("--from-file: exit %d\n%s%s", code, out, errOut)
	}

	// Standard input, with every detail in it.
	withStdin(t, "type=wire_transfer\naccount-name=Sam Seller\nbank-name=Second Bank\nswift=EXAMUS33\niban=DE89370400440532013000\n")
	code, out, errOut = e.api(t, 3, "transactions", "disbursement", "add", id, "--from-file", "-")
	if code != 0 || !strings.Contains(out, "wire_transfer added and selected") || !strings.Contains(out, "…3000") {
		t.Fatalf("--from-file -: exit %d\n%s%s", code, out, errOut)
	}

	// On the command line the account number still works, with a warning.
	_, _, errOut = e.api(t, 3, "transactions", "disbursement", "add", id, "--type", "ach", "--account-name", "Sam Seller",
		"--account-type", "checking", "--routing-number", "121000248", "--account-number", "000123456789", "--bank-name", "First Bank")
	if !strings.Contains(errOut, "warning: --account-number on the command line is visible to every user") {
		t.Errorf("no warning: %s", errOut)
	}

	for _, tc := range []struct {
		content string
		args    []string
		want    string
	}{
		{"account-number=1\n", []string{"--account-number", "2", "--type", "ach"}, "gives account-number, which the command line gives too"},
		{"000123456789\n", []string{"--type", "ach"}, "line 1: want name=value"},
		{"password=x\n", []string{"--type", "ach"}, "line 1: want name=value"},
		{"account-number=1\n", []string{"--file", details}, "--file holds the whole method"},
	} {
		file := filepath.Join(t.TempDir(), "bank")
		os.WriteFile(file, []byte(tc.content), 0o600)
		args := append([]string{"transactions", "disbursement", "add", id, "--from-file", file}, tc.args...)
		code, _, errOut := e.api(t, 3, args...)
		if code != exitUsage || !strings.Contains(errOut, tc.want) || strings.Contains(errOut, "000123456789") {
			t.Errorf("%q %v: exit %d, want 2 with %q: %s", tc.content, tc.args, code, tc.want, errOut)
		}
	}
}
