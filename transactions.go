package escrow

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"log/slog"
	"net/http"
	"time"
)

// TransactionsService creates, reads and acts on transactions (spec part 4, "Transactions").
// The table is generated from endpoints.go; (As-Customer) marks the routes an approved
// partner may call for a customer ([AsCustomer]).
//
//	POST  /transaction                                             Create
//	GET   /transaction                                             List, All
//	GET   /transaction/{id}                                        Get
//	GET   /transaction/reference/{reference}                       GetByReference
//	PATCH /transaction/{id}                                        Act, Agree, Ship, Receive, Accept,
//	                                                               Reject, ShipReturn, ReceiveReturn,
//	                                                               AcceptReturn, RejectReturn, Cancel
//	                                                               (As-Customer)
//	PATCH /transaction/{id}/item/{item_id}                         ActOnItem (As-Customer)
//	GET   /transaction/{id}/timeline-entries                       ListTimelineEntries
//	GET   /transaction/{id}/disbursement_methods                   GetDisbursementMethods
//	PATCH /transaction/{id}/disbursement_methods                   SelectDisbursementMethod
//	POST  /transaction/{id}/disbursement_methods                   Client.Do
//	GET   /transaction/{id}/payment_methods                        GetPaymentMethods (As-Customer)
//	POST  /transaction/{id}/payment_methods/{payment_method_name}  ChoosePaymentMethod (As-Customer)
//	GET   /transaction/{id}/payment_methods/wire_transfer          GetWireTransferDetails
//	POST  /transaction/{id}/payment_methods/wire_transfer          MarkWireSent (As-Customer)
//	GET   /transaction/{id}/web_link/{action}                      GetWebLink (As-Customer)
//	GET   /transaction/{id}/item/{item_id}/web_link/{action}       GetItemWebLink (As-Customer)
//
// Methods are named as in go-github: Get for one document, List for a list, a verb for
// an action. POST /transaction/{id}/disbursement_methods, which the spec documents exactly
// as the PATCH, has no method of its own: reach it with [Client.Do].
type TransactionsService service

// Transaction is an escrow between a buyer and a seller. What a caller sees depends on its
// role: broker commission and partner fees are shown to some parties only.
type Transaction struct {
	ID           int64     `json:"id"`
	Currency     Currency  `json:"currency"`
	Description  string    `json:"description"`
	Reference    string    `json:"reference,omitempty"`
	CreationDate Timestamp `json:"creation_date,omitzero"`
	CloseDate    Timestamp `json:"close_date,omitzero"`
	IsCancelled  bool      `json:"is_cancelled"`
	IsDraft      bool      `json:"is_draft"`
	Parties      []Party   `json:"parties"`
	Items        []Item    `json:"items"`
}

// Party returns the party with the given role, if the caller can see it.
func (t *Transaction) Party(role Role) (Party, bool) {
	for _, p := range t.Parties {
		if p.Role == role {
			return p, true
		}
	}
	return Party{}, false
}

// Item returns the item with the given id.
func (t *Transaction) Item(id int64) (Item, bool) {
	for _, it := range t.Items {
		if it.ID == id {
			return it, true
		}
	}
	return Item{}, false
}

// Party is one participant of a transaction.
type Party struct {
	ID       int64  `json:"id,omitempty"`
	Role     Role   `json:"role"`
	Customer string `json:"customer"` // an e-mail address, or Me for the caller
	Agreed   bool   `json:"agreed"`
	// Initiator is set on the party that created the transaction (in some responses).
	Initiator bool `json:"initiator"`
	// DisbursementMethodSelected appears in partner listings.
	DisbursementMethodSelected bool        `json:"disbursement_method_selected"`
	Visibility                 *Visibility `json:"visibility,omitempty"`
}

// Visibility conceals a party's contact details and amounts, or a broker fee, from the
// listed customers.
type Visibility struct {
	HiddenFrom []string `json:"hidden_from"`
}

// Item is a good, service, milestone or fee in a transaction.
type Item struct {
	ID          int64    `json:"id"`
	Title       string   `json:"title"`
	Description string   `json:"description"`
	Type        ItemType `json:"type"`
	Category    Category `json:"category,omitempty"`
	// InspectionPeriod is how long the buyer has to inspect after receipt, in seconds.
	InspectionPeriod Seconds         `json:"inspection_period"`
	Quantity         int             `json:"quantity"`
	Schedule         []Schedule      `json:"schedule"`
	Fees             []Fee           `json:"fees"`
	ExtraAttributes  ExtraAttributes `json:"extra_attributes"`
	Status           ItemStatus      `json:"status"`
	Visibility       *Visibility     `json:"visibility,omitempty"`
}

