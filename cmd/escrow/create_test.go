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

func TestTransactionsCreateFromFlags(t *testing.T) {
	e := newEmulator(t)
	code, out, errOut := e.api(t, 2, "transactions", "create", "--buyer", "buyer@example.com", "--seller", "seller@example.com",
		"--amount", "1500", "--title", "Road bike", "--currency", "USD", "--reference", "bike-1", "--inspection-days", "5", "--json")
	var tx escrow.Transaction
	if err := json.Unmarshal([]byte(out), &tx); code != 0 || err != nil {
		t.Fatalf("exit %d, %v\n%s%s", code, err, out, errOut)
	}
	it := tx.Items[0]
	if tx.Description != "Road bike" || tx.Reference != "bike-1" || tx.Currency != escrow.USD ||
		it.Title != "Road bike" || it.Type != escrow.ItemGeneralMerchandise || it.InspectionPeriod != escrow.Days(5) ||
		it.Schedule[0].Amount.String() != "1500.00" || it.Schedule[0].PayerCustomer != "buyer@example.com" {
		t.Errorf("%+v", tx)
	}
	if p, _ := tx.Party(escrow.RoleSeller); p.Customer != "seller@example.com" {
		t.Errorf("seller %+v", tx.Parties)
	}

	// People get the transaction as 'transactions get' shows it.
	code, out, _ = e.api(t, 2, "transactions", "create", "--buyer", "buyer@example.com", "--seller", "seller@example.com",
		"--amount", "80.00", "--title", "Bell", "--type", "general_merchandise")
	if code != 0 || !strings.HasPrefix(out, "created transaction ") || !strings.Contains(out, "State        awaiting_agreement") {
		t.Errorf("exit %d\n%s", code, out)
	}

	// The API's validation comes back with the paths of the refused fields.
	code, _, errOut = e.api(t, 2, "transactions", "create", "--buyer", "buyer@example.com", "--seller", "seller@example.com",
		"--amount", "20.00", "--title", "Bell", "--currency", "doubloons")
	if code != exitAPI || !strings.Contains(errOut, "422") || !strings.Contains(errOut, "  currency: ") {
		t.Errorf("exit %d: %s", code, errOut)
	}
}

func TestTransactionsCreateFromFile(t *testing.T) {
	e := newEmulator(t)
	body := `{"currency": "usd", "description": "Two bikes", "reference": "from-file",
		"parties": [{"role": "buyer", "customer": "buyer@example.com"}, {"role": "seller", "customer": "seller@example.com"}],
		"items": [{"title": "Bikes", "type": "general_merchandise", "quantity": 2,
			"schedule": [{"amount": "900.00", "payer_customer": "buyer@example.com", "beneficiary_customer": "seller@example.com"}]}]}`
	file := filepath.Join(t.TempDir(), "tx.json")
	if err := os.WriteFile(file, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := e.api(t, 2, "transactions", "create", "--file", file, "--json")
	var tx escrow.Transaction
	if err := json.Unmarshal([]byte(out), &tx); code != 0 || err != nil || tx.Reference != "from-file" || tx.Items[0].Quantity != 2 {
		t.Fatalf("exit %d, %v: %+v\n%s", code, err, tx, errOut)
	}

	// "-" reads standard input.
	stdin, err := os.CreateTemp(t.TempDir(), "stdin")
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprint(stdin, strings.Replace(body, "from-file", "from-stdin", 1))
	stdin.Seek(0, 0)
	saved := os.Stdin
	os.Stdin = stdin
	code, out, errOut = e.api(t, 2, "transactions", "create", "--file", "-", "--json")
	os.Stdin = saved
	stdin.Close()
	if err := json.Unmarshal([]byte(out), &tx); code != 0 || err != nil || tx.Reference != "from-stdin" {
		t.Fatalf("stdin: exit %d, %v: %+v\n%s", code, err, tx, errOut)
	}

	typo := filepath.Join(t.TempDir(), "typo.json")
	os.WriteFile(typo, []byte(strings.Replace(body, `"description"`, `"descripton"`, 1)), 0o600)
	two := filepath.Join(t.TempDir(), "two.json")
	os.WriteFile(two, []byte(body+body), 0o600)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--file", typo}, `unknown field "descripton"`},
		{[]string{"--file", two}, "more than one JSON value"},
		{[]string{"--file", "/nonexistent.json"}, "--file: open /nonexistent.json"},
		{[]string{"--file", file, "--buyer", "x@example.com"}, "--file and --buyer cannot be used together"},
		{[]string{"--buyer", "b@example.com", "--amount", "5"}, "missing --seller, --title"},
		{[]string{"--buyer", "b@example.com", "--seller", "s@example.com", "--title", "t", "--amount", "5.001"}, "--amount: "},
		{[]string{"--buyer", "b@example.com", "--seller", "s@example.com", "--title", "t", "--amount", "5", "--inspection-days", "-1"}, "must not be negative"},
		{[]string{"extra"}, `unexpected argument "extra"`},
	} {
		code, out, errOut := e.api(t, 2, append([]string{"transactions", "create"}, tc.args...)...)
		if code != exitUsage || !strings.Contains(errOut, tc.want) || out != "" {
			t.Errorf("%v: exit %d, want 2 with %q:\n%s%s", tc.args, code, tc.want, out, errOut)
		}
	}
}

// TestCreateQuietPrintsTheID: --quiet prints the id alone, for ID=$(…) in scripts.
func TestCreateQuietPrintsTheID(t *testing.T) {
	e := newEmulator(t)
	code, out, errOut := e.api(t, 2, "transactions", "create", "--buyer", "buyer@example.com", "--seller", "seller@example.com",
		"--amount", "100", "--title", "Lamp", "--quiet")
	if code != 0 || out != "200001\n" {
		t.Errorf("exit %d: %q %s", code, out, errOut)
	}
	code, out, _ = e.api(t, 3, "transactions", "pay", "wire", "200001", "--as", "buyer@example.com")
	if code != 0 || !strings.Contains(out, "Amount to wire  103.25") {
		t.Errorf("pay wire: exit %d\n%s", code, out)
	}
}
