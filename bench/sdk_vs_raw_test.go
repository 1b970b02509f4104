package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"testing"

	escrow "github.com/escrowkit/escrow-go"
)

// transactionDoc is a realistic three-item transaction as the API returns it: a vehicle,
// a shipping fee and a broker fee, with fees, statuses and every party.
const transactionDoc = `{
  "id": 29292, "currency": "usd", "description": "Perfect sedan for the snowy weather",
  "reference": "order-1042", "creation_date": "2019-04-03T11:01:38.880000+00:00", "close_date": null,
  "is_cancelled": false, "is_draft": false,
  "parties": [
    {"id": 11, "role": "buyer", "customer": "me", "agreed": true, "initiator": true},
    {"id": 12, "role": "seller", "customer": "keanu.reaves@test.escrow.com", "agreed": true},
    {"id": 13, "role": "broker", "customer": "broker@test.escrow.com", "agreed": true},
    {"id": 14, "role": "partner", "customer": "me", "agreed": true}
  ],
  "items": [
    {"id": 1001, "title": "2014 Toyota Prius", "description": "Like new, one owner", "type": "motor_vehicle",
     "category": "automobiles_cars_and_trucks", "inspection_period": 259200, "quantity": 1,
     "extra_attributes": {"make": "Toyota", "model": "Prius", "year": 2014, "vin": "JTDKN3DU0E0000000", "concierge": false, "with_content": false},
     "schedule": [{"amount": "95000.00", "payer_customer": "me", "beneficiary_customer": "keanu.reaves@test.escrow.com", "status": {"secured": true, "disbursed_to_beneficiary": false}}],
     "fees": [{"type": "escrow", "payer_customer": "me", "split": "0.5", "amount": "422.75", "amount_without_taxes": "422.75"},
              {"type": "escrow", "payer_customer": "keanu.reaves@test.escrow.com", "split": "0.5", "amount": "422.75", "amount_without_taxes": "422.75"}],
     "status": {"shipped": true, "received": false, "accepted": false, "rejected": false, "shipped_returned": false, "received_returned": false, "accepted_returned": false, "rejected_returned": false, "canceled": false, "in_dispute": false}},
    {"id": 1002, "title": "Shipping", "description": "Enclosed carrier", "type": "shipping_fee", "inspection_period": 259200, "quantity": 1,
     "schedule": [{"amount": "1200.00", "payer_customer": "me", "beneficiary_customer": "keanu.reaves@test.escrow.com", "status": {"secured": true, "disbursed_to_beneficiary": false}}],
     "fees": [], "status": {"shipped": true, "received": false, "accepted": false, "rejected": false}},
    {"id": 1003, "type": "broker_fee", "title": "Broker commission", "description": "", "quantity": 1, "inspection_period": 259200,
     "schedule": [{"amount": "1500.00", "payer_customer": "me", "beneficiary_customer": "broker@test.escrow.com", "status": {"secured": true, "disbursed_to_beneficiary": false}}],
     "fees": [], "status": {"shipped": false}}
  ]
}`

// server answers every GET and POST with the document, as the API would.
func server(b *testing.B) *httptest.Server {
	b.Helper()
	doc := []byte(transactionDoc)
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body != nil {
			io.Copy(io.Discard, r.Body)
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("RateLimit-Remaining", "1000")
		if r.Method == http.MethodPost {
			w.WriteHeader(http.StatusCreated)
		}
		w.Write(doc)
	}))
	b.Cleanup(srv.Close)
	return srv
}

func sdkClient(b *testing.B, srv *httptest.Server) *escrow.Client {
	c, err := escrow.NewClient("partner@example.com", "4171_benchmarkkey", escrow.WithBaseURL(srv.URL+"/2017-09-01/"), escrow.WithHTTPClient(srv.Client()))
	if err != nil {
		b.Fatal(err)
	}
	return c
}

