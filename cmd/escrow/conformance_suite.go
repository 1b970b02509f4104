package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	escrow "github.com/escrowkit/escrow-go"
)

// conformanceChecks is the suite: scenarios of steps, each a row that makes one call (or
// one short setup) and checks the answer's status, its shape and the state read back
// afterwards. Rows run in order; a scenario stops at its first failure.
var conformanceChecks = []check{
	// A sale to complete, through As-Customer where a partner may act for a party.
	createRow("sale", saleOf("1000.00")),
	refusedRow("sale", "As-Customer from an account that is not an approved partner (the buyer's own key)",
		func(ctx context.Context, s *conformance) error {
			_, err := s.buyer.client.Transactions.Agree(ctx, s.txs["sale"].ID, escrow.AsCustomer(s.seller.email))
			return err
		}, refusal{status: 403, sentinel: escrow.ErrPartnerNotApproved}),
	{scenario: "sale", name: "read by its reference: the same transaction", do: byReference},
	{scenario: "sale", name: "the partner listing, filtered by its id: the transaction alone", do: partnerListing},
	actRow("sale", escrow.ActionAgree, byPartnerFor(escrow.RoleBuyer), escrow.StateAwaitingAgreement),
	actRow("sale", escrow.ActionAgree, byPartnerFor(escrow.RoleSeller), escrow.StateAwaitingPayment),
	{scenario: "sale", name: "payment methods for the buyer (As-Customer): wire transfer offered, totals set", do: paymentMethods},
	refusedRow("sale", "ship before the payment arrived: refused, nothing changes",
		func(ctx context.Context, s *conformance) error {
			return s.act(ctx, "sale", escrow.ActionShip, byPartnerFor(escrow.RoleSeller))
		},
		refusal{status: 400, sentinel: escrow.ErrActionNotAllowed, unchanged: escrow.StateAwaitingPayment}),
	fundRow("sale"),
	{scenario: "sale", name: "the seller adds ach details (own key): selected", do: addPayout},
	actRow("sale", escrow.ActionShip, byPartnerFor(escrow.RoleSeller), escrow.StateShipped),
	actRow("sale", escrow.ActionReceive, byPartnerFor(escrow.RoleBuyer), escrow.StateInInspection),
	refusedRow("sale", "accept As-Customer: refused (a partner may not accept for the buyer), nothing changes",
		func(ctx context.Context, s *conformance) error {
			return s.act(ctx, "sale", escrow.ActionAccept, byPartnerFor(escrow.RoleBuyer))
		},
		refusal{status: 403, sentinel: escrow.ErrForbidden, unchanged: escrow.StateInInspection}),
	actRow("sale", escrow.ActionAccept, byOwnKey(escrow.RoleBuyer), escrow.StateComplete),

	// A cancel before agreement, and one too many.
	createRow("cancel", saleOf("250.00")),
	{scenario: "cancel", name: "cancel as the partner before agreement: cancelled", do: cancelRow},
	refusedRow("cancel", "cancel a cancelled transaction: refused, still cancelled",
		func(ctx context.Context, s *conformance) error {
			return s.act(ctx, "cancel", escrow.ActionCancel, byOwnKey(escrow.RolePartner))
		},
		refusal{status: 400, sentinel: escrow.ErrActionNotAllowed, unchanged: escrow.StateCancelled}),

	// A rejection and the return of the goods.
	createRow("return", saleOf("400.00")),
	actRow("return", escrow.ActionAgree, byPartnerFor(escrow.RoleBuyer), escrow.StateAwaitingAgreement),
	actRow("return", escrow.ActionAgree, byPartnerFor(escrow.RoleSeller), escrow.StateAwaitingPayment),
	fundRow("return"),
	actRow("return", escrow.ActionShip, byPartnerFor(escrow.RoleSeller), escrow.StateShipped),
	actRow("return", escrow.ActionReceive, byPartnerFor(escrow.RoleBuyer), escrow.StateInInspection),
	actRow("return", escrow.ActionReject, byPartnerFor(escrow.RoleBuyer), escrow.StateReturning),
	actRow("return", escrow.ActionShipReturn, byPartnerFor(escrow.RoleBuyer), escrow.StateReturning),
	actRow("return", escrow.ActionReceiveReturn, byPartnerFor(escrow.RoleSeller), escrow.StateReturning),
	actRow("return", escrow.ActionAcceptReturn, byOwnKey(escrow.RoleSeller), escrow.StateComplete),

	// A milestone contract: actions per item.
	createRow("milestone", milestones),
	actRow("milestone", escrow.ActionAgree, byPartnerFor(escrow.RoleBuyer), escrow.StateAwaitingAgreement),
	actRow("milestone", escrow.ActionAgree, byPartnerFor(escrow.RoleSeller), escrow.StateAwaitingPayment),
	fundRow("milestone"),
	refusedRow("milestone", "ship the whole milestone contract: refused (milestones ship one by one), nothing changes",
		func(ctx context.Context, s *conformance) error {
			return s.act(ctx, "milestone", escrow.ActionShip, byPartnerFor(escrow.RoleSeller))
		}, refusal{status: 0, unchanged: escrow.StateFunded}),
	{scenario: "milestone", name: "ship the first milestone (item path, As-Customer): it alone is shipped", do: shipFirstMilestone},

	// Webhooks: create, list, delete.
	{scenario: "webhooks", name: "create: an id and the URL given", do: createWebhook},
	{scenario: "webhooks", name: "list: holds it", do: func(ctx context.Context, s *conformance) error { return s.webhookListed(ctx, true) }},
	{scenario: "webhooks", name: "delete: done, and gone from the list", do: deleteWebhook},

	// Validation errors and refusals the SDK types, each on its own.
	validationRow("upper-case currency USD: 422 at currency", func(r *escrow.CreateTransactionRequest) { r.Currency = "USD" },
		refusal{status: 422, field: "currency"}),
	validationRow("a 15.00 sale: 422, the buyer pays less than the escrow fee", func(r *escrow.CreateTransactionRequest) {
		r.Items[0].Schedule[0].Amount = escrow.MustAmount("15.00")
	}, refusal{status: 422, sentinel: escrow.ErrBelowMinimumFee}),
	validationRow("category business_and_internet on general merchandise: 422 at items[0].category", func(r *escrow.CreateTransactionRequest) {
		r.Items[0].Category = escrow.CategoryBusinessAndInternet
	}, refusal{status: 422, sentinel: escrow.ErrInvalidCategory, field: "items[0].category"}),
	validationRow("a motor vehicle without its year: 422 at items[0].extra_attributes.year", func(r *escrow.CreateTransactionRequest) {
		r.Items[0].Type, r.Items[0].Category = escrow.ItemMotorVehicle, ""
		r.Items[0].ExtraAttributes = &escrow.ExtraAttributes{Make: "Ford", Model: "Model T"}
	}, refusal{status: 422, field: "items[0].extra_attributes.year"}),
	{scenario: "errors", standalone: true, name: "create a customer whose e-mail address has an account (the buyer's): 403", do: func(ctx context.Context, s *conformance) error {
		_, err := s.partner.client.Customers.Create(ctx, &escrow.CreateCustomerRequest{Email: s.buyer.email})
		return refusal{status: 403, sentinel: escrow.ErrCustomerExists}.check(err)
	}},
	{scenario: "errors", standalone: true, name: "a transaction that does not exist: 404", do: func(ctx context.Context, s *conformance) error {
		_, err := s.partner.client.Transactions.Get(ctx, 1)
		return refusal{status: 404, sentinel: escrow.ErrNotFound}.check(err)
	}},
	{scenario: "errors", standalone: true, name: "a wrong API key: 401", do: func(ctx context.Context, s *conformance) error {
		c, err := s.newClient(s.partner.email, "0_conformanceWrongKey0000000000")
		if err != nil {
			return err
		}
		_, err = c.Customers.Get(ctx, escrow.Me)
		return refusal{status: 401, sentinel: escrow.ErrUnauthorized}.check(err)
	}},
}

