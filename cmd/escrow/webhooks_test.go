package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	escrow "github.com/escrowkit/escrow-go"
	"github.com/escrowkit/escrow-go/escrowtest"
	"github.com/escrowkit/escrow-go/webhook"
)

func TestWebhooksAddListRemove(t *testing.T) {
	e := newEmulator(t)
	code, out, errOut := e.api(t, 2, "webhooks", "add", "https://market.example.com/escrow", "--json")
	var h escrow.Webhook
	if err := json.Unmarshal([]byte(out), &h); code != 0 || err != nil || h.ID == 0 || h.URL != "https://market.example.com/escrow" {
		t.Fatalf("add: exit %d, %v: %+v\n%s", code, err, h, errOut)
	}
	code, out, _ = e.api(t, 2, "webhooks", "add", "https://market.example.com/other")
	if code != 0 || !strings.HasPrefix(out, "Added webhook ") {
		t.Errorf("add: exit %d: %s", code, out)
	}

	code, out, _ = e.api(t, 2, "webhooks", "list")
	if code != 0 || !strings.Contains(out, fmt.Sprintf("%d  https://market.example.com/escrow\n", h.ID)) || !strings.Contains(out, "/other") {
		t.Errorf("list: exit %d:\n%s", code, out)
	}

	code, out, _ = e.api(t, 2, "webhooks", "rm", fmt.Sprint(h.ID))
	if code != 0 || out != fmt.Sprintf("Removed webhook %d.\n", h.ID) {
		t.Errorf("rm: exit %d: %q", code, out)
	}
	code, out, _ = e.api(t, 2, "webhooks", "list", "--json")
	var hooks escrow.Webhooks
	if err := json.Unmarshal([]byte(out), &hooks); code != 0 || err != nil || len(hooks.Webhooks) != 1 || hooks.Webhooks[0].ID == h.ID {
		t.Errorf("list --json: exit %d, %v: %s", code, err, out)
	}

	// Removing it again: the API's 404, exit 1.
	code, _, errOut = e.api(t, 2, "webhooks", "rm", fmt.Sprint(h.ID))
	if code != exitAPI || !strings.Contains(errOut, "404") {
		t.Errorf("rm again: exit %d: %s", code, errOut)
	}

	for _, args := range [][]string{
		{"webhooks", "add"}, {"webhooks", "add", "market.example.com/escrow"}, {"webhooks", "add", "ftp://x.example.com/"},
		{"webhooks", "rm"}, {"webhooks", "rm", "one"}, {"webhooks", "list", "--as-customer", "a@example.com"},
		{"webhooks", "listen", "--reconcile", "-1s"}, {"webhooks", "nope"},
	} {
		if code, out, errOut := e.api(t, 2, args...); code != exitUsage {
			t.Errorf("%v: exit %d\n%s%s", args, code, out, errOut)
		}
	}
}

// lines reads r line by line into a channel until r ends.
func lines(r io.Reader) <-chan string {
	ch := make(chan string, 1000)
	go func() {
		defer close(ch)
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			ch <- sc.Text()
		}
	}()
	return ch
}

// await returns the first line with every one of want, failing after a few seconds.
func await(t *testing.T, ch <-chan string, want ...string) string {
	t.Helper()
	timeout := time.After(5 * time.Second)
	for {
		select {
		case line, ok := <-ch:
			if !ok {
				t.Fatalf("output ended before a line with %q", want)
			}
			matched := true
			for _, w := range want {
				matched = matched && strings.Contains(line, w)
			}
			if matched {
				return line
			}
		case <-timeout:
			t.Fatalf("no line with %q", want)
		}
	}
}

// TestWebhooksListen runs the receiver, has the emulator post to it, loses deliveries
// for the reconciler to find, and stops it as SIGINT would.
func TestWebhooksListen(t *testing.T) {
	e := newEmulator(t)
	ctx, stop := context.WithCancel(t.Context())
	defer stop()
	outR, outW := io.Pipe()
	errR, errW := io.Pipe()
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"webhooks", "listen", "--addr", "127.0.0.1:0", "--reconcile", "10ms",
			"--base-url", e.srv.URL, "--ca-cert", e.certFile}, outW, errW)
		outW.Close()
		errW.Close()
	}()
	stdout, stderr := lines(outR), lines(errR)

	line := await(t, stderr, "listening on http://")
	addr := strings.Fields(strings.SplitAfter(line, "listening on ")[1])[0]
	if _, err := e.client.Webhooks.Create(ctx, escrow.Me, addr); err != nil {
		t.Fatal(err)
	}

	tx := e.sale(t, "")
	await(t, stdout, fmt.Sprintf("transaction %d  create  now awaiting_agreement", tx.ID))
	for _, who := range []string{"buyer@example.com", "seller@example.com"} {
		if _, err := e.client.Transactions.Agree(ctx, tx.ID, escrow.AsCustomer(who)); err != nil {
			t.Fatal(err)
		}
	}
	await(t, stdout, fmt.Sprintf("transaction %d  agree  now awaiting_payment", tx.ID))

	// Every delivery of the next transaction is lost; the reconciler finds it anyway.
	if err := e.srv.InjectFault(escrowtest.Fault{Endpoint: "WEBHOOK *", Drop: escrowtest.DropBefore}); err != nil {
		t.Fatal(err)
	}
	lost := e.sale(t, "")
	await(t, stdout, fmt.Sprintf("transaction %d  create", lost.ID), "found by reconciling")

	stop()
	select {
	case code := <-done:
		if code != 0 {
			t.Errorf("exit %d", code)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("listen did not stop")
	}
	for range stderr { // drain, so that the reader goroutine ends
	}
	for range stdout {
	}
}

// TestListenJSON: --json prints one object per event, with the confirmed transaction.
func TestListenJSON(t *testing.T) {
	var out bytes.Buffer
	p := &eventPrinter{w: &out, json: true}
	tx := &escrow.Transaction{ID: 200001, Parties: []escrow.Party{{Role: escrow.RoleBuyer, Agreed: true}}}
	ev := webhook.ConfirmedEvent{
		Event:       escrow.Event{Name: escrow.EventShip, EventType: escrow.EventTypeTransaction, TransactionID: 200001},
		Transaction: tx, ItemIDs: []int64{300001}, Source: webhook.FromWebhook,
	}
	if err := p.callback(t.Context(), ev); err != nil {
		t.Fatal(err)
	}
	var got listenedEvent
	if err := json.Unmarshal(out.Bytes(), &got); err != nil || strings.Count(out.String(), "\n") != 1 {
		t.Fatalf("%v: %q", err, out.String())
	}
	if got.Event != escrow.EventShip || got.TransactionID != 200001 || got.ItemIDs[0] != 300001 || got.Source != webhook.FromWebhook || got.Transaction.ID != 200001 {
		t.Errorf("%+v", got)
	}
}

func TestListenBadAddress(t *testing.T) {
	e := newEmulator(t)
	code, _, errOut := e.api(t, 2, "webhooks", "listen", "--addr", "256.1.1.1:0")
	if code != exitAPI || !strings.Contains(errOut, "escrow webhooks listen:") {
		t.Errorf("exit %d: %s", code, errOut)
	}
}
