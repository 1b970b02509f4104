package escrowtest

import (
	"slices"
	"strings"
	"time"
)

// Roles, item types and the other names the spec fixes.
const (
	roleBuyer   = "buyer"
	roleSeller  = "seller"
	roleBroker  = "broker"
	rolePartner = "partner"

	itemDomainName         = "domain_name"
	itemDomainNameHolding  = "domain_name_holding"
	itemGeneralMerchandise = "general_merchandise"
	itemMilestone          = "milestone"
	itemMotorVehicle       = "motor_vehicle"
	itemBrokerFee          = "broker_fee"
	itemPartnerFee         = "partner_fee"
	itemShippingFee        = "shipping_fee"

	feeEscrow = "escrow"
)

// First ids. Each kind of record counts up from its own start, so that ids are
// deterministic and a test that mixes up two kinds of id fails instead of passing by luck.
const (
	firstCustomerID    = 1001
	firstTransactionID = 200001
	firstItemID        = 300001
	firstPartyID       = 400001
	firstAPIKeyID      = 501
	firstWebhookID     = 601
	firstMethodID      = 701
	firstEntryID       = 1
	firstTaxNumberID   = 801
)

// transferable reports whether items of type t are the goods of a transaction, as
// opposed to fee items (spec part 2, "Item-type rules").
func transferable(t string) bool { return itemRule(t).transferable }

// store is the emulator's whole state. The Emulator's mutex guards it.
type store struct {
	ids ids

	accounts map[int64]*account
	byEmail  map[string]*account

	txs     map[int64]*transaction
	txOrder []*transaction // by ascending id
	// inspecting holds the transactions with an inspection period running, so that
	// applying the passing of time looks at those alone.
	inspecting map[int64]*transaction

	reports  []*report
	payments []cardPayment
}

// ids holds the next id of each kind of record.
type ids struct {
	customer, transaction, item, party, apiKey, webhook, method, entry, taxNumber int64
}

func newStore() *store {
	return &store{
		ids: ids{
			customer: firstCustomerID, transaction: firstTransactionID, item: firstItemID,
			party: firstPartyID, apiKey: firstAPIKeyID, webhook: firstWebhookID,
			method: firstMethodID, entry: firstEntryID, taxNumber: firstTaxNumberID,
		},
		accounts:   map[int64]*account{},
		byEmail:    map[string]*account{},
		txs:        map[int64]*transaction{},
		inspecting: map[int64]*transaction{},
	}
}

// next hands out the id a counter holds and moves it on.
func next(counter *int64) int64 {
	id := *counter
	*counter++
	return id
}

// account is a customer of the service.
type account struct {
	id           int64
	email        string // lowercase; e-mail addresses are compared without case
	passwordHash []byte // nil until a password is issued
	keys         []*apiKey
	partner      bool // an approved partner
	created      time.Time
	createdBy    int64 // the customer whose POST /customer created it, if any

	profile          customerProfile
	verifiedPersonal bool
	verifiedCompany  bool
	methods          []*wireDisbursementMethod
	webhooks         []*webhook
}

// customerProfile is what POST /customer may set, and what GET /customer returns.
type customerProfile struct {
	firstName, middleName, lastName, phone string
	address, shippingAddress               *wireAddress
	companyName                            string
	companyAddress                         *wireAddress
	dateOfBirth                            time.Time
	taxNumbers                             []wireTaxNumber
	identificationDocuments                []wireIdentificationDocument
}

// country is the account's country code.
func (a *account) country() string { return countryOf(a.profile.address) }

// countryOf is an address's country code; customers without one count as residents of
// the USA (see the package comment).
func countryOf(addr *wireAddress) string {
	if addr != nil && addr.Country != "" {
		return addr.Country
	}
	return "US"
}

// apiKey is one API key. Only a hash of the key is kept.
type apiKey struct {
	id       int64
	name     string
	hash     []byte
	lastFour string
	created  time.Time
	active   bool
}

type webhook struct {
	id  int64
	url string
}

// accountByEmail finds an account by e-mail, ignoring case.
func (s *store) accountByEmail(email string) *account {
	return s.byEmail[strings.ToLower(email)]
}

// ensureAccount returns the account of an e-mail address, creating one without
// credentials when there is none, as the service does for new transaction parties.
func (s *store) ensureAccount(email string, now time.Time) *account {
	if a := s.accountByEmail(email); a != nil {
		return a
	}
	a := &account{id: next(&s.ids.customer), email: strings.ToLower(email), created: now}
	s.accounts[a.id] = a
	s.byEmail[a.email] = a
	return a
}