// ItemStatus is the state of an item. All flags start false.
type ItemStatus struct {
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
}

// Flag reports whether the flag the API names name ("shipped", "in_dispute") is set; false
// for a name that is no flag.
func (s ItemStatus) Flag(name string) bool {
	if read, ok := itemFlags[name]; ok {
		return read(s)
	}
	return false
}

// itemFlags read ItemStatus's flags by their JSON names (TestItemFlagsReadTheirFields pins
// each to its field). Nothing writes it.
var itemFlags = map[string]func(ItemStatus) bool{
	"shipped":           func(s ItemStatus) bool { return s.Shipped },
	"received":          func(s ItemStatus) bool { return s.Received },
	"accepted":          func(s ItemStatus) bool { return s.Accepted },
	"rejected":          func(s ItemStatus) bool { return s.Rejected },
	"shipped_returned":  func(s ItemStatus) bool { return s.ShippedReturned },
	"received_returned": func(s ItemStatus) bool { return s.ReceivedReturned },
	"accepted_returned": func(s ItemStatus) bool { return s.AcceptedReturned },
	"rejected_returned": func(s ItemStatus) bool { return s.RejectedReturned },
	"canceled":          func(s ItemStatus) bool { return s.Canceled },
	"in_dispute":        func(s ItemStatus) bool { return s.InDispute },
}

// Schedule is one payment of an item or fee: who pays how much to whom, and when.
type Schedule struct {
	Amount              Amount `json:"amount"`
	PayerCustomer       string `json:"payer_customer"`
	BeneficiaryCustomer string `json:"beneficiary_customer"` // "escrow" for escrow fees
	// DueDate is set on milestone and domain_name_holding schedules only.
	DueDate Timestamp      `json:"due_date,omitzero"`
	Status  ScheduleStatus `json:"status"`
}

// ScheduleStatus says whether a payment is funded and paid out.
type ScheduleStatus struct {
	Secured                bool `json:"secured"`
	DisbursedToBeneficiary bool `json:"disbursed_to_beneficiary"`
}

// Fee is an escrow or payment fee entry on an item.
type Fee struct {
	Type          FeeType `json:"type"`
	PayerCustomer string  `json:"payer_customer"`
	Split         Split   `json:"split,omitempty"`
	Amount        Amount  `json:"amount"`
	// AmountWithoutTaxes differs from Amount when tax applies.
	AmountWithoutTaxes Amount `json:"amount_without_taxes"`
}

// ExtraAttributes are the type-specific attributes of an item.
type ExtraAttributes struct {
	WithContent      bool   `json:"with_content,omitempty"` // domain_name
	Concierge        bool   `json:"concierge,omitempty"`    // returned as false
	VIN              string `json:"vin,omitempty"`          // motor_vehicle
	Odometer         string `json:"odometer,omitempty"`     // motor_vehicle
	Year             int    `json:"year,omitempty"`         // motor_vehicle, required there
	Make             string `json:"make,omitempty"`         // motor_vehicle
	Model            string `json:"model,omitempty"`        // motor_vehicle
	TitleCollection  bool   `json:"title_collection,omitempty"`
	LienHolderPayoff bool   `json:"lien_holder_payoff,omitempty"`
}

// CreateTransactionRequest is the body of [TransactionsService.Create].
type CreateTransactionRequest struct {
	Parties     []PartyInput `json:"parties"`
	Currency    Currency     `json:"currency"`
	Description string       `json:"description"`
	Items       []ItemInput  `json:"items"`
	// Reference is the caller's own id for the transaction. Setting it makes Create safe to
	// retry after an ambiguous failure, and lets GetByReference find the transaction.
	Reference string `json:"reference,omitempty"`
}

// PartyInput names a party at creation. Customer is an e-mail address or [Me]. The partner
// party is added by the API; do not list it.
type PartyInput struct {
	Role     Role   `json:"role"`
	Customer string `json:"customer"`
	// Visibility, given with a broker, conceals this party from the listed customers.
	Visibility *Visibility `json:"visibility,omitempty"`
}

