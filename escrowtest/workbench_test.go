package escrowtest_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	escrow "github.com/escrowkit/escrow-go"
	"github.com/escrowkit/escrow-go/escrowtest"
)

// The emulator as a workbench, driven from the SDK: the request log, snapshots, reaching
// a state and triggering events, checked against what the SDK itself reads.

var workbenchStart = time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)

// sdkClient is an SDK client for an account of srv.
func sdkClient(t *testing.T, srv *escrowtest.Server, a escrowtest.Account, opts ...escrow.Option) *escrow.Client {
	t.Helper()
	c, err := escrow.NewClient(a.Email, a.APIKey, append([]escrow.Option{escrow.WithEmulator(srv), escrow.WithMaxRetries(0)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// roadBike creates a 1500.00 sale between buyer@ and seller@ by market@, an approved partner.
func roadBike(t *testing.T, ctx context.Context, partner *escrow.Client) *escrow.Transaction {
	t.Helper()
	tx, err := partner.Transactions.Create(ctx, &escrow.CreateTransactionRequest{
		Currency: escrow.USD, Description: "Road bike",
		Parties: []escrow.PartyInput{{Role: escrow.RoleBuyer, Customer: "buyer@example.com"}, {Role: escrow.RoleSeller, Customer: "seller@example.com"}},
		Items: []escrow.ItemInput{{
			Title: "Road bike", Type: escrow.ItemGeneralMerchandise, Category: escrow.CategoryCollectibles,
			InspectionPeriod: escrow.Days(3), Quantity: 1,
			Schedule: []escrow.ScheduleInput{{Amount: escrow.MustAmount("1500.00"), PayerCustomer: "buyer@example.com", BeneficiaryCustomer: "seller@example.com"}},
		}},
	})
	if err != nil {
		t.Fatal(err)
	}
	return tx
}

// TestRequestLogKeepsSDKCallsWithoutCredentials: three SDK calls, one of them faulted,
// are in Requests() with their caller, status and bodies, and no body holds the key, the
// Authorization value or a delivery secret.
func TestRequestLogKeepsSDKCallsWithoutCredentials(t *testing.T) {
	ctx := t.Context()
	srv := escrowtest.NewServer(escrowtest.WithClock(workbenchStart))
	defer srv.Close()
	market := srv.AddPartner("market@example.com")
	c := sdkClient(t, srv, market)
	auth := base64.StdEncoding.EncodeToString([]byte(market.Email + ":" + market.APIKey))
	tx := roadBike(t, ctx, c)
	if _, err := c.Transactions.Get(ctx, tx.ID); err != nil {
		t.Fatal(err)
	}
	hook := "https://hooks.example.com/escrow/Zq3xT9vLm2Rk8WpB4nYc7HdJ"
	if _, err := c.Webhooks.Create(ctx, escrow.Me, hook); err != nil {
		t.Fatal(err)
	}
	// A new key's only answer holds it whole; a body that quotes the caller's own
	// credentials (a mistake a log must not repeat) is kept without them.
	var created struct {
		Key string `json:"key"`
	}
	if err := c.Do(ctx, http.MethodPost, "customer/me/api_key", map[string]string{"name": "ci " + market.APIKey + " " + auth}, &created); err != nil || created.Key == "" {
		t.Fatalf("creating a key: %v %+v", err, created)
	}
	if err := srv.InjectFault(escrowtest.Fault{Endpoint: "GET /transaction/{id}", Status: http.StatusServiceUnavailable}); err != nil {
		t.Fatal(err)
	}
	var apiErr *escrow.APIError
	if _, err := c.Transactions.Get(ctx, tx.ID); !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("the faulted call: %v", err)
	}

	got := srv.Requests()
	want := []struct {
		method, endpoint string
		status           int
		fault            string
	}{
		{"POST", "POST /transaction", 201, ""},
		{"GET", "GET /transaction/{id}", 200, ""},
		{"POST", "POST /customer/{customer_id}/webhook", 200, ""},
		{"POST", "POST /customer/{customer_id}/api_key", 200, ""},
		{"GET", "GET /transaction/{id}", 503, "status 503"},
	}
	if len(got) != len(want) {
		t.Fatalf("%d requests logged, want %d: %+v", len(got), len(want), got)
	}
	for i, w := range want {
		r := got[i]
		if r.Method != w.method || r.Endpoint != w.endpoint || r.Status != w.status || r.Fault != w.fault || r.Account != market.Email || r.Seq != int64(i+1) {
			t.Errorf("request %d: %s %s %d fault %q by %q (seq %d), want %s %d fault %q by %s", i, r.Method, r.Endpoint, r.Status, r.Fault, r.Account, r.Seq, w.endpoint, w.status, w.fault, market.Email)
		}
		if !r.Time.Equal(workbenchStart) {
			t.Errorf("request %d at %v, want the emulator's time %v", i, r.Time, workbenchStart)
		}
		for _, body := range []string{r.RequestBody, r.ResponseBody} {
			for _, secret := range []string{market.APIKey, auth, created.Key, "Zq3xT9vLm2Rk8WpB4nYc7HdJ"} {
				if strings.Contains(body, secret) {
					t.Errorf("request %d's body holds a credential: %s", i, body)
				}
			}
		}
	}
	if !strings.Contains(got[0].RequestBody, `"Road bike"`) || !strings.Contains(got[0].ResponseBody, `"id":`) {
		t.Errorf("the creation's bodies are not kept: %q / %q", got[0].RequestBody, got[0].ResponseBody)
	}
	if !strings.Contains(got[2].RequestBody, "https://hooks.example.com/escrow/") {
		t.Errorf("the webhook's URL is not kept, masked: %q", got[2].RequestBody)
	}
	if !strings.Contains(got[3].RequestBody, `"ci [redacted]`) || !strings.Contains(got[3].ResponseBody, `"key":"[redacted]"`) {
		t.Errorf("the key's creation is not kept, redacted: %q / %q", got[3].RequestBody, got[3].ResponseBody)
	}
}

// busyServer is an emulator with what a snapshot must keep: a partner's sales in several
// states, a webhook and its calls, a fault, a rate limit, an advanced clock.
func busyServer(t *testing.T) (*escrowtest.Server, escrowtest.Account, []int64) {
	t.Helper()
	ctx := t.Context()
	srv := escrowtest.NewServer(escrowtest.WithClock(workbenchStart))
	t.Cleanup(srv.Close)
	market := srv.AddPartner("market@example.com")
	c := sdkClient(t, srv, market)
	if _, err := c.Webhooks.Create(ctx, escrow.Me, "http://127.0.0.1:1/hooks/Zq3xT9vLm2Rk8WpB4nYc7HdJ"); err != nil {
		t.Fatal(err)
	}
	var ids []int64
	for range 3 {
		tx := roadBike(t, ctx, c)
		for _, party := range []string{"buyer@example.com", "seller@example.com"} {
			if _, err := c.Transactions.Agree(ctx, tx.ID, escrow.AsCustomer(party)); err != nil {
				t.Fatal(err)
			}
		}
		ids = append(ids, tx.ID)
	}
	if err := srv.ApprovePayment(ids[1]); err != nil {
		t.Fatal(err)
	}
	if err := srv.Reach(ids[2], string(escrow.StateInInspection)); err != nil {
		t.Fatal(err)
	}
	srv.Advance(26 * time.Hour)
	if err := srv.InjectFault(escrowtest.Fault{Endpoint: "PATCH /transaction/{id}", Status: 503, Probability: 0.5}); err != nil {
		t.Fatal(err)
	}
	for range 3 { // draws of the fault's generator, which the snapshot must keep
		c.Transactions.Agree(ctx, ids[0], escrow.AsCustomer("buyer@example.com"))
	}
	srv.SetRateLimit(500, time.Minute)
	if err := srv.FlushWebhooks(ctx); err != nil {
		t.Fatal(err)
	}
	return srv, market, ids
}

// rawGet reads a path of the API as a whole JSON document.
func rawGet(t *testing.T, c *escrow.Client, path string) string {
	t.Helper()
	var raw json.RawMessage
	if err := c.Do(t.Context(), http.MethodGet, path, nil, &raw); err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	return string(raw)
}

// TestSnapshotRestoresEverythingIntoANewEmulator: Snapshot, then Restore into a new
// emulator (with another clock): every transaction reads the same, ledgers and the clock
// agree, the partner's key works, faults, rate limit and deliveries are there, and the
// next transaction gets the id the first emulator would have given.
func TestSnapshotRestoresEverythingIntoANewEmulator(t *testing.T) {
	srv, market, ids := busyServer(t)
	var doc bytes.Buffer
	if err := srv.Snapshot(&doc); err != nil {
		t.Fatal(err)
	}
	restored := escrowtest.NewServer()
	defer restored.Close()
	if err := restored.Restore(bytes.NewReader(doc.Bytes())); err != nil {
		t.Fatal(err)
	}

	if !restored.Now().Equal(srv.Now()) {
		t.Errorf("restored clock %v, want %v", restored.Now(), srv.Now())
	}
	before, after := sdkClient(t, srv, market), sdkClient(t, restored, market)
	for _, id := range ids {
		path := fmt.Sprintf("transaction/%d", id)
		if a, b := rawGet(t, before, path), rawGet(t, after, path); a != b {
			t.Errorf("%s:\n%s\nrestored:\n%s", path, a, b)
		}
		if a, b := rawGet(t, before, path+"/timeline-entries"), rawGet(t, after, path+"/timeline-entries"); a != b {
			t.Errorf("%s timeline:\n%s\nrestored:\n%s", path, a, b)
		}
		la, _ := srv.Ledger(id)
		lb, err := restored.Ledger(id)
		if err != nil || la != lb {
			t.Errorf("ledger of %d: %+v, restored %+v (%v)", id, la, lb, err)
		}
	}
	if a, b := rawGet(t, before, "customer/me"), rawGet(t, after, "customer/me"); a != b {
		t.Errorf("customer/me:\n%s\nrestored:\n%s", a, b)
	}
	if a, b := fmt.Sprint(srv.Faults()), fmt.Sprint(restored.Faults()); a != b {
		t.Errorf("faults %s, restored %s", a, b)
	}
	if a, b := len(srv.Deliveries()), len(restored.Deliveries()); a != b || a == 0 {
		t.Errorf("%d deliveries, restored %d", a, b)
	}

	// Both go on alike: the fault fires on the same requests, the funded sale completes,
	// the inspection ends.
	for i := range 8 {
		_, errA := before.Transactions.Agree(t.Context(), ids[0], escrow.AsCustomer("buyer@example.com"))
		_, errB := after.Transactions.Agree(t.Context(), ids[0], escrow.AsCustomer("buyer@example.com"))
		if fmt.Sprint(errA) != fmt.Sprint(errB) {
			t.Errorf("call %d under the fault: %v, restored %v", i, errA, errB)
		}
	}
	for _, e := range []*escrowtest.Server{srv, restored} {
		if err := e.Reach(ids[1], "complete"); err != nil {
			t.Fatal(err)
		}
		e.Advance(72 * time.Hour)
	}
	for _, id := range ids {
		for _, path := range []string{fmt.Sprintf("transaction/%d", id), fmt.Sprintf("transaction/%d/timeline-entries", id)} {
			if a, b := rawGet(t, before, path), rawGet(t, after, path); a != b {
				t.Errorf("%s, moved on:\n%s\nrestored:\n%s", path, a, b)
			}
		}
		la, _ := srv.Ledger(id)
		if lb, _ := restored.Ledger(id); la != lb {
			t.Errorf("ledger of %d, moved on: %+v, restored %+v", id, la, lb)
		}
	}

	// The next ids: both emulators hand out the same new one.
	srv.ClearFaults()
	restored.ClearFaults()
	next, again := roadBike(t, t.Context(), before), roadBike(t, t.Context(), after)
	if next.ID != again.ID || next.ID != ids[len(ids)-1]+1 {
		t.Errorf("next transaction %d, restored %d, want %d", next.ID, again.ID, ids[len(ids)-1]+1)
	}
	var resp escrow.Response
	if _, err := after.Transactions.Get(t.Context(), next.ID, escrow.WithResponse(&resp)); err != nil || resp.RateLimit.Limit != 500 {
		t.Errorf("the restored rate limit: %+v %v", resp.RateLimit, err)
	}
}

// TestReachAgreesWithTheSDK: Reach takes a new sale to each state; the SDK's State of the
// transaction, read by its partner, says that state, and the timeline holds the steps
// that led there.
func TestReachAgreesWithTheSDK(t *testing.T) {
	for _, state := range []escrow.TransactionState{
		escrow.StateAwaitingPayment, escrow.StateFunded, escrow.StateShipped, escrow.StateInInspection, escrow.StateAccepted,
		escrow.StateComplete, escrow.StateReturning, escrow.StateInDispute, escrow.StateCancelled,
	} {
		t.Run(string(state), func(t *testing.T) {
			srv := escrowtest.NewServer(escrowtest.WithClock(workbenchStart))
			defer srv.Close()
			c := sdkClient(t, srv, srv.AddPartner("market@example.com"))
			tx := roadBike(t, t.Context(), c)
			if err := srv.Reach(tx.ID, string(state)); err != nil {
				t.Fatal(err)
			}
			got, err := c.Transactions.Get(t.Context(), tx.ID)
			if err != nil {
				t.Fatal(err)
			}
			if got.State() != state {
				t.Errorf("after Reach(%s) the SDK reads %s", state, got.State())
			}
			if !srv.Now().Equal(workbenchStart) {
				t.Errorf("Reach moved the clock to %v", srv.Now())
			}
		})
	}
}

// TestReachSendsTheStepsWebhooks: reaching complete sends the calls the parties' steps
// send, in order, and the ledger pays the seller out.
func TestReachSendsTheStepsWebhooks(t *testing.T) {
	srv := escrowtest.NewServer(escrowtest.WithClock(workbenchStart))
	defer srv.Close()
	market := srv.AddPartner("market@example.com")
	c := sdkClient(t, srv, market)
	tx := roadBike(t, t.Context(), c)
	hook := newSink(t)
	if _, err := c.Webhooks.Create(t.Context(), escrow.Me, hook.URL); err != nil {
		t.Fatal(err)
	}
	if err := srv.Reach(tx.ID, "complete"); err != nil {
		t.Fatal(err)
	}
	if err := srv.FlushWebhooks(t.Context()); err != nil {
		t.Fatal(err)
	}
	var events []string
	for _, d := range srv.Deliveries() {
		events = append(events, d.Event)
	}
	want := "agree payment_received payment_approved ship receive accept payment_disbursed complete"
	if got := strings.Join(events, " "); got != want {
		t.Errorf("webhook calls: %s\nwant %s", got, want)
	}
	if got := hook.received(); got != want {
		t.Errorf("the receiver got: %s\nwant %s", got, want)
	}
	if l, err := srv.Ledger(tx.ID); err != nil || l.Held != "0.00" || l.Out != "1500.00" {
		t.Errorf("ledger %+v %v", l, err)
	}
}

// TestReachRefusesWhatCannotBe: a state behind the transaction, off its path or unknown
// is refused, saying why, and nothing changes.
func TestReachRefusesWhatCannotBe(t *testing.T) {
	srv := escrowtest.NewServer(escrowtest.WithClock(workbenchStart))
	defer srv.Close()
	c := sdkClient(t, srv, srv.AddPartner("market@example.com"))
	tx := roadBike(t, t.Context(), c)
	if err := srv.Reach(tx.ID, "returning"); err != nil {
		t.Fatal(err)
	}
	before := rawGet(t, c, fmt.Sprintf("transaction/%d", tx.ID))
	for state, why := range map[string]string{
		"accepted":      "past accepted or off the way to it",
		"funded":        "past funded or off the way to it",
		"cancelled":     "its goods have shipped",
		"returned":      "an item's state only",
		"in inspection": "is not one of",
	} {
		err := srv.Reach(tx.ID, state)
		if err == nil || !strings.Contains(err.Error(), why) {
			t.Errorf("Reach(%s): %v, want it to say %q", state, err, why)
		}
	}
	if after := rawGet(t, c, fmt.Sprintf("transaction/%d", tx.ID)); after != before {
		t.Errorf("a refused Reach changed the transaction:\n%s\n%s", before, after)
	}
	if err := srv.Reach(999, "complete"); err == nil || !strings.Contains(err.Error(), "no transaction 999") {
		t.Errorf("Reach of no transaction: %v", err)
	}
}

// sink is a webhook receiver that answers 204 and counts what it is sent.
type sink struct {
	*httptest.Server
	mu     sync.Mutex
	events []string
}

func newSink(t *testing.T) *sink {
	s := &sink{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var b struct {
			Event string `json:"event"`
		}
		json.NewDecoder(r.Body).Decode(&b)
		s.mu.Lock()
		s.events = append(s.events, b.Event)
		s.mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *sink) received() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strings.Join(s.events, " ")
}
