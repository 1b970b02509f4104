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

func TestAPICommand(t *testing.T) {
	e := newEmulator(t)

	// Indented JSON, whatever --json says; a path copied from an error message works too.
	for _, path := range []string{"customer/me", "/customer/me", "/" + escrow.APIVersion + "/customer/me"} {
		code, out, errOut := e.api(t, 1, "api", "GET", path)
		var c escrow.Customer
		if err := json.Unmarshal([]byte(out), &c); code != 0 || err != nil || c.Email != "market@example.com" || !strings.Contains(out, "\n  \"email\": ") {
			t.Errorf("%s: exit %d, %v\n%s%s", path, code, err, out, errOut)
		}
	}

	// A body inline, from a file and from standard input.
	code, out, errOut := e.api(t, 1, "api", "post", "customer/me/webhook", "--data", `{"url": "https://shop.example.com/hooks/1"}`)
	var hook escrow.Webhook
	if err := json.Unmarshal([]byte(out), &hook); code != 0 || err != nil || hook.URL != "https://shop.example.com/hooks/1" {
		t.Fatalf("exit %d, %v\n%s%s", code, err, out, errOut)
	}
	file := filepath.Join(t.TempDir(), "hook.json")
	os.WriteFile(file, []byte(`{"url": "https://shop.example.com/hooks/2"}`), 0o600)
	if code, out, errOut := e.api(t, 1, "api", "POST", "customer/me/webhook", "--data", "@"+file); code != 0 || !strings.Contains(out, "hooks/2") {
		t.Errorf("@file: exit %d\n%s%s", code, out, errOut)
	}
	stdin, _ := os.CreateTemp(t.TempDir(), "stdin")
	fmt.Fprint(stdin, `{"url": "https://shop.example.com/hooks/3"}`)
	stdin.Seek(0, 0)
	saved := os.Stdin
	os.Stdin = stdin
	code, out, errOut = e.api(t, 1, "api", "POST", "customer/me/webhook", "--data", "@-")
	os.Stdin = saved
	stdin.Close()
	if code != 0 || !strings.Contains(out, "hooks/3") {
		t.Errorf("@-: exit %d\n%s%s", code, out, errOut)
	}

	// A 204 prints nothing; -i shows the status and the allowance.
	code, out, errOut = e.api(t, 1, "api", "DELETE", fmt.Sprintf("customer/me/webhook/%d", hook.ID), "-i")
	if code != 0 || out != "" || !strings.HasPrefix(errOut, "status 204, ") || !strings.Contains(errOut, " remaining of 1000 until ") {
		t.Errorf("exit %d\n%q\n%s", code, out, errOut)
	}

	// As-Customer goes through, as for the typed methods.
	tx := e.sale(t, "")
	code, out, errOut = e.api(t, 1, "api", "PATCH", fmt.Sprintf("transaction/%d", tx.ID), "--data", `{"action": "agree"}`, "--as-customer", "buyer@example.com")
	var got escrow.Transaction
	if err := json.Unmarshal([]byte(out), &got); code != 0 || err != nil || !got.Parties[0].Agreed {
		t.Errorf("exit %d, %v\n%s%s", code, err, out, errOut)
	}

	// The API's errors are typed, as for every command: a 404, a 422 by field.
	code, _, errOut = e.api(t, 1, "api", "GET", "transaction/999")
	if code != exitAPI || !strings.Contains(errOut, "escrow api: GET /2017-09-01/transaction/999: 404") {
		t.Errorf("exit %d: %s", code, errOut)
	}
	code, _, errOut = e.api(t, 1, "api", "POST", "transaction", "--data", `{"currency": "usd"}`)
	if code != exitAPI || !strings.Contains(errOut, "422: the request was refused:\n  description: ") {
		t.Errorf("exit %d: %s", code, errOut)
	}

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"GET"}, "want a method and a path, got 1 argument"},
		{[]string{"G3T", "customer/me"}, `method "G3T" is not an HTTP method`},
		{[]string{"POST", "customer/me/webhook", "--data", "{url:"}, "--data is not valid JSON"},
		{[]string{"POST", "customer/me/webhook", "--data", "@/nonexistent.json"}, "--data: open /nonexistent.json"},
		{[]string{"GET", "transaction/../customer/me"}, `path "transaction/../customer/me" has an empty, ".", ".." or unprintable segment`},
		{[]string{"GET", "https://evil.example.com/customer/me"}, "must be relative to the base URL"},
	} {
		code, out, errOut := e.api(t, 1, append([]string{"api"}, tc.args...)...)
		if code != exitUsage || out != "" || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: exit %d, want 2 with %q:\n%s%s", tc.args, code, tc.want, out, errOut)
		}
	}
}
