package escrow_test

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	// These tests run the SDK against the emulator (package escrowtest), an independent
	// implementation of the server side of the spec: a wrong JSON tag or path on either side
	// fails here. With ESCROW_SANDBOX_EMAIL and ESCROW_SANDBOX_API_KEY set, TestSandboxLifecycle
	// runs the part of the lifecycle one account can drive against the provider's sandbox.

	escrow "github.com/escrowkit/escrow-go"
	"github.com/escrowkit/escrow-go/escrowtest"
)

// An escrowtest.Server is what WithEmulator takes.
var _ escrow.TestServer = (*escrowtest.Server)(nil)

// market is a partner on the emulator, with clients for it and the parties it acts for.
type market struct {
	srv                   *escrowtest.Server
	partner, buyer, other *escrow.Client
}

func newMarket(t *testing.T, opts ...escrowtest.Option) *market {
	t.Helper()
	srv := escrowtest.NewServer(opts...)
	t.Cleanup(srv.Close)
	connect := func(a escrowtest.Account, o ...escrow.Option) *escrow.Client {
		c, err := escrow.NewClient(a.Email, a.APIKey, append([]escrow.Option{escrow.WithBaseURL(srv.URL), escrow.WithHTTPClient(srv.Client())}, o...)...)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	m := &market{srv: srv, partner: connect(srv.AddPartner("market@example.com"))}
	m.buyer = connect(srv.AddCustomer("buyer@example.com"))
	srv.AddCustomer("seller@example.com")
	srv.AddCustomer("broker@example.com")
	m.other = connect(srv.AddCustomer("stranger@example.com"))
	return m
}

// brokeredSale is a 1,500.00 laptop with a 50.00 broker commission, split escrow fee.
func brokeredSale(reference string) *escrow.CreateTransactionRequest {
	fees := []escrow.FeeInput{
		{Type: escrow.FeeEscrow, PayerCustomer: "buyer@example.com", Split: escrow.SplitHalf},
		{Type: escrow.FeeEscrow, PayerCustomer: "seller@example.com", Split: escrow.SplitHalf},
	}
	return &escrow.CreateTransactionRequest{
		Currency: escrow.USD, Description: "A refurbished laptop", Reference: reference,
		Parties: []escrow.PartyInput{
			{Role: escrow.RoleBuyer, Customer: "buyer@example.com"},
			{Role: escrow.RoleSeller, Customer: "seller@example.com"},
			{Role: escrow.RoleBroker, Customer: "broker@example.com"},
		},
		Items: []escrow.ItemInput{
			{
				Title: "Laptop", Type: escrow.ItemGeneralMerchandise, Category: escrow.CategoryComputerHardwareAndSoftware,
				InspectionPeriod: escrow.Days(3), Quantity: 1, Fees: fees,
				Schedule: []escrow.ScheduleInput{{Amount: escrow.MustAmount("1500.00"), PayerCustomer: "buyer@example.com", BeneficiaryCustomer: "seller@example.com"}},
			},
			{
				Type: escrow.ItemBrokerFee, Fees: nil,
				Schedule: []escrow.ScheduleInput{{Amount: escrow.MustAmount("50.00"), PayerCustomer: "buyer@example.com", BeneficiaryCustomer: "broker@example.com"}},
			},
		},
	}
}

func TestLifecycleOnTheEmulator(t *testing.T) {
	m := newMarket(t)
	ctx := t.Context()
	tx, err := m.partner.Transactions.Create(ctx, brokeredSale("order-1001"))
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	laptop := tx.Items[0]
	if len(laptop.Fees) != 2 || laptop.Fees[0].Amount.String() != "24.38" || laptop.Fees[0].Split != escrow.SplitHalf {
		t.Errorf("escrow fees %+v; want two halves of 3.25%% of 1500.00", laptop.Fees)
	}
	if p, ok := tx.Party(escrow.RolePartner); !ok || !p.Agreed || !p.Initiator {
		t.Errorf("partner party %+v", p)
	}
	if got, err := m.partner.Transactions.GetByReference(ctx, "order-1001"); err != nil || got.ID != tx.ID {
		t.Errorf("GetByReference = %v, %v", got, err)
	}

	buyer, seller := escrow.AsCustomer("buyer@example.com"), escrow.AsCustomer("seller@example.com")
	for _, who := range []escrow.RequestOption{buyer, seller, escrow.AsCustomer("broker@example.com")} {
		if tx, err = m.partner.Transactions.Agree(ctx, tx.ID, who); err != nil {
			t.Fatalf("Agree: %v", err)
		}
	}
	methods, err := m.partner.Transactions.GetPaymentMethods(ctx, tx.ID, buyer)
	if err != nil || len(methods.AvailablePaymentMethods) == 0 {
		t.Fatalf("PaymentMethods = %+v, %v", methods, err)
	}
	landing, err := m.partner.Transactions.ChoosePaymentMethod(ctx, tx.ID, escrow.PaymentCreditCard, &escrow.ChoosePaymentMethodRequest{ReturnURL: "https://market.example.com/paid"}, buyer)
	if err != nil || !strings.HasPrefix(landing.LandingPage, "https://") {
		t.Fatalf("ChoosePaymentMethod = %+v, %v", landing, err)
	}
	if err := m.srv.ApprovePayment(tx.ID); err != nil {
		t.Fatal(err)
	}
	if tx, err = m.partner.Transactions.Ship(ctx, tx.ID, &escrow.ShippingInformation{
		TrackingInformation: &escrow.TrackingInformation{Carrier: "UPS", TrackingID: "1Z999AA10123456784"},
	}, seller); err != nil {
		t.Fatalf("Ship: %v", err)
	}
	if tx, err = m.partner.Transactions.Receive(ctx, tx.ID, buyer); err != nil {
		t.Fatalf("Receive: %v", err)
	}
	// Acceptance is the buyer's own: the API refuses it As-Customer.
	if _, err = m.partner.Transactions.Accept(ctx, tx.ID, buyer); !errors.Is(err, escrow.ErrForbidden) {
		t.Fatalf("Accept As-Customer: %v, want ErrForbidden", err)
	}
	if tx, err = m.buyer.Transactions.Accept(ctx, tx.ID); err != nil {
		t.Fatalf("Accept: %v", err)
	}
	if st := tx.Items[0].Status; !st.Shipped || !st.Received || !st.Accepted {
		t.Errorf("item status %+v", st)
	}

	timeline, err := m.partner.Transactions.ListTimelineEntries(ctx, tx.ID)
	if err != nil {
		t.Fatal(err)
	}
	var events []string
	for _, e := range timeline.Entries {
		events = append(events, string(e.Event))
	}
	if got := strings.Join(events, " "); got != "create agree payment_received payment_approved ship receive accept" {
		t.Errorf("timeline: %s", got)
	}

	// The stranger is no party: the transaction does not exist for it.
	if _, err := m.other.Transactions.Get(ctx, tx.ID); !errors.Is(err, escrow.ErrNotFound) {
		t.Errorf("stranger's Get: %v, want ErrNotFound", err)
	}
}

// TestValidationFieldsFromTheEmulator: a body breaking several rules comes back as one
// *ValidationError naming every field, in the spec's paths.
func TestValidationFieldsFromTheEmulator(t *testing.T) {
	m := newMarket(t)
	req := brokeredSale("")
	req.Currency = "USD"
	req.Items[0].Fees[1].Split = 0.25
	req.Items[0].Schedule[0].Amount = escrow.MustAmount("0") // not positive: the API refuses it
	_, err := m.partner.Transactions.Create(t.Context(), req)
	var ve *escrow.ValidationError
	if !errors.As(err, &ve) {
		t.Fatalf("err = %v, want *ValidationError", err)
	}
	paths := map[string]bool{}
	for _, f := range ve.Fields() {
		paths[f.Path] = true
	}
	for _, want := range []string{"currency", "items[0].schedule[0].amount"} {
		if !paths[want] {
			t.Errorf("no error at %s in %v", want, ve.Fields())
		}
	}
	if !paths["items[0].fees[1].split"] && !paths["items[0].fees.all"] {
		t.Errorf("no error about the split in %v", ve.Fields())
	}
	for tx, err := range m.partner.Partner.AllTransactions(t.Context(), nil) {
		t.Errorf("a refused creation left a transaction: %v %v", tx, err)
	}
}

// TestCreateReconcilesADroppedAnswer: the emulator creates the transaction, then drops the
// connection; Create finds it by reference instead of creating a second one.
func TestCreateReconcilesADroppedAnswer(t *testing.T) {
	m := newMarket(t)
	if err := m.srv.InjectFault(escrowtest.Fault{Endpoint: "POST /transaction", Drop: escrowtest.DropAfter}); err != nil {
		t.Fatal(err)
	}
	tx, err := m.partner.Transactions.Create(t.Context(), brokeredSale("order-77"))
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	m.srv.ClearFaults()
	n := 0
	for got, err := range m.partner.Partner.AllTransactions(t.Context(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		if got.Reference == "order-77" {
			n++
		}
	}
	if n != 1 || tx.Reference != "order-77" {
		t.Errorf("%d transactions for the reference; Create returned %+v", n, tx)
	}
}

// TestRateLimitOnTheEmulator: once an endpoint's allowance is spent and the emulator asks
// for a wait beyond WithMaxWait, the call is a *RateLimitError at once, and other endpoints
// are not held back. (Waiting out a window is tested in ratelimit_test.go, where time is
// not rounded to the second as Retry-After is.)
func TestRateLimitOnTheEmulator(t *testing.T) {
	m := newMarket(t, escrowtest.WithRateLimit(2, time.Hour))
	ctx := t.Context()
	acct := m.srv.AddCustomer("hurry@example.com")
	impatient, err := escrow.NewClient(acct.Email, acct.APIKey, escrow.WithBaseURL(m.srv.URL),
		escrow.WithHTTPClient(m.srv.Client()), escrow.WithMaxWait(100*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		if _, err := impatient.Customers.Get(ctx, escrow.Me); err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
	}
	_, err = impatient.Customers.Get(ctx, escrow.Me)
	var rl *escrow.RateLimitError
	if !errors.As(err, &rl) || !errors.Is(err, escrow.ErrRateLimited) {
		t.Fatalf("err = %v, want *RateLimitError", err)
	}
	if _, err := impatient.Webhooks.List(ctx, escrow.Me); err != nil {
		t.Errorf("another endpoint: %v", err)
	}
}

// TestSandboxLifecycle runs against the provider's sandbox when credentials are set: create
// a sale as the buyer, read it back by id and reference, and cancel it.
func TestSandboxLifecycle(t *testing.T) {
	email, key := os.Getenv("ESCROW_SANDBOX_EMAIL"), os.Getenv("ESCROW_SANDBOX_API_KEY")
	if email == "" || key == "" {
		t.Skip("set ESCROW_SANDBOX_EMAIL and ESCROW_SANDBOX_API_KEY to run against the sandbox")
	}
	c, err := escrow.NewClient(email, key, escrow.WithSandbox())
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	ref := "escrow-go-test-" + time.Now().UTC().Format("20060102T150405.000")
	tx, err := c.Transactions.Create(ctx, &escrow.CreateTransactionRequest{
		Currency: escrow.USD, Description: "escrow-go sandbox test", Reference: ref,
		Parties: []escrow.PartyInput{{Role: escrow.RoleBuyer, Customer: "me"}, {Role: escrow.RoleSeller, Customer: "escrow-go-seller@example.com"}},
		Items: []escrow.ItemInput{{Title: "Test item", Type: escrow.ItemGeneralMerchandise, InspectionPeriod: escrow.Days(1),
			Schedule: []escrow.ScheduleInput{{Amount: escrow.MustAmount("10.00"), PayerCustomer: "me", BeneficiaryCustomer: "escrow-go-seller@example.com"}}}},
	})
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	if got, err := c.Transactions.GetByReference(ctx, ref); err != nil || got.ID != tx.ID {
		t.Errorf("GetByReference = %v, %v", got, err)
	}
	if _, err := c.Transactions.Cancel(ctx, tx.ID, "escrow-go test run"); err != nil {
		t.Errorf("Cancel: %v", err)
	}
}

// The NextSteps tests follow transactions on the emulator by nothing but the steps they say
// are next: at every step, the SDK's Transaction.NextSteps (derived from what a reader is
// shown) and the emulator's NextSteps (derived from its own state) must name the same
// parties, actions and items, and doing the first step must move the transaction on until
// it closes.

// stepsKey writes steps in one shape for both sides: "seller seller@example.com ship@12".
func stepsKey[S any](steps []S, f func(S) (role, customer, action string, item int64)) []string {
	out := []string{}
	for _, s := range steps {
		role, customer, action, item := f(s)
		out = append(out, fmt.Sprintf("%s %s %s@%d", role, customer, action, item))
	}
	return out
}

// sameStates fails the test unless the emulator's words for where the transaction and each
// of its goods stand are the SDK's, derived from what the reader was shown.
func sameStates(t *testing.T, tx *escrow.Transaction, emu escrowtest.Progress, after []string) {
	t.Helper()
	if string(tx.State()) != emu.State {
		t.Fatalf("after %v: the SDK reads %s, the emulator says %s (%s)", after, tx.State(), emu.State, emu)
	}
	var goods []escrowtest.GoodState
	for i := range tx.Items {
		if it := &tx.Items[i]; it.Type.Transferable() {
			goods = append(goods, escrowtest.GoodState{ItemID: it.ID, State: string(tx.ItemState(it))})
		}
	}
	for i := range emu.Goods {
		emu.Goods[i].Phase = "" // the API's word, which the SDK does not derive
	}
	if !slices.Equal(goods, emu.Goods) {
		t.Fatalf("after %v: the SDK reads goods %v, the emulator says %v", after, goods, emu.Goods)
	}
}

// follow drives transaction id by its next steps until none is left, choosing among the
// steps with prefer (the first step whose action it names, else the first step), and
// returns the actions taken.
func follow(t *testing.T, srv *escrowtest.Server, clients map[string]*escrow.Client, reader *escrow.Client, id int64, prefer ...escrow.NextAction) []string {
	t.Helper()
	ctx := t.Context()
	var taken []string
	for range 50 {
		tx, err := reader.Transactions.Get(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		sdk := tx.NextSteps()
		emu, err := srv.NextSteps(id)
		if err != nil {
			t.Fatal(err)
		}
		got := stepsKey(sdk, func(s escrow.NextStep) (string, string, string, int64) {
			return string(s.Role), s.Customer, string(s.Action), s.ItemID
		})
		want := stepsKey(emu.Steps, func(s escrowtest.NextStep) (string, string, string, int64) {
			return s.Role, s.Customer, s.Action, s.ItemID
		})
		if !slices.Equal(got, want) {
			t.Fatalf("after %v: SDK next steps %v, emulator %v (%s)", taken, got, want, emu)
		}
		sameStates(t, tx, emu, taken)
		if len(sdk) == 0 {
			return taken
		}
		step := sdk[0]
		for _, p := range prefer {
			if i := slices.IndexFunc(sdk, func(s escrow.NextStep) bool { return s.Action == p }); i >= 0 {
				step = sdk[i]
				break
			}
		}
		taken = append(taken, string(step.Action))
		c := clients[step.Customer]
		switch action, ok := step.Action.Action(); {
		case step.Action == escrow.NextPay:
			err = srv.ApprovePayment(id)
		case step.Action == escrow.NextSelectDisbursementMethod:
			_, err = c.Transactions.SelectDisbursementMethod(ctx, id, &escrow.DisbursementMethod{
				Type: escrow.DisbursementACH, AccountName: step.Customer, AccountType: "checking",
				BankABARoutingNumber: "121000248", BankAccountNumber: "12345678", BankName: "First Bank"})
		case ok && step.ItemID != 0:
			_, err = c.Transactions.ActOnItem(ctx, id, step.ItemID, &escrow.ActionRequest{Action: action})
		case ok:
			_, err = c.Transactions.Act(ctx, id, &escrow.ActionRequest{Action: action})
		}
		if err != nil {
			t.Fatalf("after %v: %s: %v", taken, step, err)
		}
	}
	t.Fatalf("transaction %d did not close after 50 steps", id)
	return nil
}

// cast is an emulator with a partner, a buyer, a seller and a broker, and a client each.
func cast(t *testing.T) (*escrowtest.Server, map[string]*escrow.Client) {
	srv := escrowtest.NewServer()
	t.Cleanup(srv.Close)
	clients := map[string]*escrow.Client{}
	for _, email := range []string{"market@example.com", "buyer@example.com", "seller@example.com", "broker@example.com"} {
		a := srv.AddCustomer(email)
		if email == "market@example.com" {
			a = srv.AddPartner(email)
		}
		c, err := escrow.NewClient(a.Email, a.APIKey, escrow.WithEmulator(srv))
		if err != nil {
			t.Fatal(err)
		}
		clients[email] = c
	}
	return srv, clients
}

func TestNextStepsCompleteABrokeredSale(t *testing.T) {
	srv, clients := cast(t)
	partner := clients["market@example.com"]
	tx, err := partner.Transactions.Create(t.Context(), brokeredSale("steps-1"))
	if err != nil {
		t.Fatal(err)
	}
	taken := follow(t, srv, clients, partner, tx.ID)
	want := []string{"agree", "agree", "agree", "pay", "ship", "receive", "accept", "select_disbursement_method", "select_disbursement_method"}
	if !slices.Equal(taken, want) {
		t.Errorf("steps taken %v, want %v", taken, want)
	}
	if tx, _ = partner.Transactions.Get(t.Context(), tx.ID); tx.State() != escrow.StateComplete {
		t.Errorf("state %s after following every step", tx.State())
	}
}

func TestNextStepsCompleteAReturn(t *testing.T) {
	srv, clients := cast(t)
	partner := clients["market@example.com"]
	tx, err := partner.Transactions.Create(t.Context(), brokeredSale("steps-2"))
	if err != nil {
		t.Fatal(err)
	}
	taken := follow(t, srv, clients, partner, tx.ID, escrow.NextReject, escrow.NextAcceptReturn)
	want := []string{"agree", "agree", "agree", "pay", "ship", "receive", "reject", "ship_return", "receive_return", "accept_return"}
	if !slices.Equal(taken, want) {
		t.Errorf("steps taken %v, want %v", taken, want)
	}
}

func TestNextStepsCompleteMilestones(t *testing.T) {
	srv, clients := cast(t)
	buyer := clients["buyer@example.com"]
	req := &escrow.CreateTransactionRequest{
		Currency: escrow.USD, Description: "A website in two milestones",
		Parties: []escrow.PartyInput{{Role: escrow.RoleBuyer, Customer: escrow.Me}, {Role: escrow.RoleSeller, Customer: "seller@example.com"}},
	}
	for _, title := range []string{"Design", "Build"} {
		req.Items = append(req.Items, escrow.ItemInput{
			Title: title, Type: escrow.ItemMilestone, InspectionPeriod: escrow.Days(1), Quantity: 1,
			Schedule: []escrow.ScheduleInput{{Amount: escrow.MustAmount("500.00"), PayerCustomer: escrow.Me,
				BeneficiaryCustomer: "seller@example.com", DueDate: escrow.Timestamp{Time: srv.Now().AddDate(0, 1, 0)}}},
		})
	}
	tx, err := buyer.Transactions.Create(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	taken := follow(t, srv, clients, buyer, tx.ID)
	want := []string{"agree", "pay", "ship", "receive", "accept", "ship", "receive", "accept", "select_disbursement_method"}
	if !slices.Equal(taken, want) {
		t.Errorf("steps taken %v, want %v", taken, want)
	}
}

// stateTrail follows a transaction step by step: after each, it reads the transaction
// through reader and the emulator, fails the test unless they name its state, and each
// good's, with the same words, and keeps the state.
type stateTrail struct {
	t      *testing.T
	srv    *escrowtest.Server
	reader *escrow.Client
	id     int64
	states []escrow.TransactionState
}

// step checks the states after a step whose error is err.
func (s *stateTrail) step(what string, err error) {
	s.t.Helper()
	if err != nil {
		s.t.Fatalf("%s: %v", what, err)
	}
	tx, err := s.reader.Transactions.Get(s.t.Context(), s.id)
	if err != nil {
		s.t.Fatal(err)
	}
	emu, err := s.srv.NextSteps(s.id)
	if err != nil {
		s.t.Fatal(err)
	}
	sameStates(s.t, tx, emu, []string{what})
	s.states = append(s.states, tx.State())
}

// went fails the test unless the states were want.
func (s *stateTrail) went(want ...escrow.TransactionState) {
	s.t.Helper()
	if !slices.Equal(s.states, want) {
		s.t.Errorf("states %v, want %v", s.states, want)
	}
}

// TestStatesAgreeAlongACancel: a sale cancelled after funding reads the same state through
// the SDK and the emulator at every step, cancelled at the end.
func TestStatesAgreeAlongACancel(t *testing.T) {
	srv, clients := cast(t)
	partner, ctx := clients["market@example.com"], t.Context()
	tx, err := partner.Transactions.Create(ctx, brokeredSale("cancel-1"))
	if err != nil {
		t.Fatal(err)
	}
	trail := &stateTrail{t: t, srv: srv, reader: partner, id: tx.ID}
	trail.step("create", nil)
	for _, party := range []string{"buyer@example.com", "seller@example.com", "broker@example.com"} {
		_, err := clients[party].Transactions.Agree(ctx, tx.ID)
		trail.step(party+" agrees", err)
	}
	trail.step("payment", srv.ApprovePayment(tx.ID))
	_, err = partner.Transactions.Cancel(ctx, tx.ID, "the buyer changed their mind")
	trail.step("cancel", err)
	trail.went(escrow.StateAwaitingAgreement, escrow.StateAwaitingAgreement, escrow.StateAwaitingAgreement,
		escrow.StateAwaitingPayment, escrow.StateFunded, escrow.StateCancelled)
}

// TestStatesAgreeWhenInspectionLapsesWithoutAPayoutMethod: goods whose inspection period
// ends while the seller has chosen no disbursement method are accepted, and the
// transaction with them, through the SDK and the emulator alike (not funded on one side and
// accepted on the other); choosing a method then pays out and completes it.
func TestStatesAgreeWhenInspectionLapsesWithoutAPayoutMethod(t *testing.T) {
	srv, clients := cast(t)
	buyer, seller, ctx := clients["buyer@example.com"], clients["seller@example.com"], t.Context()
	req := &escrow.CreateTransactionRequest{
		Currency: escrow.USD, Description: "A lamp",
		Parties: []escrow.PartyInput{{Role: escrow.RoleBuyer, Customer: escrow.Me}, {Role: escrow.RoleSeller, Customer: "seller@example.com"}},
		Items: []escrow.ItemInput{{Title: "Lamp", Type: escrow.ItemGeneralMerchandise, InspectionPeriod: escrow.Days(3), Quantity: 1,
			Schedule: []escrow.ScheduleInput{{Amount: escrow.MustAmount("300.00"), PayerCustomer: escrow.Me, BeneficiaryCustomer: "seller@example.com"}}}},
	}
	tx, err := buyer.Transactions.Create(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	trail := &stateTrail{t: t, srv: srv, reader: buyer, id: tx.ID}
	_, err = seller.Transactions.Agree(ctx, tx.ID)
	trail.step("seller agrees", err)
	trail.step("payment", srv.ApprovePayment(tx.ID))
	_, err = seller.Transactions.Ship(ctx, tx.ID, nil)
	trail.step("ship", err)
	_, err = buyer.Transactions.Receive(ctx, tx.ID)
	trail.step("receive", err)
	srv.Advance(3*24*time.Hour + time.Second)
	trail.step("inspection ends", nil)
	_, err = seller.Transactions.SelectDisbursementMethod(ctx, tx.ID, &escrow.DisbursementMethod{
		Type: escrow.DisbursementACH, AccountName: "Sam Seller", AccountType: "checking",
		BankABARoutingNumber: "121000248", BankAccountNumber: "12345678", BankName: "First Bank"})
	trail.step("disbursement method", err)
	trail.went(escrow.StateAwaitingPayment, escrow.StateFunded, escrow.StateShipped,
		escrow.StateInInspection, escrow.StateAccepted, escrow.StateComplete)
}

// TestABadPartyAddressIsOneFieldError: a buyer whose address has a space in it is one
// field error, at parties[0].customer, and nothing else: not the missing buyer that
// follows from it, nor the schedule's payer that names the same address.
func TestABadPartyAddressIsOneFieldError(t *testing.T) {
	m := newMarket(t)
	const bad = "buyer @example.com"
	req := brokeredSale("")
	req.Parties[0].Customer = bad
	for i := range req.Items {
		for j := range req.Items[i].Schedule {
			if req.Items[i].Schedule[j].PayerCustomer == "buyer@example.com" {
				req.Items[i].Schedule[j].PayerCustomer = bad
			}
		}
		for j := range req.Items[i].Fees {
			if req.Items[i].Fees[j].PayerCustomer == "buyer@example.com" {
				req.Items[i].Fees[j].PayerCustomer = bad
			}
		}
	}
	_, err := m.partner.Transactions.Create(t.Context(), req)
	var ve *escrow.ValidationError
	if !errors.As(err, &ve) {
		t.Fatalf("err = %v, want *ValidationError", err)
	}
	if f := ve.Fields(); len(f) != 1 || f[0].Path != "parties[0].customer" || len(f[0].Messages) != 1 || !strings.Contains(f[0].Messages[0], bad) {
		t.Errorf("fields %v, want one error at parties[0].customer naming %q", f, bad)
	}
}