// actingAs is who makes a call: a party with its own key, or the partner for it with
// As-Customer.
type actingAs struct {
	role      escrow.Role
	delegated bool
}

func byOwnKey(role escrow.Role) actingAs     { return actingAs{role: role} }
func byPartnerFor(role escrow.Role) actingAs { return actingAs{role: role, delegated: true} }
func (a actingAs) String() string {
	if a.delegated {
		return "as the " + string(a.role) + " (As-Customer)"
	}
	return "as the " + string(a.role) + " (own key)"
}

// caller returns the client and options a call by a is made with.
func (s *conformance) caller(a actingAs) (*escrow.Client, []escrow.RequestOption) {
	acct := map[escrow.Role]account{escrow.RoleBuyer: s.buyer, escrow.RoleSeller: s.seller, escrow.RolePartner: s.partner}[a.role]
	if a.delegated {
		return s.partner.client, []escrow.RequestOption{escrow.AsCustomer(acct.email)}
	}
	return acct.client, nil
}

// act performs an action on a scenario's transaction and keeps the answer.
func (s *conformance) act(ctx context.Context, scenario string, action escrow.Action, by actingAs) error {
	c, opts := s.caller(by)
	tx, err := c.Transactions.Act(ctx, s.txs[scenario].ID, &escrow.ActionRequest{Action: action}, opts...)
	if err == nil {
		s.txs[scenario] = tx
	}
	return err
}

