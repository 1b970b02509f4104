package escrow_test

// The examples run against the emulator of package escrowtest, which stands in for the API:
// against the real one, a client needs only escrow.NewClient(email, apiKey), with
// escrow.WithSandbox() for the sandbox. The emulator's clock is frozen (escrowtest.WithClock)
// and its ids are sequential, so that the output is the same in every run.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"net/http/httptest"
	"strings"
	"time"

	escrow "github.com/escrowkit/escrow-go"
	"github.com/escrowkit/escrow-go/escrowtest"
)

// exampleEmulator starts an emulator whose clock stands still at a fixed date.
func exampleEmulator(opts ...escrowtest.Option) *escrowtest.Server {
	return escrowtest.NewServer(append([]escrowtest.Option{
		escrowtest.WithClock(time.Date(2025, 5, 1, 12, 0, 0, 0, time.UTC)),
	}, opts...)...)
}

// connectAs returns a client for an account on the emulator.
func connectAs(srv *escrowtest.Server, acct escrowtest.Account, opts ...escrow.Option) *escrow.Client {
	opts = append([]escrow.Option{escrow.WithBaseURL(srv.URL), escrow.WithHTTPClient(srv.Client())}, opts...)
	client, err := escrow.NewClient(acct.Email, acct.APIKey, opts...)
	if err != nil {
		log.Fatal(err)
	}
	return client
}

// domainSale is a 1,000.00 domain name that buyer buys from seller.
func domainSale(buyer, seller string) *escrow.CreateTransactionRequest {
	return &escrow.CreateTransactionRequest{
		Currency:    escrow.USD,
		Description: "The domain example.org",
		Parties: []escrow.PartyInput{
			{Role: escrow.RoleBuyer, Customer: buyer},
			{Role: escrow.RoleSeller, Customer: seller},
		},
		Items: []escrow.ItemInput{{
			Title:            "example.org",
			Type:             escrow.ItemDomainName,
			InspectionPeriod: escrow.Days(3),
			Quantity:         1,
			Schedule: []escrow.ScheduleInput{{
				Amount:              escrow.MustAmount("1000.00"),
				PayerCustomer:       buyer,
				BeneficiaryCustomer: seller,
			}},
		}},
	}
}

func ExampleNewClient() {
	srv := exampleEmulator()
	defer srv.Close()
	acct := srv.AddCustomer("buyer@example.com")

	client, err := escrow.NewClient(acct.Email, acct.APIKey,
		escrow.WithBaseURL(srv.URL),         // the emulator instead of production
		escrow.WithHTTPClient(srv.Client()), // which trusts the emulator's certificate
	)
	if err != nil {
		log.Fatal(err)
	}
	me, err := client.Customers.Get(context.Background(), escrow.Me)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(me.ID, me.Email)
	// Output: 1001 buyer@example.com
}

func ExampleTransactionsService_Create() {
	srv := exampleEmulator()
	defer srv.Close()
	client := connectAs(srv, srv.AddCustomer("buyer@example.com"))

	tx, err := client.Transactions.Create(context.Background(), domainSale(escrow.Me, "seller@example.com"))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("transaction", tx.ID, "created", tx.CreationDate.Format(time.DateOnly))
	for _, p := range tx.Parties {
		fmt.Println(p.Role, p.Customer, "agreed:", p.Agreed)
	}
	item := tx.Items[0]
	fee := item.Fees[0]
	fmt.Println(item.Title, item.Schedule[0].Amount, "escrow fee", fee.Amount, "paid by", fee.PayerCustomer)
	// Output:
	// transaction 200001 created 2025-05-01
	// buyer buyer@example.com agreed: true
	// seller seller@example.com agreed: false
	// partner buyer@example.com agreed: true
	// example.org 1000.00 escrow fee 32.50 paid by buyer@example.com
}

// A reference makes Create safe against a lost answer: here the emulator creates the
// transaction and then drops the connection, and Create finds the transaction by its
// reference instead of creating a second one.
func ExampleTransactionsService_Create_reference() {
	srv := exampleEmulator()
	defer srv.Close()
	client := connectAs(srv, srv.AddCustomer("buyer@example.com"))
	ctx := context.Background()

	if err := srv.InjectFault(escrowtest.Fault{Endpoint: "POST /transaction", Drop: escrowtest.DropAfter}); err != nil {
		log.Fatal(err)
	}
	req := domainSale(escrow.Me, "seller@example.com")
	req.Reference = "order-1042"
	tx, err := client.Transactions.Create(ctx, req)
	if err != nil {
		log.Fatal(err)
	}
	srv.ClearFaults()

	found, err := client.Transactions.GetByReference(ctx, "order-1042")
	if err != nil {
		log.Fatal(err)
	}
	list, err := client.Transactions.List(ctx, nil)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(tx.ID, found.ID, len(list.Transactions))
	// Output: 200001 200001 1
}

