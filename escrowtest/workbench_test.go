package escrowtest_test

import (
	"context"
	"encoding/base64"
	"errors"
	"net/http"
	"strings"
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