// BenchmarkGetTransaction reads the document through the SDK and through rawClient.
func BenchmarkGetTransaction(b *testing.B) {
	b.Run("sdk", func(b *testing.B) {
		b.ReportAllocs()
		c := sdkClient(b, server(b))
		ctx := context.Background()
		for b.Loop() {
			tx, err := c.Transactions.Get(ctx, 29292)
			if err != nil || len(tx.Items) != 3 {
				b.Fatal(tx, err)
			}
		}
	})
	b.Run("raw", func(b *testing.B) {
		b.ReportAllocs()
		srv := server(b)
		rc := &rawClient{http: srv.Client(), base: srv.URL + "/2017-09-01/", email: "partner@example.com", key: "4171_benchmarkkey"}
		ctx := context.Background()
		for b.Loop() {
			tx, err := rc.getTransaction(ctx, 29292)
			if err != nil || len(tx.Items) != 3 {
				b.Fatal(tx, err)
			}
		}
	})
}

// BenchmarkCreateTransaction sends the same three-item creation through the SDK and
// through rawClient; the server answers the document with 201.
func BenchmarkCreateTransaction(b *testing.B) {
	b.Run("sdk", func(b *testing.B) {
		b.ReportAllocs()
		c := sdkClient(b, server(b))
		ctx := context.Background()
		req := sdkCreateRequest()
		for b.Loop() {
			tx, err := c.Transactions.Create(ctx, req)
			if err != nil || tx.ID != 29292 {
				b.Fatal(tx, err)
			}
		}
	})
	b.Run("raw", func(b *testing.B) {
		b.ReportAllocs()
		srv := server(b)
		rc := &rawClient{http: srv.Client(), base: srv.URL + "/2017-09-01/", email: "partner@example.com", key: "4171_benchmarkkey"}
		ctx := context.Background()
		req := rawCreateRequest()
		for b.Loop() {
			tx, err := rc.createTransaction(ctx, req)
			if err != nil || tx.ID != 29292 {
				b.Fatal(tx, err)
			}
		}
	})
}

func sdkCreateRequest() *escrow.CreateTransactionRequest {
	return &escrow.CreateTransactionRequest{
		Currency: escrow.USD, Description: "Perfect sedan for the snowy weather",
		Parties: []escrow.PartyInput{
			{Role: escrow.RoleBuyer, Customer: "me"},
			{Role: escrow.RoleSeller, Customer: "keanu.reaves@test.escrow.com"},
			{Role: escrow.RoleBroker, Customer: "broker@test.escrow.com"},
		},
		Items: []escrow.ItemInput{
			{Title: "2014 Toyota Prius", Description: "Like new, one owner", Type: escrow.ItemMotorVehicle,
				Category: escrow.CategoryAutomobilesCarsAndTrucks, InspectionPeriod: escrow.Days(3), Quantity: 1,
				ExtraAttributes: &escrow.ExtraAttributes{Make: "Toyota", Model: "Prius", Year: 2014},
				Schedule:        []escrow.ScheduleInput{{Amount: escrow.MustAmount("95000"), PayerCustomer: "me", BeneficiaryCustomer: "keanu.reaves@test.escrow.com"}}},
			{Title: "Shipping", Description: "Enclosed carrier", Type: escrow.ItemShippingFee, InspectionPeriod: escrow.Days(3), Quantity: 1,
				Schedule: []escrow.ScheduleInput{{Amount: escrow.MustAmount("1200"), PayerCustomer: "me", BeneficiaryCustomer: "keanu.reaves@test.escrow.com"}}},
			{Type: escrow.ItemBrokerFee,
				Schedule: []escrow.ScheduleInput{{Amount: escrow.MustAmount("1500"), PayerCustomer: "me", BeneficiaryCustomer: "broker@test.escrow.com"}}},
		},
	}
}

// rawClient is the best a careful user would write by hand with net/http and encoding/json:
// one request, Basic auth, a status check, decoding straight from the body into structs
// that keep amounts as strings (exactness without a decimal type). Statuses and extra
// attributes are structs, as in the SDK, not maps: maps would make raw slower and the
// comparison kinder to the SDK than it should be.
type rawClient struct {
	http             *http.Client
	base, email, key string
}