func ExampleTransactionsService_All() {
	srv := exampleEmulator()
	defer srv.Close()
	client := connectAs(srv, srv.AddCustomer("buyer@example.com"))
	ctx := context.Background()
	for range 3 {
		if _, err := client.Transactions.Create(ctx, domainSale(escrow.Me, "seller@example.com")); err != nil {
			log.Fatal(err)
		}
	}

	// All fetches the pages as the loop needs them, two transactions at a time here.
	for tx, err := range client.Transactions.All(ctx, &escrow.ListTransactionsOptions{PerPage: 2}) {
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(tx.ID, tx.Description)
	}
	// Output:
	// 200003 The domain example.org
	// 200002 The domain example.org
	// 200001 The domain example.org
}

// An approved partner acts for the parties of its transactions with AsCustomer, except for
// the steps the API keeps for a party itself, such as the buyer accepting the goods.
func ExampleAsCustomer() {
	srv := exampleEmulator()
	defer srv.Close()
	partner := connectAs(srv, srv.AddPartner("market@example.com"))
	ctx := context.Background()
	buyer, seller := "buyer@example.com", "seller@example.com"

	tx, err := partner.Transactions.Create(ctx, domainSale(buyer, seller))
	if err != nil {
		log.Fatal(err)
	}
	for _, party := range []string{buyer, seller} {
		if tx, err = partner.Transactions.Agree(ctx, tx.ID, escrow.AsCustomer(party)); err != nil {
			log.Fatal(err)
		}
	}
	for _, p := range tx.Parties {
		fmt.Println(p.Role, p.Customer, "agreed:", p.Agreed)
	}

	if err := srv.ApprovePayment(tx.ID); err != nil { // the buyer's funds arrive
		log.Fatal(err)
	}
	shipping := &escrow.ShippingInformation{AuthorizationType: escrow.AuthorizationPush}
	if _, err := partner.Transactions.Ship(ctx, tx.ID, shipping, escrow.AsCustomer(seller)); err != nil {
		log.Fatal(err)
	}
	if _, err := partner.Transactions.Receive(ctx, tx.ID, escrow.AsCustomer(buyer)); err != nil {
		log.Fatal(err)
	}
	_, err = partner.Transactions.Accept(ctx, tx.ID, escrow.AsCustomer(buyer))
	fmt.Println("accept as the buyer, forbidden:", errors.Is(err, escrow.ErrForbidden))
	// Output:
	// buyer buyer@example.com agreed: true
	// seller seller@example.com agreed: true
	// partner market@example.com agreed: true
	// accept as the buyer, forbidden: true
}

// Milestone transactions move item by item.
func ExampleTransactionsService_ActOnItem() {
	srv := exampleEmulator()
	defer srv.Close()
	buyer := connectAs(srv, srv.AddCustomer("client@example.com"))
	seller := connectAs(srv, srv.AddCustomer("dev@example.com"))
	ctx := context.Background()

	milestone := func(title, amount string, due time.Time) escrow.ItemInput {
		return escrow.ItemInput{
			Title: title, Type: escrow.ItemMilestone, InspectionPeriod: escrow.Days(5), Quantity: 1,
			Schedule: []escrow.ScheduleInput{{
				Amount: escrow.MustAmount(amount), PayerCustomer: escrow.Me, BeneficiaryCustomer: "dev@example.com",
				DueDate: escrow.Timestamp{Time: due},
			}},
		}
	}
	tx, err := buyer.Transactions.Create(ctx, &escrow.CreateTransactionRequest{
		Currency: escrow.USD, Description: "A website in two milestones",
		Parties: []escrow.PartyInput{
			{Role: escrow.RoleBuyer, Customer: escrow.Me},
			{Role: escrow.RoleSeller, Customer: "dev@example.com"},
		},
		Items: []escrow.ItemInput{
			milestone("Design", "500.00", srv.Now().AddDate(0, 0, 14)),
			milestone("Build", "2000.00", srv.Now().AddDate(0, 0, 42)),
		},
	})
	if err != nil {
		log.Fatal(err)
	}
	if _, err := seller.Transactions.Agree(ctx, tx.ID); err != nil {
		log.Fatal(err)
	}
	if err := srv.ApprovePayment(tx.ID); err != nil {
		log.Fatal(err)
	}

	design := tx.Items[0].ID
	if tx, err = seller.Transactions.ActOnItem(ctx, tx.ID, design, &escrow.ActionRequest{Action: escrow.ActionShip}); err != nil {
		log.Fatal(err)
	}
	for _, it := range tx.Items {
		fmt.Println(it.Title, it.Schedule[0].Amount, "fee", it.Fees[0].Amount,
			"due", it.Schedule[0].DueDate.Format(time.DateOnly), "shipped:", it.Status.Shipped)
	}
	// Output:
	// Design 500.00 fee 17.88 due 2025-05-15 shipped: true
	// Build 2000.00 fee 71.50 due 2025-06-12 shipped: false
}

