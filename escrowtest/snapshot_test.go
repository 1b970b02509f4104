package escrowtest

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
)

// snapshotOf is a busy emulator's snapshot as a JSON tree, for a test to break.
func snapshotOf(t *testing.T, srv *Server) map[string]any {
	t.Helper()
	var buf bytes.Buffer
	must(t, srv.Snapshot(&buf))
	var doc map[string]any
	must(t, json.Unmarshal(buf.Bytes(), &doc))
	return doc
}

// TestRestoreRefusesABrokenSnapshotAndChangesNothing: a document of another version, one
// that is not JSON, or one whose parts do not hold together is refused with an error that
// names the part, and the emulator keeps its own state.
func TestRestoreRefusesABrokenSnapshotAndChangesNothing(t *testing.T) {
	w := newWorld(t)
	id, _ := w.funded(merchandise())
	must(t, w.srv.InjectFault(Fault{Endpoint: "GET *", Latency: 1}))
	good := snapshotOf(t, w.srv)

	victim := newServer(t)
	victim.AddCustomer("keep@example.com")
	var before bytes.Buffer
	must(t, victim.Snapshot(&before))

	breaks := map[string]struct {
		change func(doc map[string]any)
		says   string
	}{
		"another version":          {func(d map[string]any) { d["version"] = 2 }, "version: 2, this emulator reads version 1"},
		"no clock":                 {func(d map[string]any) { delete(d, "clock") }, "clock: missing"},
		"an unknown part":          {func(d map[string]any) { d["extra"] = 1 }, `unknown part "extra"`},
		"a field of no part":       {func(d map[string]any) { set(d, "transactions.0.colour", "red") }, `transactions: json: unknown field "colour"`},
		"a party of no account":    {func(d map[string]any) { set(d, "transactions.0.parties.0.account", 9999) }, "transactions[0] (200001): parties[0]: account: no account 9999"},
		"a payer of no account":    {func(d map[string]any) { set(d, "transactions.0.items.0.schedule.0.payer", 9999) }, "items[0] (300001): schedule[0]"},
		"no seller":                {func(d map[string]any) { set(d, "transactions.0.parties.1.role", "broker") }, "a transaction has a buyer and a seller"},
		"an unknown flag":          {func(d map[string]any) { set(d, "transactions.0.items.0.flags", []any{"teleported"}) }, `"teleported" is not an item flag`},
		"a counter behind":         {func(d map[string]any) { set(d, "ids.transaction", 200001) }, "ids: transaction is 200001"},
		"an account twice":         {func(d map[string]any) { set(d, "accounts.1.email", "buyer@example.com") }, "accounts[1] (1002): email"},
		"a fault that cannot fire": {func(d map[string]any) { set(d, "faults.faults.0.endpoint", "GET /nope") }, "faults: faults[0]: endpoint \"GET /nope\" matches no route"},
		"a broken generator":       {func(d map[string]any) { set(d, "faults.random", "AAAA") }, "faults: random"},
		"a number as time":         {func(d map[string]any) { set(d, "clock.start", 5) }, "clock: "},
		"a negative window":        {func(d map[string]any) { set(d, "rate_limit.window", "-1s") }, "rate_limit: window is negative"},
	}
	for name, b := range breaks {
		doc := snapshotOf(t, w.srv)
		b.change(doc)
		data, _ := json.Marshal(doc)
		err := victim.Restore(bytes.NewReader(data))
		if !errors.Is(err, ErrSnapshot) || !strings.Contains(err.Error(), b.says) {
			t.Errorf("%s: %v, want ErrSnapshot saying %q", name, err, b.says)
		}
	}
	for _, garbage := range []string{"", "{", "[]", "null", `{"version": "1"}`, strings.Repeat("[", 100000)} {
		if err := victim.Restore(strings.NewReader(garbage)); !errors.Is(err, ErrSnapshot) {
			t.Errorf("Restore(%.20q): %v, want ErrSnapshot", garbage, err)
		}
	}
	var after bytes.Buffer
	must(t, victim.Snapshot(&after))
	if before.String() != after.String() {
		t.Errorf("a refused snapshot changed the emulator:\n%s\n%s", before.String(), after.String())
	}

	// The unbroken document restores, and the victim holds the transaction.
	data, _ := json.Marshal(good)
	must(t, victim.Restore(bytes.NewReader(data)))
	if _, err := victim.Ledger(id); err != nil {
		t.Error(err)
	}
}

// TestSnapshotKnowsEveryField: the records the snapshot writes have the fields it was
// written for. A field added to one of them must be added to the snapshot (snapshot.go,
// snapshot_store.go), then counted here.
func TestSnapshotKnowsEveryField(t *testing.T) {
	for _, c := range []struct {
		v    any
		want int
	}{
		{store{}, 8}, {ids{}, 9}, {account{}, 12}, {customerProfile{}, 11}, {apiKey{}, 6}, {webhook{}, 2},
		{transaction{}, 17}, {party{}, 8}, {item{}, 15}, {extraAttributes{}, 8}, {schedule{}, 8}, {fee{}, 6},
		{timelineEntry{}, 6}, {ledger{}, 4}, {delegatedCall{}, 5}, {report{}, 4}, {cardPayment{}, 5},
		{rateLimiter{}, 3}, {rateWindow{}, 2}, {Fault{}, 6}, {clock{}, 4},
	} {
		if got := reflect.TypeOf(c.v).NumField(); got != c.want {
			t.Errorf("%T has %d fields, the snapshot knows %d: add the new ones to it", c.v, got, c.want)
		}
	}
}