// readBack reads a scenario's transaction as the partner and checks its state.
func (s *conformance) readBack(ctx context.Context, scenario string, want escrow.TransactionState) error {
	tx, err := s.partner.client.Transactions.Get(ctx, s.txs[scenario].ID)
	if err != nil {
		return fmt.Errorf("reading it back: %w", err)
	}
	if got := tx.State(); got != want {
		return failf("read back %s, want %s", got, want)
	}
	s.txs[scenario] = tx
	return nil
}

// saleOf is a general-merchandise sale of amount from the run's seller to its buyer.
func saleOf(amount string) func(s *conformance, ref string) *escrow.CreateTransactionRequest {
	return func(s *conformance, ref string) *escrow.CreateTransactionRequest {
		return &escrow.CreateTransactionRequest{
			Currency: escrow.USD, Description: "conformance: a road bike", Reference: ref,
			Parties: []escrow.PartyInput{{Role: escrow.RoleBuyer, Customer: s.buyer.email}, {Role: escrow.RoleSeller, Customer: s.seller.email}},
			Items: []escrow.ItemInput{{
				Title: "Road bike", Type: escrow.ItemGeneralMerchandise, Category: escrow.CategorySportsAndRecreation,
				InspectionPeriod: escrow.Days(3), Quantity: 1,
				Schedule: []escrow.ScheduleInput{{Amount: escrow.MustAmount(amount), PayerCustomer: s.buyer.email, BeneficiaryCustomer: s.seller.email}},
			}},
		}
	}
}

// milestones is a contract of two milestones, each with its due date.
func milestones(s *conformance, ref string) *escrow.CreateTransactionRequest {
	r := saleOf("600.00")(s, ref)
	r.Description = "conformance: a web site in two stages"
	due := time.Now().UTC().AddDate(0, 1, 0)
	stage := func(title, amount string, due time.Time) escrow.ItemInput {
		return escrow.ItemInput{
			Title: title, Type: escrow.ItemMilestone, Category: escrow.CategoryBusinessAndInternet, InspectionPeriod: escrow.Days(3), Quantity: 1,
			Schedule: []escrow.ScheduleInput{{Amount: escrow.MustAmount(amount), PayerCustomer: s.buyer.email, BeneficiaryCustomer: s.seller.email, DueDate: escrow.Timestamp{Time: due}}},
		}
	}
	r.Items = []escrow.ItemInput{stage("Design", "600.00", due), stage("Build", "900.00", due.AddDate(0, 1, 0))}
	return r
}

