package main

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"testing"

	escrow "github.com/escrowkit/escrow-go"
)

// TestDemo runs each flow to the end on the embedded emulator and checks the table's
// states and the webhook events the receiver confirmed, in order.
func TestDemo(t *testing.T) {
	tests := []struct {
		args   []string
		states []string // the STATE column, row by row
		events []string // "webhook: " lines
	}{
		{
			args: []string{"demo"},
			states: []string{"awaiting_agreement", "awaiting_agreement", "awaiting_payment", "awaiting_payment", "funded",
				"funded", "funded", "shipped", "in_inspection", "complete"},
			events: []string{"create", "agree", "payment_approved", "ship (item 300001)", "receive (item 300001)",
				"accept (item 300001)", "payment_disbursed (item 300001, 300002)", "complete"},
		},
		{
			args: []string{"demo", "--domain"},
			states: []string{"awaiting_agreement", "awaiting_agreement", "awaiting_payment", "awaiting_payment", "funded",
				"funded", "funded", "shipped", "in_inspection", "complete"},
			events: []string{"create", "agree", "payment_approved", "ship (item 300001)", "receive (item 300001)",
				"accept (item 300001)", "payment_disbursed (item 300001, 300002)", "complete"},
		},
		{
			args: []string{"demo", "--milestone"},
			states: []string{"awaiting_agreement", "awaiting_agreement", "awaiting_payment", "awaiting_payment", "funded",
				"funded", "funded",
				"shipped", "in_inspection", "funded", // Design
				"shipped", "in_inspection", "funded", // Build
				"shipped", "in_inspection", "complete"}, // Launch, accepted when its inspection period ends
			// No payment_sent or payment_received: no state shows them, so package webhook
			// never confirms them (issue 16).
			events: []string{"create", "agree", "payment_approved",
				"ship (item 300001)", "receive (item 300001)", "accept (item 300001)", "payment_disbursed (item 300001)",
				"ship (item 300002)", "receive (item 300002)", "accept (item 300002)", "payment_disbursed (item 300002)",
				"ship (item 300003)", "receive (item 300003)", "accept (item 300003)", "payment_disbursed (item 300003, 300004)",
				"complete"},
		},
	}
	for _, tc := range tests {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			code, out, errOut := cli(t, tc.args...)
			if code != 0 {
				t.Fatalf("exit %d\n%s%s", code, out, errOut)
			}
			if errOut != "" {
				t.Errorf("stderr: %s", errOut)
			}
			var states []string
			inTable := false
			for line := range strings.Lines(out) {
				switch {
				case strings.HasPrefix(line, "STEP "):
					inTable = true
				case inTable && strings.TrimSpace(line) == "":
					inTable = false
				case inTable && !strings.HasPrefix(line, " "):
					states = append(states, strings.TrimSpace(line[44:63]))
				}
			}
			if !slices.Equal(states, tc.states) {
				t.Errorf("states\n got %q\nwant %q\n%s", states, tc.states, out)
			}
			if got := linesWith(out, "    webhook: "); !slices.Equal(got, tc.events) {
				t.Errorf("events\n got %q\nwant %q\n%s", got, tc.events, out)
			}
			if !strings.Contains(out, "is complete;") || !strings.Contains(out, "Settlement, paid by ") {
				t.Errorf("no completion in\n%s", out)
			}
		})
	}
}

// TestDemoSettlementBalances checks the sale's settlement to the cent: what the buyer pays
// by card, the price the demo chose, is what the seller, the broker, the escrow fee and
// the card's payment fee receive.
func TestDemoSettlementBalances(t *testing.T) {
	code, out, errOut := cli(t, "demo")
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	for _, want := range []string{
		"the buyer may pay by wire_transfer 2665.63, credit_card 2745.60, paypal 2745.60",
		"Settlement, paid by credit_card:",
		"  buyer       buyer@example.com        2745.60      0.00  -2745.60",
		"  seller      seller@example.com         40.62   2500.00   2459.38",
		"  broker      market@example.com          0.00    125.00    125.00",
		"  escrow fee                                       81.25     81.25",
		"  payment fee                                      79.97     79.97",
		"The buyer paid 2665.63 for the transaction and 79.97 more for paying by credit_card",
		"payout by ach 2459.38",
		"/_emulator/pages/checkout/200001/credit_card?return_url=",
		"the API refuses accept through As-Customer",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in\n%s", want, out)
		}
	}
	// The nets add up to zero: nothing is paid that nobody receives.
	_, settlement, _ := strings.Cut(out, "Settlement")
	var sum escrow.Amount
	for line := range strings.Lines(settlement) {
		f := strings.Fields(line)
		if len(f) < 3 || !strings.HasPrefix(line, "  ") || f[0] == "PARTY" || f[0] == "The" {
			continue
		}
		net, err := escrow.ParseAmount(f[len(f)-1])
		if err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		sum = sum.Add(net)
	}
	if !sum.IsZero() {
		t.Errorf("the settlement's nets add up to %s, not 0:\n%s", sum, settlement)
	}
}