// ItemInput is one item at creation. broker_fee items carry only Type, Schedule and
// optionally Visibility.
type ItemInput struct {
	Title       string   `json:"title,omitempty"`
	Description string   `json:"description,omitempty"`
	Type        ItemType `json:"type"`
	Category    Category `json:"category,omitempty"`
	// InspectionPeriod must be whole days (see [Days]) and equal across non-milestone items.
	InspectionPeriod Seconds          `json:"inspection_period,omitempty"`
	Quantity         int              `json:"quantity,omitempty"`
	Schedule         []ScheduleInput  `json:"schedule"`
	Fees             []FeeInput       `json:"fees,omitempty"`
	ExtraAttributes  *ExtraAttributes `json:"extra_attributes,omitempty"`
	Visibility       *Visibility      `json:"visibility,omitempty"`
}

// ScheduleInput is one payment at creation. Amount is the total for the item: quantity does
// not multiply it; it must not be negative. Customers are e-mail addresses or [Me].
type ScheduleInput struct {
	Amount              Amount `json:"amount"`
	PayerCustomer       string `json:"payer_customer"`
	BeneficiaryCustomer string `json:"beneficiary_customer"`
	// DueDate is required on milestone and domain_name_holding items, refused on others.
	DueDate Timestamp `json:"due_date,omitzero"`
}

// FeeInput assigns a fee at creation. Without fee entries the buyer pays the whole escrow
// fee; with them, every item must carry the same entries.
type FeeInput struct {
	Type          FeeType `json:"type"`
	PayerCustomer string  `json:"payer_customer"`
	Split         Split   `json:"split,omitempty"` // escrow fees only: SplitHalf or SplitWhole
}

// TransactionList is one page of [TransactionsService.List].
type TransactionList struct {
	Page         int           `json:"page"`
	PageCount    int           `json:"page_count"`
	PerPage      int           `json:"per_page"`
	Transactions []Transaction `json:"transactions"`
}

// ListTransactionsOptions pages and sorts GET /transaction. Zero fields take the API's
// defaults: page 1, 10 per page, sorted by id, descending.
type ListTransactionsOptions struct {
	Page          int           `url:"page,omitempty"`
	PerPage       int           `url:"per_page,omitempty"`
	SortBy        SortField     `url:"sort_by,omitempty"`
	SortDirection SortDirection `url:"sort_direction,omitempty"`
}

// ActionRequest is the body of a PATCH on a transaction or item.
type ActionRequest struct {
	Action Action `json:"action"`
	// ShippingInformation goes with ship and ship_return. Domain items require its
	// AuthorizationType.
	ShippingInformation *ShippingInformation `json:"shipping_information,omitempty"`
	// CancelInformation may go with cancel.
	CancelInformation *CancelInformation `json:"cancel_information,omitempty"`
}

// ShippingInformation describes how goods or a domain were handed over.
type ShippingInformation struct {
	TrackingInformation *TrackingInformation `json:"tracking_information,omitempty"`
	AuthorizationType   AuthorizationType    `json:"authorization_type,omitempty"`
}

// TrackingInformation is a parcel's carrier and tracking number, free-form.
type TrackingInformation struct {
	Carrier        string `json:"carrier,omitempty"`
	TrackingID     string `json:"tracking_id,omitempty"`
	CarrierContact string `json:"carrier_contact,omitempty"`
}

// CancelInformation says why a transaction is cancelled.
type CancelInformation struct {
	CancellationReason string `json:"cancellation_reason,omitempty"`
}

