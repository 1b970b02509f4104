package escrow_test

import (
	"fmt"
	"slices"
	"testing"

	escrow "github.com/escrowkit/escrow-go"
	"github.com/escrowkit/escrow-go/escrowtest"
)

// These tests follow transactions on the emulator by nothing but the steps they say are
// next: at every step, the SDK's Transaction.NextSteps (derived from what a reader is
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

// An escrowtest.Server is what WithEmulator takes.
var _ escrow.TestServer = (*escrowtest.Server)(nil)

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