// createRow creates a scenario's transaction as the partner: 201, awaiting agreement,
// the buyer, the seller and the partner among the parties, an escrow fee on each item.
func createRow(scenario string, build func(s *conformance, ref string) *escrow.CreateTransactionRequest) check {
	return check{scenario: scenario, name: "create as the partner: awaiting_agreement, buyer, seller and partner, an escrow fee on each item",
		do: func(ctx context.Context, s *conformance) error {
			tx, err := s.partner.client.Transactions.Create(ctx, build(s, "conformance-"+scenario+"-"+s.tag))
			if err != nil {
				return err
			}
			s.txs[scenario] = tx
			if err := createdShape(tx); err != nil {
				return err
			}
			return s.readBack(ctx, scenario, escrow.StateAwaitingAgreement)
		}}
}

// createdShape checks a transaction just created.
func createdShape(tx *escrow.Transaction) error {
	if tx.ID <= 0 || tx.State() != escrow.StateAwaitingAgreement {
		return failf("id %d, state %s; want an id and %s", tx.ID, tx.State(), escrow.StateAwaitingAgreement)
	}
	for _, role := range []escrow.Role{escrow.RoleBuyer, escrow.RoleSeller, escrow.RolePartner} {
		if _, ok := tx.Party(role); !ok {
			return failf("no %s party", role)
		}
	}
	for i, it := range tx.Items {
		if !slices.ContainsFunc(it.Fees, func(f escrow.Fee) bool { return f.Type == escrow.FeeEscrow }) {
			return failf("items[%d] has no escrow fee entry", i)
		}
	}
	return nil
}

// actRow performs an action and checks the item flag it sets on every good, and the
// state, in the answer and read back.
func actRow(scenario string, action escrow.Action, by actingAs, want escrow.TransactionState) check {
	return check{scenario: scenario, name: fmt.Sprintf("%s %s: %s", action, by, want),
		do: func(ctx context.Context, s *conformance) error {
			if err := s.act(ctx, scenario, action, by); err != nil {
				return err
			}
			tx := s.txs[scenario]
			if got := tx.State(); got != want {
				return failf("the answer says %s, want %s", got, want)
			}
			if err := flagsSet(tx, action.ItemFlag(), len(tx.Items)); err != nil {
				return err
			}
			return s.readBack(ctx, scenario, want)
		}}
}

// flagsSet checks that the first n goods carry flag ("" checks nothing).
func flagsSet(tx *escrow.Transaction, flag string, n int) error {
	for i, it := range tx.Items {
		if flag == "" || i >= n || !it.Type.Transferable() {
			continue
		}
		if !it.Status.Flag(flag) {
			return failf("items[%d].status.%s is false", i, flag)
		}
	}
	return nil
}

// fundRow has the emulator bring the buyer's payment in, then checks the transaction
// funded and every schedule entry secured.
func fundRow(scenario string) check {
	return check{scenario: scenario, control: true, name: "the payment arrives (emulator): funded, every schedule entry secured",
		do: func(ctx context.Context, s *conformance) error {
			if err := s.control.ApprovePayment(ctx, s.txs[scenario].ID); err != nil {
				return err
			}
			if err := s.readBack(ctx, scenario, escrow.StateFunded); err != nil {
				return err
			}
			for i, it := range s.txs[scenario].Items {
				for j, e := range it.Schedule {
					if !e.Status.Secured {
						return failf("items[%d].schedule[%d].status.secured is false", i, j)
					}
				}
			}
			return nil
		}}
}