// Create creates a transaction; the caller becomes its partner party and must also be a
// buyer, seller or broker unless it is an approved partner. Accounts are created for party
// e-mails that have none.
//
// With a Reference, Create never yields two transactions for one reference: after a failure
// that may have created the transaction (a 5xx, a dropped connection, a timeout), it looks
// the reference up before trying again. What it finds counts only if the caller created it
// (it is the partner party) or is the party the request named as itself, and its parties,
// items, amounts and currency are the request's; otherwise Create returns an
// *OutcomeUnknownError saying why, wrapping the failure, and never the transaction found.
func (s *TransactionsService) Create(ctx context.Context, req *CreateTransactionRequest, opts ...RequestOption) (*Transaction, error) {
	if req == nil {
		return nil, fmt.Errorf("%w: nil CreateTransactionRequest", ErrInvalidArgument)
	}
	for i, it := range req.Items {
		for j, sch := range it.Schedule {
			if sch.Amount.IsNegative() {
				return nil, fmt.Errorf("%w: items[%d].schedule[%d].amount: %w: %s is negative", ErrInvalidArgument, i, j, ErrInvalidAmount, sch.Amount)
			}
		}
	}
	k := call{route: routeCreateTransaction, body: req, opts: opts}
	if req.Reference == "" {
		return fetch[Transaction](ctx, s.client, k)
	}
	if s.client.observer == nil {
		return s.createByReference(ctx, req, k, nil)
	}
	// Observed as one call, as a settled write is (see settle and observe.go).
	ob := s.client.observe(ctx, k.route.Method, k.route.path())
	tx, err := s.createByReference(ob.ctx, req, k, ob)
	ob.end(err)
	return tx, err
}

// createByReference is Create for a request with a Reference: it looks the reference up
// after an ambiguous failure. ob, when not nil, observes it as one call.
func (s *TransactionsService) createByReference(ctx context.Context, req *CreateTransactionRequest, k call, ob *callRecord) (*Transaction, error) {
	c := referencedCreate{s: s, req: req, k: k, ob: ob}
	sendCtx := ctx
	if ob != nil {
		sendCtx = ob.joining()
	}
	for attempt := 0; ; attempt++ {
		tx, err := fetch[Transaction](sendCtx, s.client, k)
		if err == nil {
			return tx, nil
		}
		if !c.mayHaveCreated(err) {
			return nil, err
		}
		found, lookupErr := c.lookUp(ctx)
		if lookupErr == nil {
			return c.reconciled(ctx, found, attempt)
		}
		if !c.waitToRetry(ctx, lookupErr, err, attempt) {
			return nil, c.ambiguous
		}
	}
}

// referencedCreate is the state of one Create with a Reference across its attempts.
type referencedCreate struct {
	s         *TransactionsService
	req       *CreateTransactionRequest
	k         call
	ob        *callRecord // nil when the call is not observed
	ambiguous error       // the last failure that may have created the transaction
}

// mayHaveCreated reports whether a failed attempt leaves the transaction possibly created,
// so that a lookup by reference must settle it: the failure may have taken effect, or it
// says the reference is taken after an earlier such failure (which did create it after all).
func (c *referencedCreate) mayHaveCreated(err error) bool {
	switch {
	case mayHaveTakenEffect(err):
		c.ambiguous = err
		return true
	case c.ambiguous != nil && referenceTaken(err):
		return true
	}
	return false
}

// lookUp reads the transaction under the request's reference, telling the observer, if
// any, what the read says of the create.
func (c *referencedCreate) lookUp(ctx context.Context) (*Transaction, error) {
	readStart := time.Now()
	found, err := c.s.GetByReference(ctx, c.req.Reference, c.k.opts...)
	if c.ob != nil {
		p, failed := lookupPresence(found, err, c.req, c.s.client.actorOf(c.k.opts))
		c.ob.settlingRead(readStart, p, failed)
	}
	return found, err
}

// reconciled answers with the transaction found under the reference if it is the caller's
// own, as requested: anyone may create a transaction under this reference that names the
// caller, and only that one counts (see settle.go).
func (c *referencedCreate) reconciled(ctx context.Context, found *Transaction, attempt int) (*Transaction, error) {
	if why := createdMatches(c.req, found, c.s.client.actorOf(c.k.opts)); why != "" {
		return nil, &OutcomeUnknownError{Method: c.k.route.Method, Path: c.k.route.path(), Reason: fmt.Sprintf("transaction %d found under reference %q is not this request's: %s", found.ID, c.req.Reference, why), Err: c.ambiguous}
	}
	c.s.client.logger.LogAttrs(ctx, slog.LevelInfo, "escrow: create reconciled by reference",
		slog.Int64("transaction_id", found.ID), slog.Int("attempt", attempt+1))
	return found, nil
}

