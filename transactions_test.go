package escrow

import (
	"context"
	"errors"
	"net"
	"net/http"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/jarcoal/httpmock"
)

// carSale is the creation request of testdata/create_transaction.request.json: every part of
// the creation shape the spec names (broker with visibility, category, extra attributes,
// fees with split, shipping and broker fee items).
func carSale() *CreateTransactionRequest {
	hidden := &Visibility{HiddenFrom: []string{"keanu.reaves@test.escrow.com"}}
	fees := []FeeInput{
		{Type: FeeEscrow, PayerCustomer: "me", Split: SplitHalf},
		{Type: FeeEscrow, PayerCustomer: "keanu.reaves@test.escrow.com", Split: SplitHalf},
	}
	return &CreateTransactionRequest{
		Currency:    USD,
		Description: "Perfect sedan for the snowy weather",
		Reference:   "order-1042",
		Parties: []PartyInput{
			{Role: RoleBuyer, Customer: "me"},
			{Role: RoleSeller, Customer: "keanu.reaves@test.escrow.com"},
			{Role: RoleBroker, Customer: "broker@test.escrow.com", Visibility: hidden},
		},
		Items: []ItemInput{
			{
				Title: "2014 Toyota Prius", Description: "Like new, one owner",
				Type: ItemMotorVehicle, Category: CategoryAutomobilesCarsAndTrucks,
				InspectionPeriod: Days(3), Quantity: 1,
				ExtraAttributes: &ExtraAttributes{Make: "Toyota", Model: "Prius", Year: 2014, VIN: "JTDKN3DU0E0000000", Odometer: "41000", TitleCollection: true},
				Schedule:        []ScheduleInput{{Amount: MustAmount("95000"), PayerCustomer: "me", BeneficiaryCustomer: "keanu.reaves@test.escrow.com"}},
				Fees:            fees,
			},
			{
				Title: "Shipping", Description: "Enclosed carrier", Type: ItemShippingFee,
				InspectionPeriod: Days(3), Quantity: 1,
				Schedule: []ScheduleInput{{Amount: MustAmount("1200.00"), PayerCustomer: "me", BeneficiaryCustomer: "keanu.reaves@test.escrow.com"}},
				Fees:     fees,
			},
			{
				Type: ItemBrokerFee, Visibility: hidden,
				Schedule: []ScheduleInput{{Amount: MustAmount("1500"), PayerCustomer: "me", BeneficiaryCustomer: "broker@test.escrow.com"}},
			},
		},
	}
}

func TestCreateSendsTheGoldenBody(t *testing.T) {
	c, mt := setup(t)
	var rec recorder
	mt.RegisterResponder("POST", testBase+"transaction", rec.then(respond(201, readTestdata(t, "transaction.json"))))
	req := carSale()
	tx, err := c.Transactions.Create(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "create_transaction.request.json", rec.all()[0].Body)
	if tx.ID != 29292 {
		t.Errorf("ID = %d", tx.ID)
	}
	if req.Items[0].Schedule[0].Amount.String() != "95000.00" || req.Reference != "order-1042" {
		t.Error("Create modified the caller's request")
	}
}

func TestCreateMilestoneSendsDueDates(t *testing.T) {
	c, mt := setup(t)
	var rec recorder
	mt.RegisterResponder("POST", testBase+"transaction", rec.then(respond(201, `{"id": 1}`)))
	due := Timestamp{Time: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)}
	_, err := c.Transactions.Create(context.Background(), &CreateTransactionRequest{
		Currency: EUR, Description: "Website build",
		Parties: []PartyInput{{Role: RoleBuyer, Customer: "me"}, {Role: RoleSeller, Customer: "dev@example.com"}},
		Items: []ItemInput{{
			Title: "Design", Type: ItemMilestone, Category: CategoryBusinessAndInternet, InspectionPeriod: Days(1), Quantity: 1,
			Schedule: []ScheduleInput{{Amount: MustAmount("500"), PayerCustomer: "me", BeneficiaryCustomer: "dev@example.com", DueDate: due}},
		}},
	})
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "create_milestone.request.json", rec.all()[0].Body)
}