// The partner listings filter the transactions a partner created.
func ExamplePartnerService_AllTransactions() {
	srv := exampleEmulator()
	defer srv.Close()
	partner := connectAs(srv, srv.AddPartner("market@example.com"))
	ctx := context.Background()
	var ids []int64
	for range 3 {
		tx, err := partner.Transactions.Create(ctx, domainSale("buyer@example.com", "seller@example.com"))
		if err != nil {
			log.Fatal(err)
		}
		ids = append(ids, tx.ID)
	}
	if _, err := partner.Transactions.Cancel(ctx, ids[1], "buyer changed their mind"); err != nil {
		log.Fatal(err)
	}

	opt := &escrow.PartnerTransactionsOptions{Status: escrow.StatusOngoing, SortDirection: escrow.SortAsc}
	for tx, err := range partner.Partner.AllTransactions(ctx, opt) {
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(tx.ID, tx.Items[0].Title)
	}
	// Output:
	// 200001 example.org
	// 200003 example.org
}

// A 422 names every field the API refused, with a path into the request.
func ExampleValidationError_Fields() {
	srv := exampleEmulator()
	defer srv.Close()
	client := connectAs(srv, srv.AddCustomer("buyer@example.com"))

	req := domainSale(escrow.Me, "seller@example.com")
	req.Currency = "USD"                                     // must be lowercase
	req.Items[0].Schedule[0].Amount = escrow.MustAmount("0") // must be positive
	_, err := client.Transactions.Create(context.Background(), req)

	var ve *escrow.ValidationError
	if errors.As(err, &ve) {
		fmt.Println(ve.StatusCode)
		for _, f := range ve.Fields() {
			fmt.Println(f.Path)
		}
	}
	// Output:
	// 422
	// currency
	// items[0].schedule[0].amount
}

// Every answer outside 2xx is an *APIError, matched by status with errors.Is.
func ExampleAPIError() {
	srv := exampleEmulator()
	defer srv.Close()
	client := connectAs(srv, srv.AddCustomer("buyer@example.com"))

	_, err := client.Transactions.Get(context.Background(), 424242)
	var apiErr *escrow.APIError
	if errors.Is(err, escrow.ErrNotFound) && errors.As(err, &apiErr) {
		fmt.Println(apiErr.StatusCode, apiErr.Method, apiErr.Path)
	}
	// Output: 404 GET /2017-09-01/transaction/424242
}

// When an endpoint's allowance is spent and the wait for the next window exceeds
// WithMaxWait, the call fails at once with a *RateLimitError instead of sleeping.
func ExampleRateLimitError() {
	srv := exampleEmulator(escrowtest.WithRateLimit(2, time.Minute))
	defer srv.Close()
	client := connectAs(srv, srv.AddCustomer("buyer@example.com"), escrow.WithMaxWait(time.Second))
	ctx := context.Background()

	var err error
	for range 3 {
		if _, err = client.Customers.Get(ctx, escrow.Me); err != nil {
			break
		}
	}
	var rl *escrow.RateLimitError
	if errors.Is(err, escrow.ErrRateLimited) && errors.As(err, &rl) {
		// Response is nil: the client knew the allowance was spent and did not send the call.
		fmt.Println(rl.Endpoint, rl.Response == nil)
	}
	// Output: GET /customer/{customer_id} true
}