// waitToRetry waits out the backoff before another attempt when the lookup found nothing
// and another attempt may still create it; false when the create ends here, ambiguous:
// the lookup failed otherwise, the reference is taken by a transaction not found, the
// retries are spent, or ctx ended.
func (c *referencedCreate) waitToRetry(ctx context.Context, lookupErr, attemptErr error, attempt int) bool {
	if !errors.Is(lookupErr, ErrNotFound) || referenceTaken(attemptErr) || attempt >= c.s.client.maxRetries {
		return false
	}
	wait := c.s.client.backoffStep(attempt)
	c.ob.retry(Retry{At: time.Now(), Reason: RetryNotPerformed, Wait: wait})
	return sleep(ctx, wait) == nil
}

// lookupPresence is what a lookup by reference after an ambiguous Create says of it, for
// an Observer: found and the request's, provably absent (not found), neither, or the
// lookup's failure.
func lookupPresence(found *Transaction, err error, req *CreateTransactionRequest, who actor) (presence, error) {
	switch {
	case err == nil && createdMatches(req, found, who) == "":
		return present, nil
	case err == nil:
		return undetermined, nil
	case errors.Is(err, ErrNotFound):
		return absent, nil
	}
	return undetermined, err
}

// mayHaveTakenEffect reports whether a failed write may nevertheless have been performed.
func mayHaveTakenEffect(err error) bool {
	var te *TransportError
	var ae *APIError
	var de *DecodeError
	switch {
	case errors.As(err, &te):
		return te.OutcomeUnknown
	case errors.As(err, &de):
		return true
	case errors.As(err, &ae):
		return ae.StatusCode >= 500
	}
	return false
}

// referenceTaken reports a validation error saying the reference is already in use.
func referenceTaken(err error) bool {
	var ve *ValidationError
	return errors.As(err, &ve) && ve.Field("reference") != nil
}

// Get returns the transaction with this id.
func (s *TransactionsService) Get(ctx context.Context, id int64, opts ...RequestOption) (*Transaction, error) {
	return fetch[Transaction](ctx, s.client, call{route: routeGetTransaction, params: []any{id}, opts: opts})
}

// GetByReference returns the transaction the caller created with this reference.
func (s *TransactionsService) GetByReference(ctx context.Context, reference string, opts ...RequestOption) (*Transaction, error) {
	return fetch[Transaction](ctx, s.client, call{route: routeGetTransactionByReference, params: []any{reference}, opts: opts})
}

// List returns one page of the caller's transactions.
func (s *TransactionsService) List(ctx context.Context, opt *ListTransactionsOptions, opts ...RequestOption) (*TransactionList, error) {
	return fetch[TransactionList](ctx, s.client, call{route: routeListTransactions, query: queryOrNil(opt), opts: opts})
}

// All iterates over every transaction, page after page, from opt.Page (default 1), asking
// for opt.PerPage per page ([DefaultPageSize] when zero). It yields each transaction once,
// even when a page repeats some of the one before (new transactions shift the pages while
// the walk runs). It stops after the last page or an empty one, at the first error
// (yielded once), or when the loop breaks; a page of nothing but transactions already
// yielded ends it with [ErrListingRepeats]. It fetches at most [DefaultMaxPages] pages, or
// what [MaxPages] says, and yields [ErrPageLimit] when that cuts the listing short. The
// caller's options are not modified.
func (s *TransactionsService) All(ctx context.Context, opt *ListTransactionsOptions, opts ...RequestOption) iter.Seq2[*Transaction, error] {
	return func(yield func(*Transaction, error) bool) {
		var page ListTransactionsOptions
		if opt != nil {
			page = *opt
		}
		page.Page = max(page.Page, 1)
		if page.PerPage <= 0 {
			page.PerPage = DefaultPageSize
		}
		guard := newPageGuard(opts, page.PerPage) // see iterate.go
		for {
			list, err := s.List(ctx, &page, opts...)
			if err != nil {
				yield(nil, err)
				return
			}
			if !yieldPage(guard, list.Transactions, txIDOf, yield) || page.Page >= list.PageCount {
				return
			}
			if ok, err := guard.more(); !ok {
				yield(nil, err)
				return
			}
			page.Page++
		}
	}
}