func TestGetDecodesTheSpecDocument(t *testing.T) {
	c, mt := setup(t)
	mt.RegisterResponder("GET", testBase+"transaction/29292", respond(200, readTestdata(t, "transaction.json")))
	tx, err := c.Transactions.Get(context.Background(), 29292)
	if err != nil {
		t.Fatal(err)
	}
	if tx.Currency != USD || tx.Reference != "order-1042" || !tx.CreationDate.Equal(time.Date(2019, 4, 3, 11, 1, 38, 880000000, time.UTC)) || !tx.CloseDate.IsZero() {
		t.Errorf("transaction = %+v", tx)
	}
	seller, ok := tx.Party(RoleSeller)
	if !ok || seller.Customer != "keanu.reaves@test.escrow.com" || seller.Agreed || seller.ID != 12 {
		t.Errorf("seller = %+v", seller)
	}
	if broker, _ := tx.Party(RoleBroker); broker.Visibility == nil || broker.Visibility.HiddenFrom[0] != "keanu.reaves@test.escrow.com" {
		t.Errorf("broker = %+v", broker)
	}
	car, ok := tx.Item(1001)
	if !ok || car.InspectionPeriod != Days(3) || car.ExtraAttributes.Year != 2014 || !car.ExtraAttributes.TitleCollection || car.Category != CategoryAutomobilesCarsAndTrucks {
		t.Errorf("car = %+v", car)
	}
	fee := car.Fees[0]
	if fee.Type != FeeEscrow || fee.Split != SplitWhole || fee.Amount.String() != "845.50" || fee.AmountWithoutTaxes.String() != "845.50" {
		t.Errorf("fee = %+v", fee)
	}
	if s := car.Schedule[0]; s.Amount.String() != "95000.00" || s.Status.Secured {
		t.Errorf("schedule = %+v", s)
	}
	if tx.Items[2].Type != ItemBrokerFee || tx.Items[2].Schedule[0].Amount.String() != "1500.00" {
		t.Errorf("broker fee = %+v", tx.Items[2])
	}
	if _, ok := tx.Item(999); ok {
		t.Error("Item(999) found")
	}
}

func TestMalformedSuccessBodyIsADecodeError(t *testing.T) {
	for _, body := range []string{``, `<html>`, `{"id": "x"}`, `{"items": [{"schedule": [{"amount": "ten"}]}]}`, `[1,2]`} {
		c, mt := setup(t)
		mt.RegisterResponder("GET", testBase+"transaction/1", respond(200, body))
		_, err := c.Transactions.Get(context.Background(), 1)
		var de *DecodeError
		if !errors.As(err, &de) || !errors.Is(err, ErrMalformedResponse) || de.StatusCode != 200 {
			t.Errorf("body %q: err = %v", body, err)
		}
	}
}

// createTest wires POST /transaction and the reference lookup to sequences of answers.
func createTest(t *testing.T, creates, lookups []httpmock.Responder) (c *Client, posts, gets *recorder) {
	c, mt := setup(t)
	posts, gets = new(recorder), new(recorder)
	mt.RegisterResponder("POST", testBase+"transaction", posts.then(sequence(creates...)))
	if lookups != nil {
		mt.RegisterResponder("GET", testBase+"transaction/reference/order-1042", gets.then(sequence(lookups...)))
	}
	return c, posts, gets
}

var (
	created = respond(201, `{"id": 77, "reference": "order-1042"}`)
	// found is carSale as the API renders it to its creator (the partner party is "me").
	found    = respond(200, carSaleAsRendered(77))
	notFound = respond(404, `{"error": "not found"}`)
	reset    = fail(&net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET})
	refused  = fail(&net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED})
)

func TestCreateReconcilesAnAmbiguousFailureByReference(t *testing.T) {
	tests := []struct {
		name        string
		creates     []httpmock.Responder
		lookups     []httpmock.Responder
		posts, gets int
		wantErr     bool
	}{
		{"5xx, then the lookup finds it", []httpmock.Responder{respond(500, `{}`)}, []httpmock.Responder{found}, 1, 1, false},
		{"dropped after sending, found", []httpmock.Responder{reset}, []httpmock.Responder{found}, 1, 1, false},
		{"dropped, not there, created on the second try", []httpmock.Responder{reset, created}, []httpmock.Responder{notFound}, 2, 1, false},
		{"2xx with a broken body, found", []httpmock.Responder{respond(201, `{"id": `)}, []httpmock.Responder{found}, 1, 1, false},
		{"reference taken after an ambiguous try: found", []httpmock.Responder{reset, respond(422, `{"errors": {"reference": ["in use"]}}`)},
			[]httpmock.Responder{notFound, found}, 2, 2, false},
		{"never sent: retried by the pipeline, no lookup", []httpmock.Responder{refused, created}, nil, 2, 0, false},
		{"429: retried, no lookup", []httpmock.Responder{respond(429, `{}`), created}, nil, 2, 0, false},
		{"validation error: no lookup", []httpmock.Responder{respond(422, `{"errors": {"currency": ["bad"]}}`)}, nil, 1, 0, true},
		{"lookup fails: the ambiguous error, no second create", []httpmock.Responder{respond(503, `{}`)}, []httpmock.Responder{respond(403, `{}`)}, 1, 1, true},
		{"never found: gives up after the retries", []httpmock.Responder{reset}, []httpmock.Responder{notFound}, 1 + DefaultMaxRetries, 1 + DefaultMaxRetries, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				c, posts, gets := createTest(t, tt.creates, tt.lookups)
				tx, err := c.Transactions.Create(context.Background(), carSale())
				if (err != nil) != tt.wantErr {
					t.Fatalf("Create = %+v, %v", tx, err)
				}
				if !tt.wantErr && tx.ID != 77 {
					t.Errorf("ID = %d", tx.ID)
				}
				if posts.count() != tt.posts || gets.count() != tt.gets {
					t.Errorf("%d creates and %d lookups, want %d and %d", posts.count(), gets.count(), tt.posts, tt.gets)
				}
			})
		})
	}
}