// transaction is one escrow.
type transaction struct {
	id          int64
	creator     int64 // account id of the partner party
	currency    string
	description string
	reference   string
	created     time.Time
	closed      time.Time // zero while open

	parties []*party
	items   []*item

	cancelled     bool
	completed     bool
	funded        bool
	paymentMethod string // chosen by the buyer, "" before
	wireSent      bool

	timeline []timelineEntry
	money    ledger
	// delegated are the latest As-Customer calls made on it, for the page.
	delegated []delegatedCall
}

type party struct {
	id      int64
	role    string
	account int64
	agreed  bool
	// selfAgreed: the customer agreed itself, not a partner As-Customer. It is what makes
	// the customer the partner's (see relatedTo).
	selfAgreed bool
	initiator  bool
	hiddenFrom []int64 // accounts this party's details are concealed from
	method     int64   // selected disbursement method, 0 when none
}

type item struct {
	id               int64
	title            string
	description      string
	typ              string
	category         string
	inspectionPeriod int64 // seconds
	quantity         int64
	extra            extraAttributes
	schedule         []*schedule
	fees             []*fee
	flags            itemFlag
	hiddenFrom       []int64 // broker_fee items: accounts that do not see them
	hasVisibility    bool

	inspectionEnds time.Time // set by receive
	returnEnds     time.Time // set by receive_return
}

type extraAttributes struct {
	withContent, titleCollection, lienHolderPayoff bool
	vin, odometer, make, model                     string
	year                                           int64
}

type schedule struct {
	amount      cents
	payer       int64
	beneficiary int64
	due         time.Time
	secured     bool // covered by money in escrow (see ledger.go)
	paidIn      bool // the buyer paid it in; a seller-paid entry never is
	disbursed   bool
	refunded    bool
}

type fee struct {
	typ     string
	payer   int64
	halves  int // escrow fees: 2 = split 1.0, 1 = split 0.5
	amount  cents
	paidIn  bool // the buyer's, once funded
	settled bool // earned or refunded
}

type timelineEntry struct {
	id     int64
	event  string
	date   time.Time
	item   int64
	actor  int64 // 0 for the emulator itself (auto-accept, funding)
	detail string
}

// report is a partner report, computed when it is requested.
type report struct {
	taskID  string
	partner int64
	created time.Time
	csv     []byte
}

// cardPayment is a card movement: in when a card funds a transaction, out when a
// refund goes back to the card.
type cardPayment struct {
	out      bool
	customer int64
	tx       int64
	amount   cents
	created  time.Time
}

// partiesOf returns the party entries an account holds in the transaction (the creator
// may be, for example, both the buyer and the partner).
func (t *transaction) partiesOf(accountID int64) []*party {
	var ps []*party
	for _, p := range t.parties {
		if p.account == accountID {
			ps = append(ps, p)
		}
	}
	return ps
}

// party returns the party holding a role, or nil.
func (t *transaction) party(role string) *party {
	for _, p := range t.parties {
		if p.role == role {
			return p
		}
	}
	return nil
}

// hasRole reports whether the account holds the role in the transaction.
func (t *transaction) hasRole(accountID int64, role string) bool {
	p := t.party(role)
	return p != nil && p.account == accountID
}

// isParty reports whether the account may read the transaction.
func (t *transaction) isParty(accountID int64) bool {
	return len(t.partiesOf(accountID)) > 0
}

// allAgreed reports whether every party has agreed.
func (t *transaction) allAgreed() bool {
	return !slices.ContainsFunc(t.parties, func(p *party) bool { return !p.agreed })
}

// goods returns the transferable items, on which ship, receive and the rest act.
func (t *transaction) goods() []*item {
	var gs []*item
	for _, it := range t.items {
		if transferable(it.typ) {
			gs = append(gs, it)
		}
	}
	return gs
}

// milestone reports whether the transaction's goods are milestones, which are acted on
// one item at a time.
func (t *transaction) milestone() bool {
	gs := t.goods()
	return len(gs) > 0 && itemRule(gs[0].typ).perItem
}

// amount is the item's price: the sum of its schedule (quantity does not multiply it).
func (it *item) amount() cents {
	var sum cents
	for _, s := range it.schedule {
		sum += s.amount
	}
	return sum
}

// flows is what one account puts into a transaction and takes out of it.
type flows struct {
	pays     cents // schedule entries it pays
	receives cents // schedule entries paid to it
	fees     cents // its fee entries
}

// flowsOf sums the schedule and fee entries of every item for one account.
func (t *transaction) flowsOf(accountID int64) flows {
	var f flows
	for _, it := range t.items {
		for _, s := range it.schedule {
			if s.payer == accountID {
				f.pays += s.amount
			}
			if s.beneficiary == accountID {
				f.receives += s.amount
			}
		}
		for _, fe := range it.fees {
			if fe.payer == accountID {
				f.fees += fe.amount
			}
		}
	}
	return f
}

// closed reports whether the transaction is complete or cancelled.
func (t *transaction) isClosed() bool { return t.cancelled || t.completed }