type rawTransaction struct {
	ID           int64   `json:"id"`
	Currency     string  `json:"currency"`
	Description  string  `json:"description"`
	Reference    string  `json:"reference"`
	CreationDate string  `json:"creation_date"`
	CloseDate    *string `json:"close_date"`
	IsCancelled  bool    `json:"is_cancelled"`
	Parties      []struct {
		ID        int64  `json:"id"`
		Role      string `json:"role"`
		Customer  string `json:"customer"`
		Agreed    bool   `json:"agreed"`
		Initiator bool   `json:"initiator"`
	} `json:"parties"`
	Items []struct {
		ID               int64  `json:"id"`
		Title            string `json:"title"`
		Description      string `json:"description"`
		Type             string `json:"type"`
		Category         string `json:"category"`
		InspectionPeriod int64  `json:"inspection_period"`
		Quantity         int    `json:"quantity"`
		ExtraAttributes  struct {
			Make        string `json:"make"`
			Model       string `json:"model"`
			Year        int    `json:"year"`
			VIN         string `json:"vin"`
			Concierge   bool   `json:"concierge"`
			WithContent bool   `json:"with_content"`
		} `json:"extra_attributes"`
		Schedule []struct {
			Amount              string `json:"amount"`
			PayerCustomer       string `json:"payer_customer"`
			BeneficiaryCustomer string `json:"beneficiary_customer"`
			Status              struct {
				Secured                bool `json:"secured"`
				DisbursedToBeneficiary bool `json:"disbursed_to_beneficiary"`
			} `json:"status"`
		} `json:"schedule"`
		Fees []struct {
			Type               string `json:"type"`
			PayerCustomer      string `json:"payer_customer"`
			Split              string `json:"split"`
			Amount             string `json:"amount"`
			AmountWithoutTaxes string `json:"amount_without_taxes"`
		} `json:"fees"`
		Status struct {
			Shipped          bool `json:"shipped"`
			Received         bool `json:"received"`
			Accepted         bool `json:"accepted"`
			Rejected         bool `json:"rejected"`
			ShippedReturned  bool `json:"shipped_returned"`
			ReceivedReturned bool `json:"received_returned"`
			AcceptedReturned bool `json:"accepted_returned"`
			RejectedReturned bool `json:"rejected_returned"`
			Canceled         bool `json:"canceled"`
			InDispute        bool `json:"in_dispute"`
		} `json:"status"`
	} `json:"items"`
}

func (c *rawClient) do(ctx context.Context, method, path string, body any, want int) (*rawTransaction, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, rd)
	if err != nil {
		return nil, err
	}
	req.SetBasicAuth(c.email, c.key)
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != want {
		return nil, fmt.Errorf("%s %s: %s", method, path, resp.Status)
	}
	var tx rawTransaction
	if err := json.NewDecoder(resp.Body).Decode(&tx); err != nil {
		return nil, err
	}
	return &tx, nil
}

func (c *rawClient) getTransaction(ctx context.Context, id int64) (*rawTransaction, error) {
	return c.do(ctx, http.MethodGet, fmt.Sprintf("transaction/%d", id), nil, http.StatusOK)
}

func (c *rawClient) createTransaction(ctx context.Context, req any) (*rawTransaction, error) {
	return c.do(ctx, http.MethodPost, "transaction", req, http.StatusCreated)
}