func TestCreateWithoutReferenceNeverRetriesAnAmbiguousFailure(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, posts, _ := createTest(t, []httpmock.Responder{reset, created}, nil)
		req := carSale()
		req.Reference = ""
		_, err := c.Transactions.Create(context.Background(), req)
		var te *TransportError
		if !errors.As(err, &te) || !te.OutcomeUnknown {
			t.Fatalf("err = %#v, want a TransportError with an unknown outcome", err)
		}
		if posts.count() != 1 {
			t.Errorf("%d creates", posts.count())
		}
	})
}

func TestActionsSendTheirBodies(t *testing.T) {
	c, mt := setup(t)
	var rec recorder
	mt.RegisterResponder("PATCH", testBase+"transaction/5", rec.then(respond(200, `{"id": 5}`)))
	mt.RegisterResponder("PATCH", testBase+"transaction/5/item/9", rec.then(respond(200, `{"id": 5}`)))
	ctx := context.Background()
	s := c.Transactions
	steps := []struct {
		do   func() (*Transaction, error)
		want string
	}{
		{func() (*Transaction, error) { return s.Agree(ctx, 5) }, `{"action":"agree"}`},
		{func() (*Transaction, error) {
			return s.Ship(ctx, 5, &ShippingInformation{TrackingInformation: &TrackingInformation{Carrier: "UPS", TrackingID: "1Z999"}})
		}, `{"action":"ship","shipping_information":{"tracking_information":{"carrier":"UPS","tracking_id":"1Z999"}}}`},
		{func() (*Transaction, error) { return s.Receive(ctx, 5) }, `{"action":"receive"}`},
		{func() (*Transaction, error) { return s.Accept(ctx, 5) }, `{"action":"accept"}`},
		{func() (*Transaction, error) { return s.Reject(ctx, 5) }, `{"action":"reject"}`},
		{func() (*Transaction, error) { return s.ShipReturn(ctx, 5, nil) }, `{"action":"ship_return"}`},
		{func() (*Transaction, error) { return s.ReceiveReturn(ctx, 5) }, `{"action":"receive_return"}`},
		{func() (*Transaction, error) { return s.AcceptReturn(ctx, 5) }, `{"action":"accept_return"}`},
		{func() (*Transaction, error) { return s.RejectReturn(ctx, 5) }, `{"action":"reject_return"}`},
		{func() (*Transaction, error) { return s.Cancel(ctx, 5, "buyer changed their mind") }, `{"action":"cancel","cancel_information":{"cancellation_reason":"buyer changed their mind"}}`},
		{func() (*Transaction, error) { return s.Cancel(ctx, 5, "") }, `{"action":"cancel"}`},
		{func() (*Transaction, error) {
			return s.ActOnItem(ctx, 5, 9, &ActionRequest{Action: ActionShip, ShippingInformation: &ShippingInformation{AuthorizationType: AuthorizationPush}})
		}, `{"action":"ship","shipping_information":{"authorization_type":"push"}}`},
	}
	for i, st := range steps {
		if _, err := st.do(); err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		if got := string(rec.all()[i].Body); got != st.want {
			t.Errorf("step %d sent %s, want %s", i, got, st.want)
		}
	}
	if _, err := s.Act(ctx, 5, &ActionRequest{}); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("Act without an action: %v", err)
	}
	if _, err := s.ActOnItem(ctx, 5, 9, nil); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("ActOnItem(nil): %v", err)
	}
	if _, err := s.Create(ctx, nil); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("Create(nil): %v", err)
	}
	_ = http.MethodGet
}