// ParseEvent reads a webhook delivery. Deliveries are not signed: confirm one by fetching
// its transaction before acting on it, as package webhook does.
func ExampleParseEvent() {
	body := `{"event": "payment_approved", "event_type": "transaction", "transaction_id": 200001}`
	req := httptest.NewRequest("POST", "/escrow/webhook", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")

	ev, err := escrow.ParseEvent(req)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(ev.Name, ev.TransactionID)

	_, err = escrow.ParseEvent(httptest.NewRequest("GET", "/escrow/webhook", nil))
	var bad *escrow.EventError
	if errors.As(err, &bad) {
		fmt.Println(bad.StatusCode)
	}
	// Output:
	// payment_approved 200001
	// 405
}

// Amounts are exact: they never pass through float64.
func ExampleAmount() {
	price := escrow.MustAmount("19.99")
	total := price.Mul(3)
	b, err := json.Marshal(struct {
		Total escrow.Amount `json:"total"`
	}{total})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(total, string(b))

	var fromAPI escrow.Amount // the API sends amounts as strings
	if err := json.Unmarshal([]byte(`"1000.50"`), &fromAPI); err != nil {
		log.Fatal(err)
	}
	cents, exact := fromAPI.Cents()
	fmt.Println(fromAPI, cents, exact)

	if _, err := escrow.ParseAmount("12.345"); errors.Is(err, escrow.ErrInvalidAmount) {
		fmt.Println("refused:", err)
	}
	// Output:
	// 59.97 {"total":59.97}
	// 1000.50 100050 true
	// refused: escrow: invalid amount: "12.345" has more than two decimals
}

// State and Totals read where a transaction stands and who pays and nets what, from what
// the API sends. Here a broker (the market) sells for a seller who pays the broker's
// 100.00 commission out of the price: the seller is paid out first, and the transaction
// stays open until the commission is paid out too.
func ExampleTransaction_State() {
	srv := exampleEmulator()
	defer srv.Close()
	market := connectAs(srv, srv.AddPartner("market@example.com"))
	buyer, seller := srv.AddCustomer("buyer@example.com"), srv.AddCustomer("seller@example.com")
	sellerClient := connectAs(srv, seller)
	ctx := context.Background()

	sale := domainSale(buyer.Email, seller.Email)
	sale.Parties = append(sale.Parties, escrow.PartyInput{Role: escrow.RoleBroker, Customer: escrow.Me})
	sale.Items = append(sale.Items, escrow.ItemInput{Type: escrow.ItemBrokerFee, Schedule: []escrow.ScheduleInput{{
		Amount: escrow.MustAmount("100.00"), PayerCustomer: seller.Email, BeneficiaryCustomer: escrow.Me,
	}}})
	tx, err := market.Transactions.Create(ctx, sale)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("created:", tx.State())

	ach := &escrow.DisbursementMethod{Type: escrow.DisbursementACH, AccountName: "Payee", AccountType: "checking",
		BankABARoutingNumber: "021000021", BankAccountNumber: "000123456789", BankName: "Example Bank"}
	steps := []struct {
		name string
		do   func() (*escrow.Transaction, error)
	}{
		{"agreed", func() (*escrow.Transaction, error) {
			if _, err := market.Transactions.Agree(ctx, tx.ID, escrow.AsCustomer(buyer.Email)); err != nil {
				return nil, err
			}
			return market.Transactions.Agree(ctx, tx.ID, escrow.AsCustomer(seller.Email))
		}},
		{"paid", func() (*escrow.Transaction, error) {
			if err := srv.ApprovePayment(tx.ID); err != nil {
				return nil, err
			}
			return market.Transactions.Get(ctx, tx.ID)
		}},
		{"shipped", func() (*escrow.Transaction, error) {
			return market.Transactions.Ship(ctx, tx.ID, &escrow.ShippingInformation{AuthorizationType: escrow.AuthorizationPush}, escrow.AsCustomer(seller.Email))
		}},
		{"received", func() (*escrow.Transaction, error) {
			return market.Transactions.Receive(ctx, tx.ID, escrow.AsCustomer(buyer.Email))
		}},
		{"accepted", func() (*escrow.Transaction, error) {
			return connectAs(srv, buyer).Transactions.Accept(ctx, tx.ID) // the buyer's own key
		}},
		{"seller's payout chosen", func() (*escrow.Transaction, error) {
			if _, err := sellerClient.Transactions.SelectDisbursementMethod(ctx, tx.ID, ach); err != nil {
				return nil, err
			}
			return market.Transactions.Get(ctx, tx.ID)
		}},
		{"broker's payout chosen", func() (*escrow.Transaction, error) {
			if _, err := market.Transactions.SelectDisbursementMethod(ctx, tx.ID, ach); err != nil {
				return nil, err
			}
			return market.Transactions.Get(ctx, tx.ID)
		}},
	}
	for _, step := range steps {
		if tx, err = step.do(); err != nil {
			log.Fatalf("%s: %v", step.name, err)
		}
		fmt.Printf("%s: %s (complete: %t)\n", step.name, tx.State(), tx.Completed())
	}

	totals := tx.Totals()
	fmt.Println("price", totals.Items, "escrow fee", totals.EscrowFee, "commission", totals.BrokerFee)
	for _, role := range []escrow.Role{escrow.RoleBuyer, escrow.RoleSeller, escrow.RoleBroker} {
		p, _ := tx.Party(role)
		t := totals.Of(p.Customer)
		fmt.Printf("%s pays %s, receives %s, nets %s\n", role, t.Pays(), t.Receives, t.Net())
	}
	// Output:
	// created: awaiting_agreement
	// agreed: awaiting_payment (complete: false)
	// paid: funded (complete: false)
	// shipped: shipped (complete: false)
	// received: in_inspection (complete: false)
	// accepted: accepted (complete: false)
	// seller's payout chosen: disbursed (complete: false)
	// broker's payout chosen: complete (complete: true)
	// price 1000.00 escrow fee 32.50 commission 100.00
	// buyer pays 1032.50, receives 0.00, nets -1032.50
	// seller pays 100.00, receives 1000.00, nets 900.00
	// broker pays 0.00, receives 100.00, nets 100.00
}

// Do reaches what the SDK has no method for yet, with the same credentials, retries, rate
// limits and typed errors: here the emulator's endpoint that creates an API key, and an
// answer decoded into a map to see every field.
func ExampleClient_Do() {
	srv := exampleEmulator()
	defer srv.Close()
	client := connectAs(srv, srv.AddCustomer("buyer@example.com"))
	ctx := context.Background()

	var key escrow.APIKey
	if err := client.Do(ctx, "POST", "customer/me/api_key", map[string]string{"name": "ci"}, &key); err != nil {
		log.Fatal(err)
	}
	fmt.Println(key.Name, key.IsActive, len(key.LastFourCharacters))

	var page map[string]any
	if err := client.Do(ctx, "GET", "transaction?per_page=5", nil, &page); err != nil {
		log.Fatal(err)
	}
	fmt.Println(page["per_page"], page["page_count"])

	err := client.Do(ctx, "GET", "transaction/999", nil, nil)
	fmt.Println(errors.Is(err, escrow.ErrNotFound))
	// Output:
	// ci true 4
	// 5 0
	// true
}

// WithResponse shows what an answer said beyond its body, such as how many requests the
// endpoint has left.
func ExampleWithResponse() {
	srv := exampleEmulator(escrowtest.WithRateLimit(100, time.Minute))
	defer srv.Close()
	client := connectAs(srv, srv.AddCustomer("buyer@example.com"))

	var resp escrow.Response
	if _, err := client.Customers.Get(context.Background(), escrow.Me, escrow.WithResponse(&resp)); err != nil {
		log.Fatal(err)
	}
	fmt.Println(resp.StatusCode, resp.RateLimit.Remaining)
	// Output: 200 99
}

// Update changes the caller's own details, or, as far as the API allows, a customer's it
// has access to.
func ExampleCustomersService_Update() {
	srv := exampleEmulator()
	defer srv.Close()
	client := connectAs(srv, srv.AddCustomer("buyer@example.com"))

	me, err := client.Customers.Update(context.Background(), escrow.Me, &escrow.UpdateCustomerRequest{
		FirstName: "Ada", LastName: "Lovelace", PhoneNumber: "+44 20 7946 0000",
		Address:                 &escrow.Address{Line1: "12 St James's Sq", City: "London", Country: "GB", PostCode: "SW1Y 4JH"},
		IdentificationDocuments: []escrow.IdentificationDocument{{Type: "passport", Value: "925076473", Country: "GB"}},
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(me.FirstName, me.LastName, me.Address.City)
}