// Act performs an action on the whole transaction and returns it updated. After a failure
// that may have performed it (a 5xx, a dropped connection, a timeout), Act reads the
// transaction: the action's effect, the actor's, is a success; its provable absence sends
// it again; anything else is an *OutcomeUnknownError. So do the other writes of this
// service, each reading its own state (see settle.go).
func (s *TransactionsService) Act(ctx context.Context, id int64, req *ActionRequest, opts ...RequestOption) (*Transaction, error) {
	if req == nil || req.Action == "" {
		return nil, fmt.Errorf("%w: an ActionRequest with an Action is required", ErrInvalidArgument)
	}
	return s.settleAction(ctx, id, 0, req, call{route: routeActOnTransaction, params: []any{id}, body: req, opts: opts}) // see settle.go
}

// ActOnItem performs an action on one item (milestone transactions act per item) and
// returns the transaction updated.
func (s *TransactionsService) ActOnItem(ctx context.Context, id, itemID int64, req *ActionRequest, opts ...RequestOption) (*Transaction, error) {
	if req == nil || req.Action == "" {
		return nil, fmt.Errorf("%w: an ActionRequest with an Action is required", ErrInvalidArgument)
	}
	return s.settleAction(ctx, id, itemID, req, call{route: routeActOnItem, params: []any{id, itemID}, body: req, opts: opts}) // see settle.go
}

// Agree records the caller's (or, with AsCustomer, a party's) agreement to the terms.
func (s *TransactionsService) Agree(ctx context.Context, id int64, opts ...RequestOption) (*Transaction, error) {
	return s.Act(ctx, id, &ActionRequest{Action: ActionAgree}, opts...)
}

// Ship marks the goods shipped (seller). info may be nil, except for domain names, which
// need an AuthorizationType.
func (s *TransactionsService) Ship(ctx context.Context, id int64, info *ShippingInformation, opts ...RequestOption) (*Transaction, error) {
	return s.Act(ctx, id, &ActionRequest{Action: ActionShip, ShippingInformation: info}, opts...)
}

// Receive marks the goods received (buyer); the inspection period starts.
func (s *TransactionsService) Receive(ctx context.Context, id int64, opts ...RequestOption) (*Transaction, error) {
	return s.Act(ctx, id, &ActionRequest{Action: ActionReceive}, opts...)
}

// Accept accepts the goods (buyer); the funds go to the seller. A partner cannot accept on
// a buyer's behalf.
func (s *TransactionsService) Accept(ctx context.Context, id int64, opts ...RequestOption) (*Transaction, error) {
	return s.Act(ctx, id, &ActionRequest{Action: ActionAccept}, opts...)
}

// Reject rejects the goods (buyer), who must then ship them back.
func (s *TransactionsService) Reject(ctx context.Context, id int64, opts ...RequestOption) (*Transaction, error) {
	return s.Act(ctx, id, &ActionRequest{Action: ActionReject}, opts...)
}

// ShipReturn marks rejected goods shipped back (buyer).
func (s *TransactionsService) ShipReturn(ctx context.Context, id int64, info *ShippingInformation, opts ...RequestOption) (*Transaction, error) {
	return s.Act(ctx, id, &ActionRequest{Action: ActionShipReturn, ShippingInformation: info}, opts...)
}

// ReceiveReturn marks returned goods received (seller); the return inspection starts.
func (s *TransactionsService) ReceiveReturn(ctx context.Context, id int64, opts ...RequestOption) (*Transaction, error) {
	return s.Act(ctx, id, &ActionRequest{Action: ActionReceiveReturn}, opts...)
}

// AcceptReturn accepts the returned goods (seller); the funds go back to the buyer.
func (s *TransactionsService) AcceptReturn(ctx context.Context, id int64, opts ...RequestOption) (*Transaction, error) {
	return s.Act(ctx, id, &ActionRequest{Action: ActionAcceptReturn}, opts...)
}

// RejectReturn rejects the returned goods (seller), which opens a dispute.
func (s *TransactionsService) RejectReturn(ctx context.Context, id int64, opts ...RequestOption) (*Transaction, error) {
	return s.Act(ctx, id, &ActionRequest{Action: ActionRejectReturn}, opts...)
}

// Cancel cancels the transaction. Once buyer and seller have both agreed only the partner
// may cancel; a completed or cancelled transaction cannot be. reason may be empty.
func (s *TransactionsService) Cancel(ctx context.Context, id int64, reason string, opts ...RequestOption) (*Transaction, error) {
	req := &ActionRequest{Action: ActionCancel}
	if reason != "" {
		req.CancelInformation = &CancelInformation{CancellationReason: reason}
	}
	return s.Act(ctx, id, req, opts...)
}