// rawCreateRequest is the same body as sdkCreateRequest, as a user would build it by hand.
func rawCreateRequest() any {
	type sched struct {
		Amount              json.Number `json:"amount"`
		PayerCustomer       string      `json:"payer_customer"`
		BeneficiaryCustomer string      `json:"beneficiary_customer"`
	}
	type item struct {
		Title            string         `json:"title,omitempty"`
		Description      string         `json:"description,omitempty"`
		Type             string         `json:"type"`
		Category         string         `json:"category,omitempty"`
		InspectionPeriod int64          `json:"inspection_period,omitempty"`
		Quantity         int            `json:"quantity,omitempty"`
		ExtraAttributes  map[string]any `json:"extra_attributes,omitempty"`
		Schedule         []sched        `json:"schedule"`
	}
	type party struct {
		Role     string `json:"role"`
		Customer string `json:"customer"`
	}
	return struct {
		Parties     []party `json:"parties"`
		Currency    string  `json:"currency"`
		Description string  `json:"description"`
		Items       []item  `json:"items"`
	}{
		Parties:     []party{{"buyer", "me"}, {"seller", "keanu.reaves@test.escrow.com"}, {"broker", "broker@test.escrow.com"}},
		Currency:    "usd",
		Description: "Perfect sedan for the snowy weather",
		Items: []item{
			{Title: "2014 Toyota Prius", Description: "Like new, one owner", Type: "motor_vehicle", Category: "automobiles_cars_and_trucks",
				InspectionPeriod: 259200, Quantity: 1, ExtraAttributes: map[string]any{"make": "Toyota", "model": "Prius", "year": 2014},
				Schedule: []sched{{"95000.00", "me", "keanu.reaves@test.escrow.com"}}},
			{Title: "Shipping", Description: "Enclosed carrier", Type: "shipping_fee", InspectionPeriod: 259200, Quantity: 1,
				Schedule: []sched{{"1200.00", "me", "keanu.reaves@test.escrow.com"}}},
			{Type: "broker_fee", Schedule: []sched{{"1500.00", "me", "broker@test.escrow.com"}}},
		},
	}
}

// TestSameCreateBody keeps the two sides of BenchmarkCreateTransaction honest: the SDK and
// rawClient send the same JSON document, whatever the order of its keys.
func TestSameCreateBody(t *testing.T) {
	sdkBody, err := json.Marshal(sdkCreateRequest())
	if err != nil {
		t.Fatal(err)
	}
	rawBody, err := json.Marshal(rawCreateRequest())
	if err != nil {
		t.Fatal(err)
	}
	var a, b any
	if err := json.Unmarshal(sdkBody, &a); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(rawBody, &b); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(a, b) {
		t.Errorf("bodies differ:\nsdk %s\nraw %s", sdkBody, rawBody)
	}
}

// memoryTransport answers every request with the document from memory, with no network
// and no server: what is left to measure is the client's own work.
type memoryTransport struct{ doc []byte }

func (t memoryTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body != nil {
		_, _ = io.Copy(io.Discard, req.Body)
		req.Body.Close()
	}
	status := http.StatusOK
	if req.Method == http.MethodPost {
		status = http.StatusCreated
	}
	return &http.Response{
		StatusCode:    status,
		Status:        http.StatusText(status),
		Header:        http.Header{"Content-Type": {"application/json"}, "Ratelimit-Remaining": {"1000"}},
		Body:          io.NopCloser(bytes.NewReader(t.doc)),
		ContentLength: int64(len(t.doc)),
		Request:       req,
	}, nil
}

// BenchmarkGetTransactionNoNetwork is BenchmarkGetTransaction over memoryTransport: the
// loopback TLS round trip, which dominates and adds noise there, is gone, so the SDK's own
// overhead over hand-written code shows at full scale.
func BenchmarkGetTransactionNoNetwork(b *testing.B) {
	hc := &http.Client{Transport: memoryTransport{doc: []byte(transactionDoc)}}
	const base = "https://api.example.test/2017-09-01/"
	b.Run("sdk", func(b *testing.B) {
		b.ReportAllocs()
		c, err := escrow.NewClient("partner@example.com", "4171_benchmarkkey", escrow.WithBaseURL(base), escrow.WithHTTPClient(hc))
		if err != nil {
			b.Fatal(err)
		}
		ctx := context.Background()
		for b.Loop() {
			tx, err := c.Transactions.Get(ctx, 29292)
			if err != nil || len(tx.Items) != 3 {
				b.Fatal(tx, err)
			}
		}
	})
	b.Run("raw", func(b *testing.B) {
		b.ReportAllocs()
		rc := &rawClient{http: hc, base: base, email: "partner@example.com", key: "4171_benchmarkkey"}
		ctx := context.Background()
		for b.Loop() {
			tx, err := rc.getTransaction(ctx, 29292)
			if err != nil || len(tx.Items) != 3 {
				b.Fatal(tx, err)
			}
		}
	})
}