func TestMarkWireSentBodies(t *testing.T) {
	for _, tt := range []struct {
		name, body string
		status     int
		want       string // Raw; "" for none
		txID       int64  // the transaction read from the answer; 0 for none
	}{
		{"empty 200", ``, 200, "", 0},
		{"whitespace 200", " \n", 200, "", 0},
		{"204", ``, 204, "", 0},
		{"JSON", `{"status": "wire_sent", "amount": "3650.50"}`, 200, `{"status": "wire_sent", "amount": "3650.50"}`, 0},
		{"JSON list", `[1, 2]`, 200, `[1, 2]`, 0},
		{"a transaction", `{"id": 48016, "currency": "usd", "parties": [{"role": "buyer", "customer": "me", "agreed": true}], "items": []}`, 200,
			`{"id": 48016, "currency": "usd", "parties": [{"role": "buyer", "customer": "me", "agreed": true}], "items": []}`, 48016},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c, mt := setup(t)
			var rec recorder
			mt.RegisterResponder("POST", testBase+"transaction/48016/payment_methods/wire_transfer", rec.then(respond(tt.status, tt.body)))
			sent, err := c.Transactions.MarkWireSent(context.Background(), 48016)
			if err != nil {
				t.Fatal(err)
			}
			if string(sent.Raw) != tt.want || (tt.want == "" && sent.Raw != nil) {
				t.Errorf("raw = %q, want %q", sent.Raw, tt.want)
			}
			switch {
			case tt.txID == 0 && sent.Transaction != nil:
				t.Errorf("read a transaction from %s", tt.body)
			case tt.txID != 0 && (sent.Transaction == nil || sent.Transaction.ID != tt.txID || !sent.Transaction.AllAgreed()):
				t.Errorf("transaction = %+v, want %d decoded", sent.Transaction, tt.txID)
			}
			if r := rec.all()[0]; len(r.Body) != 0 || r.Header.Get("Content-Type") != "" {
				t.Errorf("sent a body %q", r.Body)
			}
		})
	}
	t.Run("not JSON", func(t *testing.T) {
		c, mt := setup(t)
		mt.RegisterResponder("POST", testBase+"transaction/48016/payment_methods/wire_transfer", respond(200, `OK`))
		if _, err := c.Transactions.MarkWireSent(context.Background(), 48016); !errors.Is(err, ErrMalformedResponse) {
			t.Errorf("err = %v, want ErrMalformedResponse", err)
		}
	})
}

func TestTimelineDecodesBareAndWrappedLists(t *testing.T) {
	for _, tt := range []struct{ name, body string }{
		{"bare list", `[{"event": "create", "date": "2024-05-06T09:15:02.123456+10:00", "message": "created"},
			{"event": "ship", "date": "2024-05-20T08:00:00", "item_id": 7001}]`},
		{"wrapped", `{"page": 1, "entries": [{"event": "create", "date": "2024-05-06T09:15:02.123456+10:00", "message": "created"},
			{"event": "ship", "date": "2024-05-20T08:00:00", "item_id": 7001}]}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c, mt := setup(t)
			mt.RegisterResponder("GET", testBase+"transaction/48016/timeline-entries", respond(200, tt.body))
			tl, err := c.Transactions.ListTimelineEntries(context.Background(), 48016)
			if err != nil {
				t.Fatal(err)
			}
			if len(tl.Entries) != 2 || tl.Entries[0].Event != "create" || tl.Entries[0].Message != "created" ||
				tl.Entries[1].ItemID != 7001 || tl.Entries[1].Date.Raw() != "2024-05-20T08:00:00" {
				t.Errorf("entries = %+v", tl.Entries)
			}
			at(t, "date", tl.Entries[0].Date, utc(2024, 5, 5, 23, 15, 2, 123456000))
			if string(tl.Raw) != tt.body {
				t.Errorf("Raw = %s", tl.Raw)
			}
		})
	}
	for _, body := range []string{`{"entries": [{"event": 5}]}`, `"timeline"`, `{"entries": `} {
		c, mt := setup(t)
		mt.RegisterResponder("GET", testBase+"transaction/48016/timeline-entries", respond(200, body))
		if _, err := c.Transactions.ListTimelineEntries(context.Background(), 48016); !errors.Is(err, ErrMalformedResponse) {
			t.Errorf("body %s: err = %v, want ErrMalformedResponse", body, err)
		}
	}
}