// TestDemoRemote runs the path the sandbox takes, with the partner's credentials alone,
// against an emulator named by --base-url: it must stop where a person has to pay.
func TestDemoRemote(t *testing.T) {
	e := newEmulator(t)
	for _, f := range []flow{flowFor(false, false), flowFor(true, false)} {
		var out, errOut bytes.Buffer
		flags := apiFlags{baseURL: e.srv.URL, caCert: e.certFile}
		if err := demoRemote(t.Context(), &flags, f, "buyer@example.com", "seller@example.com", &out, &errOut); err != nil {
			t.Fatalf("%s: %v\n%s%s", f.name, err, out.String(), errOut.String())
		}
		for _, want := range []string{"a person must act now", "ApprovePayment", "As-Customer may not accept", "webhook  none"} {
			if !strings.Contains(out.String(), want) {
				t.Errorf("%s: missing %q in\n%s", f.name, want, out.String())
			}
		}
		if f.payment != "wire_transfer" && !strings.Contains(out.String(), "landing page https://") {
			t.Errorf("%s: no landing page in\n%s", f.name, out.String())
		}
		if f.payment == "wire_transfer" && !strings.Contains(out.String(), "  escrow transactions pay wire-sent --sandbox --as-customer buyer@example.com ") {
			t.Errorf("%s: no CLI command to report the wire in\n%s", f.name, out.String())
		}
		if strings.Contains(out.String()+errOut.String(), e.partner.APIKey) {
			t.Errorf("%s: the API key was printed", f.name)
		}
	}
}

// TestDemoRemoteNotPartner: an account that is not an approved partner cannot act
// As-Customer; the demo says why.
func TestDemoRemoteNotPartner(t *testing.T) {
	e := newEmulator(t)
	plain := e.srv.AddCustomer("shop@example.com")
	t.Setenv(envEmail, plain.Email)
	t.Setenv(envAPIKey, plain.APIKey)
	var out, errOut bytes.Buffer
	flags := apiFlags{baseURL: e.srv.URL, caCert: e.certFile}
	err := demoRemote(t.Context(), &flags, flowFor(false, false), "buyer@example.com", "seller@example.com", &out, &errOut)
	if err == nil || !strings.Contains(out.String(), "approved partner") {
		t.Errorf("err %v\n%s", err, out.String())
	}
	if code := exitCode(&errOut, "escrow demo", err); code != exitAPI || !strings.Contains(errOut.String(), "agree (buyer (As-Customer))") {
		t.Errorf("exit %d: %s", code, errOut.String())
	}
}

func TestDemoUsage(t *testing.T) {
	t.Setenv(envSandboxEmail, "")
	t.Setenv(envSandboxAPIKey, "")
	tests := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"demo", "--milestone", "--domain"}, exitUsage, "cannot be used together"},
		{[]string{"demo", "now"}, exitUsage, `unexpected argument "now"`},
		{[]string{"demo", "--buyer", "nobody"}, exitUsage, `"nobody" is not an e-mail address`},
		{[]string{"demo", "--buyer", "a@example.com", "--seller", "A@example.com"}, exitUsage, "must be different"},
		{[]string{"demo", "--sandbox"}, exitUsage, "set ESCROW_SANDBOX_EMAIL (the account's e-mail address) and ESCROW_SANDBOX_API_KEY"},
		{[]string{"demo", "-h"}, 0, "--milestone"},
	}
	for _, tc := range tests {
		code, out, errOut := cli(t, tc.args...)
		if code != tc.code || !strings.Contains(out+errOut, tc.want) {
			t.Errorf("%v: exit %d, want %d with %q; output:\n%s%s", tc.args, code, tc.code, tc.want, out, errOut)
		}
	}
}

// TestDemoSandboxMissingKey names the one missing variable and never prints the other's
// value.
func TestDemoSandboxMissingKey(t *testing.T) {
	const secret = "1234_s3cr3tk3yth4tmustn0tl34k"
	for _, env := range [][2]string{{"me@example.com", ""}, {"", secret}} {
		t.Setenv(envSandboxEmail, env[0])
		t.Setenv(envSandboxAPIKey, env[1])
		code, out, errOut := cli(t, "demo", "--sandbox")
		missing := envSandboxAPIKey
		if env[0] == "" {
			missing = envSandboxEmail
		}
		if code != exitUsage || !strings.Contains(errOut, "set "+missing+" (") || strings.Contains(out+errOut, secret) {
			t.Errorf("%v: exit %d\n%s%s", env, code, out, errOut)
		}
	}
}

// TestDemoInterrupted: an interrupt stops the demo with exit 1, leaving nothing running
// (TestMain checks for goroutines left behind).
func TestDemoInterrupted(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	var out, errOut bytes.Buffer
	if code := run(ctx, []string{"demo"}, &out, &errOut); code != exitAPI || !strings.Contains(errOut.String(), "escrow demo: interrupted") {
		t.Errorf("exit %d\n%s%s", code, out.String(), errOut.String())
	}
}