// PaymentMethods is what the buyer can pay with, and at what total.
type PaymentMethods struct {
	AvailablePaymentMethods              []AvailablePaymentMethod   `json:"available_payment_methods"`
	ConditionallyAvailablePaymentMethods []ConditionalPaymentMethod `json:"conditionally_available_payment_methods"`
	TotalWithoutPaymentFee               Amount                     `json:"total_without_payment_fee"`
}

// ConditionalPaymentMethod is a payment method usable once its conditions are met, such as
// "verification_required".
type ConditionalPaymentMethod struct {
	Type       PaymentMethodType `json:"type"`
	Total      Amount            `json:"total"`
	Conditions []string          `json:"conditions"`
}

// AvailablePaymentMethod is a way the buyer can pay, with the total it would cost.
type AvailablePaymentMethod struct {
	Type     PaymentMethodType `json:"type"`
	Total    Amount            `json:"total"`
	Currency Currency          `json:"currency,omitempty"`
}

// ChoosePaymentMethodRequest is the body of [TransactionsService.ChoosePaymentMethod].
type ChoosePaymentMethodRequest struct {
	// ReturnURL is where the provider's payment page sends the buyer afterwards.
	ReturnURL string `json:"return_url,omitempty"`
}

// LandingPage is a page of the provider's website that completes a step, such as paying
// by card or PayPal.
type LandingPage struct {
	LandingPage string `json:"landing_page"`
}

// WireTransferDetails is where the buyer wires the funds. They can change between
// transactions and must not be hard-coded.
type WireTransferDetails struct {
	BankName               string   `json:"bank_name"`
	BankAddress            string   `json:"bank_address"`
	StructuredBankAddress  *Address `json:"structured_bank_address,omitempty"`
	RoutingNumber          string   `json:"routing_number"`
	SwiftCode              string   `json:"swift_code"`
	CreditAccountName      string   `json:"credit_account_name"`
	CreditAccountNumber    string   `json:"credit_account_number"`
	AdditionalInstructions string   `json:"additional_instructions"`
}

// Timeline is the history of a transaction. The spec does not show its fields: Entries
// holds what escrowtest sends, and Raw the whole document as the API sent it.
type Timeline struct {
	Entries []TimelineEntry
	Raw     json.RawMessage
}

// TimelineEntry is one event of a transaction's history.
type TimelineEntry struct {
	ID        int64     `json:"id,omitempty"`
	Event     EventName `json:"event"`
	EventType EventType `json:"event_type,omitempty"`
	Date      Timestamp `json:"date,omitzero"`
	Message   string    `json:"message,omitempty"`
	ItemID    int64     `json:"item_id,omitempty"`
	// Customer is who acted, as the transaction names parties (an e-mail address, "me"
	// or "hidden"); empty for what the API did by itself.
	Customer string `json:"customer,omitempty"`
}

// UnmarshalJSON accepts a list of entries or an object holding one.
func (t *Timeline) UnmarshalJSON(b []byte) error {
	return decodeList(b, &t.Entries, &t.Raw, "timeline_entries", "entries")
}

// ListTimelineEntries returns the transaction's history.
func (s *TransactionsService) ListTimelineEntries(ctx context.Context, id int64, opts ...RequestOption) (*Timeline, error) {
	return fetch[Timeline](ctx, s.client, call{route: routeListTimelineEntries, params: []any{id}, opts: opts})
}

// GetDisbursementMethods returns how the caller (seller or broker) can be paid out of this
// transaction, and what is selected. The content differs per caller.
func (s *TransactionsService) GetDisbursementMethods(ctx context.Context, id int64, opts ...RequestOption) (*DisbursementMethods, error) {
	return fetch[DisbursementMethods](ctx, s.client, call{route: routeGetDisbursementMethods, params: []any{id}, opts: opts})
}

// SelectDisbursementMethod chooses how the caller is paid out of this transaction: a saved
// method (set only its ID), or new details, which are accepted only for a type among the
// transaction's available disbursement methods and are saved for later use. It fails when
// the method is unavailable for the transaction or the funds are already disbursed. Once a
// method is set, funds go out automatically after acceptance.
func (s *TransactionsService) SelectDisbursementMethod(ctx context.Context, id int64, method *DisbursementMethod, opts ...RequestOption) (*DisbursementMethods, error) {
	if method == nil {
		return nil, fmt.Errorf("%w: nil DisbursementMethod", ErrInvalidArgument)
	}
	return s.settleDisbursement(ctx, id, method, call{route: routeSelectDisbursementMethod, params: []any{id}, body: method, opts: opts})
}