// byReference reads the sale by the reference it was created with.
func byReference(ctx context.Context, s *conformance) error {
	want := s.txs["sale"]
	tx, err := s.partner.client.Transactions.GetByReference(ctx, want.Reference)
	if err != nil {
		return err
	}
	if tx.ID != want.ID || tx.Reference != want.Reference {
		return failf("transaction %d (reference %q), want %d (%q)", tx.ID, tx.Reference, want.ID, want.Reference)
	}
	return nil
}

// partnerListing finds the sale in the partner's listing.
func partnerListing(ctx context.Context, s *conformance) error {
	id := s.txs["sale"].ID
	list, err := s.partner.client.Partner.Transactions(ctx, &escrow.PartnerTransactionsOptions{IDs: []int64{id}})
	if err != nil {
		return err
	}
	if len(list.Transactions) != 1 || list.Transactions[0].ID != id {
		return failf("%d transactions listed, want transaction %d alone", len(list.Transactions), id)
	}
	return nil
}

// paymentMethods lists the buyer's payment methods through the partner.
func paymentMethods(ctx context.Context, s *conformance) error {
	c, opts := s.caller(byPartnerFor(escrow.RoleBuyer))
	m, err := c.Transactions.GetPaymentMethods(ctx, s.txs["sale"].ID, opts...)
	if err != nil {
		return err
	}
	if !slices.ContainsFunc(m.AvailablePaymentMethods, func(a escrow.AvailablePaymentMethod) bool {
		return a.Type == escrow.PaymentWireTransfer && !a.Total.IsZero()
	}) {
		return failf("no wire_transfer with a total among %d available methods", len(m.AvailablePaymentMethods))
	}
	if m.TotalWithoutPaymentFee.IsZero() {
		return failf("total_without_payment_fee is 0")
	}
	return nil
}

// addPayout has the seller add ach details, which are selected.
func addPayout(ctx context.Context, s *conformance) error {
	m, err := s.seller.client.Transactions.SelectDisbursementMethod(ctx, s.txs["sale"].ID, &escrow.DisbursementMethod{
		Type: escrow.DisbursementACH, AccountName: "Conformance Seller", AccountType: "checking",
		BankABARoutingNumber: "121000248", BankAccountNumber: "000123456789", BankName: "First Bank of Example",
	})
	if err != nil {
		return err
	}
	if m.SelectedDisbursementMethod == nil || m.SelectedDisbursementMethod.Type != escrow.DisbursementACH {
		return failf("no ach method selected in the answer")
	}
	return s.readBack(ctx, "sale", escrow.StateFunded)
}

// cancelRow cancels the cancel scenario's transaction as the partner.
func cancelRow(ctx context.Context, s *conformance) error {
	tx, err := s.partner.client.Transactions.Cancel(ctx, s.txs["cancel"].ID, "conformance: changed my mind")
	if err != nil {
		return err
	}
	s.txs["cancel"] = tx
	if tx.State() != escrow.StateCancelled || !tx.IsCancelled {
		return failf("the answer says %s, is_cancelled %t", tx.State(), tx.IsCancelled)
	}
	return s.readBack(ctx, "cancel", escrow.StateCancelled)
}

// shipFirstMilestone ships the first milestone through the item path.
func shipFirstMilestone(ctx context.Context, s *conformance) error {
	tx := s.txs["milestone"]
	if len(tx.Items) < 2 {
		return failf("%d items, want 2", len(tx.Items))
	}
	c, opts := s.caller(byPartnerFor(escrow.RoleSeller))
	got, err := c.Transactions.ActOnItem(ctx, tx.ID, tx.Items[0].ID, &escrow.ActionRequest{Action: escrow.ActionShip}, opts...)
	if err != nil {
		return err
	}
	s.txs["milestone"] = got
	if !got.Items[0].Status.Shipped || got.Items[1].Status.Shipped {
		return failf("shipped: first %t, second %t; want true, false", got.Items[0].Status.Shipped, got.Items[1].Status.Shipped)
	}
	return s.readBack(ctx, "milestone", escrow.StateShipped)
}