// GetPaymentMethods returns how the buyer can fund the transaction. A partner may call it
// for the buyer with AsCustomer.
func (s *TransactionsService) GetPaymentMethods(ctx context.Context, id int64, opts ...RequestOption) (*PaymentMethods, error) {
	return fetch[PaymentMethods](ctx, s.client, call{route: routeGetPaymentMethods, params: []any{id}, opts: opts})
}

// ChoosePaymentMethod starts paying with credit_card, paypal or poli and returns the
// provider's page that completes it. For wire transfers use [TransactionsService.GetWireTransferDetails]
// and [TransactionsService.MarkWireSent]. in may be nil.
func (s *TransactionsService) ChoosePaymentMethod(ctx context.Context, id int64, method PaymentMethodType, in *ChoosePaymentMethodRequest, opts ...RequestOption) (*LandingPage, error) {
	if in == nil {
		in = &ChoosePaymentMethodRequest{}
	}
	return s.settleChoosePayment(ctx, id, call{route: routeChoosePaymentMethod, params: []any{id, string(method)}, body: in, opts: opts})
}

// GetWireTransferDetails returns where to wire the funds for this transaction.
func (s *TransactionsService) GetWireTransferDetails(ctx context.Context, id int64, opts ...RequestOption) (*WireTransferDetails, error) {
	return fetch[WireTransferDetails](ctx, s.client, call{route: routeGetWireTransferDetails, params: []any{id}, opts: opts})
}

// WireSent is the answer of [TransactionsService.MarkWireSent], whose shape the spec does
// not show.
type WireSent struct {
	// Transaction is the transaction updated, when the answer is one, as every action's
	// answer is (and escrowtest's). Nil otherwise.
	Transaction *Transaction
	// Raw is the whole answer as sent; nil when it was empty.
	Raw json.RawMessage
}

// decodeResponse keeps the answer, and reads it as a transaction when it is one.
func (w *WireSent) decodeResponse(_ *http.Response, body []byte) error {
	body = bytes.TrimSpace(body)
	if len(body) == 0 {
		return nil
	}
	if !json.Valid(body) {
		return errors.New("the answer is not JSON")
	}
	w.Raw = bytes.Clone(body) // body is the client's reusable buffer
	var probe struct {
		ID      int64           `json:"id"`
		Parties json.RawMessage `json:"parties"`
		Items   json.RawMessage `json:"items"`
	}
	if json.Unmarshal(body, &probe) != nil || probe.ID == 0 || (probe.Parties == nil && probe.Items == nil) {
		return nil
	}
	w.Transaction = new(Transaction)
	return json.Unmarshal(body, w.Transaction)
}

// MarkWireSent tells the API that the buyer has started the wire at their bank.
func (s *TransactionsService) MarkWireSent(ctx context.Context, id int64, opts ...RequestOption) (*WireSent, error) {
	return s.settleWireSent(ctx, id, call{route: routeMarkWireSent, params: []any{id}, opts: opts}) // see settle.go
}

// GetWebLink returns a page of the provider's website where a party completes an action of
// the transaction. The API does not list the valid actions.
func (s *TransactionsService) GetWebLink(ctx context.Context, id int64, action string, opts ...RequestOption) (*LandingPage, error) {
	return fetch[LandingPage](ctx, s.client, call{route: routeGetWebLink, params: []any{id, action}, opts: opts})
}

// GetItemWebLink is [TransactionsService.GetWebLink] for one item.
func (s *TransactionsService) GetItemWebLink(ctx context.Context, id, itemID int64, action string, opts ...RequestOption) (*LandingPage, error) {
	return fetch[LandingPage](ctx, s.client, call{route: routeGetItemWebLink, params: []any{id, itemID, action}, opts: opts})
}

// queryOrNil keeps a typed nil pointer from reaching the query encoder as a non-nil any.
func queryOrNil[T any](opt *T) any {
	if opt == nil {
		return nil
	}
	return opt
}