// webhookURL is the URL the webhook scenario registers: never called while it lives.
func (s *conformance) webhookURL() string {
	return "https://example.com/escrow-conformance/" + s.tag
}

func createWebhook(ctx context.Context, s *conformance) error {
	h, err := s.partner.client.Webhooks.Create(ctx, escrow.Me, s.webhookURL())
	if err != nil {
		return err
	}
	if h.ID <= 0 || h.URL != s.webhookURL() {
		return failf("id %d, url %q; want an id and %q", h.ID, h.URL, s.webhookURL())
	}
	s.hookID = h.ID
	return nil
}

// webhookListed checks whether the webhook made is listed.
func (s *conformance) webhookListed(ctx context.Context, want bool) error {
	hooks, err := s.partner.client.Webhooks.List(ctx, escrow.Me)
	if err != nil {
		return err
	}
	listed := slices.ContainsFunc(hooks.Webhooks, func(h escrow.Webhook) bool { return h.ID == s.hookID && h.URL == s.webhookURL() })
	if listed != want {
		return failf("webhook %d listed: %t, want %t", s.hookID, listed, want)
	}
	return nil
}

func deleteWebhook(ctx context.Context, s *conformance) error {
	if err := s.partner.client.Webhooks.Delete(ctx, escrow.Me, s.hookID); err != nil {
		return err
	}
	return s.webhookListed(ctx, false)
}

// refusal is what a refused call must answer.
type refusal struct {
	status   int   // 0: any 4xx
	sentinel error // nil: none required
	// field is a path the validation error must refuse.
	field string
	// unchanged is the state the scenario's transaction must still be in, read back.
	unchanged escrow.TransactionState
}

// check checks err against the refusal.
func (r refusal) check(err error) error {
	var apiErr *escrow.APIError
	if !errors.As(err, &apiErr) {
		return failf("want a refusal (%s), got %v", r.want(), err)
	}
	if !r.statusFits(apiErr.StatusCode) {
		return failf("status %d, want %s: %s", apiErr.StatusCode, r.want(), apiErr.Message)
	}
	if r.sentinel != nil && !errors.Is(err, r.sentinel) {
		return failf("the error is not %v", r.sentinel)
	}
	if r.field != "" && !refusesField(err, r.field) {
		return failf("nothing refused at %s: %v", r.field, err)
	}
	return nil
}

// refusesField reports whether err is a validation error that refuses the field.
func refusesField(err error, field string) bool {
	var verr *escrow.ValidationError
	return errors.As(err, &verr) && verr.Field(field) != nil
}

// statusFits reports whether a status is a refusal's: a 4xx, the one required if any.
func (r refusal) statusFits(status int) bool {
	return status/100 == 4 && (r.status == 0 || status == r.status)
}

func (r refusal) want() string {
	if r.status == 0 {
		return "4xx"
	}
	return fmt.Sprint(r.status)
}

// refusedRow makes a call that must be refused as r says, leaving the scenario's
// transaction as it was when r.unchanged is set.
func refusedRow(scenario, name string, call func(ctx context.Context, s *conformance) error, r refusal) check {
	return check{scenario: scenario, name: name, do: func(ctx context.Context, s *conformance) error {
		if err := r.check(call(ctx, s)); err != nil {
			return err
		}
		if r.unchanged == "" {
			return nil
		}
		return s.readBack(ctx, scenario, r.unchanged)
	}}
}

// validationRow creates a sale changed by spoil, which must be refused as r says.
func validationRow(name string, spoil func(*escrow.CreateTransactionRequest), r refusal) check {
	return check{scenario: "validation", standalone: true, name: name, do: func(ctx context.Context, s *conformance) error {
		req := saleOf("500.00")(s, "")
		spoil(req)
		tx, err := s.partner.client.Transactions.Create(ctx, req)
		if err == nil {
			return failf("created transaction %d; want a refusal", tx.ID)
		}
		return r.check(err)
	}}
}
