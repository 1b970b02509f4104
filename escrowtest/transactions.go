package escrowtest

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
)

// transactionFor finds the transaction named by {id}, if the caller is a party to it:
// others get 404, as if it did not exist.
func (e *Emulator) transactionFor(req *request) (*transaction, error) {
	id, err := req.id("id")
	if err != nil {
		return nil, err
	}
	tx := e.st.txs[id]
	if tx == nil || !tx.isParty(req.caller.id) {
		return nil, notFound("no transaction %d", id)
	}
	return tx, nil
}

// createTransaction serves POST /transaction.
func (e *Emulator) createTransaction(req *request) (response, error) {
	o, err := decodeObject(req.body)
	if err != nil {
		return response{}, err
	}
	d := parseCreation(o, req.caller, e.cfg.minimumEscrowFee)
	if d.reference != "" && slices.ContainsFunc(e.st.txOrder, func(t *transaction) bool {
		return t.creator == req.caller.id && t.reference == d.reference
	}) {
		o.errs.add("a transaction with this reference already exists", "reference")
	}
	if err := o.errs.orNil(); err != nil {
		return response{}, err
	}
	tx := e.newTransaction(d, req.caller)
	e.emit(tx, "create", 0, req.caller.id, "")
	return response{status: http.StatusCreated, body: e.render(tx, req.caller)}, nil
}

// newTransaction stores a validated draft: parties without an account get one, the
// creator's entries start agreed, the creator becomes the partner party, and escrow fees
// are computed and split.
func (e *Emulator) newTransaction(d draft, creator *account) *transaction {
	st := e.st
	tx := &transaction{
		id: next(&st.ids.transaction), creator: creator.id, currency: d.currency,
		description: d.description, reference: d.reference, created: e.now,
	}
	ac := creationAccounts{e: e, creator: creator}
	for _, p := range d.parties {
		a := ac.of(p.email)
		tx.parties = append(tx.parties, &party{
			id: next(&st.ids.party), role: p.role, account: a, agreed: a == creator.id, selfAgreed: a == creator.id,
			initiator: a == creator.id, hiddenFrom: ac.all(p.hiddenFrom),
		})
	}
	tx.parties = append(tx.parties, &party{id: next(&st.ids.party), role: rolePartner, account: creator.id, agreed: true, initiator: true})
	goodsFees := goodsFeesOf(d.items)
	for _, di := range d.items {
		tx.items = append(tx.items, e.newItem(tx, di, goodsFees, ac))
	}
	st.txs[tx.id] = tx
	st.txOrder = append(st.txOrder, tx)
	return tx
}

// creationAccounts finds the accounts a new transaction names, making those that do not
// exist yet.
type creationAccounts struct {
	e       *Emulator
	creator *account
}

// of returns the id of the account with the e-mail address.
func (ac creationAccounts) of(email string) int64 {
	st := ac.e.st
	if a := st.accountByEmail(email); a != nil {
		return a.id
	}
	// The account exists because this partner named the address: it is the partner's
	// customer (see relatedTo).
	a := st.ensureAccount(email, ac.e.now)
	a.createdBy = ac.creator.id
	return a.id
}

// all returns the ids of the accounts with the e-mail addresses.
func (ac creationAccounts) all(emails []string) []int64 {
	var ids []int64
	for _, m := range emails {
		ids = append(ids, ac.of(m))
	}
	return ids
}

// goodsFeesOf are the fee entries of the first good. A shipping_fee item without fee
// entries pays its escrow fee as the goods do, so that a plugin's "the seller pays the
// fees" covers the shipping too.
func goodsFeesOf(items []draftItem) []draftFee {
	for _, di := range items {
		if transferable(di.typ) {
			return di.fees
		}
	}
	return nil
}

// newItem stores a validated item of a new transaction, with its schedule and its escrow
// fees computed.
func (e *Emulator) newItem(tx *transaction, di draftItem, goodsFees []draftFee, ac creationAccounts) *item {
	it := &item{
		id: next(&e.st.ids.item), title: di.title, description: di.description, typ: di.typ,
		category: di.category, inspectionPeriod: di.inspection, quantity: di.quantity,
		extra: di.extra, hiddenFrom: ac.all(di.hiddenFrom), hasVisibility: di.hasVisibility,
	}
	for _, s := range di.schedule {
		it.schedule = append(it.schedule, &schedule{amount: s.amount, payer: ac.of(s.payer), beneficiary: ac.of(s.beneficiary), due: s.due})
	}
	switch {
	case di.typ == itemShippingFee && di.fees == nil:
		it.fees = e.escrowFees(tx, it, goodsFees)
	case itemRule(di.typ).escrowFee:
		it.fees = e.escrowFees(tx, it, di.fees)
	}
	return it
}

// escrowFees turns the fee entries given at creation into fees with amounts. Without
// entries the buyer pays the whole escrow fee (fee rule 2); other fee types are computed
// when a payment or disbursement is made, which the emulator does not model, so they are
// 0.00.
func (e *Emulator) escrowFees(tx *transaction, it *item, given []draftFee) []*fee {
	if len(given) == 0 {
		given = []draftFee{{typ: feeEscrow, payer: e.st.accounts[tx.party(roleBuyer).account].email, halves: 2}}
	}
	var fees []*fee
	var halves []int
	for _, f := range given {
		fees = append(fees, &fee{typ: f.typ, payer: e.st.accountByEmail(f.payer).id, halves: f.halves})
		if f.typ == feeEscrow {
			halves = append(halves, f.halves)
		}
	}
	shares := splitFee(escrowFee(it.amount(), it.typ), halves)
	for _, f := range fees {
		if f.typ == feeEscrow {
			f.amount, shares = shares[0], shares[1:]
		}
	}
	return fees
}

// getTransaction serves GET /transaction/{id}.
func (e *Emulator) getTransaction(req *request) (response, error) {
	tx, err := e.transactionFor(req)
	if err != nil {
		return response{}, err
	}
	return success(e.render(tx, req.caller)), nil
}

// getTransactionByReference serves GET /transaction/reference/{reference}: among the
// transactions the caller is a party to, the one the caller created with that reference,
// else the newest one holding it.
func (e *Emulator) getTransactionByReference(req *request) (response, error) {
	ref := req.params["reference"]
	var found *transaction
	for _, tx := range e.st.txOrder {
		if tx.reference != ref || !tx.isParty(req.caller.id) {
			continue
		}
		if found == nil || found.creator != req.caller.id {
			found = tx
		}
	}
	if found == nil {
		return response{}, notFound("no transaction with reference %q", ref)
	}
	return success(e.render(found, req.caller)), nil
}

// listTransactions serves GET /transaction: the caller's transactions, paged.
func (e *Emulator) listTransactions(req *request) (response, error) {
	q := newQuery(req.URL.Query())
	page := q.integer("page", 1, 1, 1<<30)
	perPage := q.integer("per_page", 10, 1, 100)
	q.oneOf("sort_by", "id", "id")
	direction := q.oneOf("sort_direction", "desc", "asc", "desc")
	if err := q.errs.orNil(); err != nil {
		return response{}, err
	}
	var txs []*transaction
	for _, tx := range e.st.txOrder {
		if tx.isParty(req.caller.id) {
			txs = append(txs, tx)
		}
	}
	if direction == "desc" {
		slices.Reverse(txs)
	}
	out := wireTransactionPage{Page: page, PerPage: perPage, PageCount: (len(txs) + perPage - 1) / perPage, Transactions: []wireTransaction{}}
	for _, tx := range txs[min((page-1)*perPage, len(txs)):min(page*perPage, len(txs))] {
		out.Transactions = append(out.Transactions, e.render(tx, req.caller))
	}
	return success(out), nil
}

// timeline serves GET /transaction/{id}/timeline-entries.
func (e *Emulator) timeline(req *request) (response, error) {
	tx, err := e.transactionFor(req)
	if err != nil {
		return response{}, err
	}
	return success(wireTimeline{TimelineEntries: view{st: e.st, tx: tx, reader: req.caller.id}.timeline()}), nil
}

// webLinkActions are the pages a web link may open; the spec does not list them.
var webLinkActions = append([]string{"view", "pay"}, actionNames...)

// webLink serves GET /transaction/{id}/web_link/{action} and its item form: a page on
// the emulator's own host.
func (e *Emulator) webLink(req *request) (response, error) {
	tx, err := e.transactionFor(req)
	if err != nil {
		return response{}, err
	}
	// As-Customer opens the page for the party named (the provider's docs call the web
	// link most useful that way); the same rules as for actions decide who may send it.
	who, err := e.actorFor(req, tx)
	if err != nil {
		return response{}, err
	}
	path := fmt.Sprintf("/transaction/%d", tx.id)
	if _, onItem := req.params["item_id"]; onItem {
		it, err := tx.itemFor(req)
		if err != nil {
			return response{}, err
		}
		path += fmt.Sprintf("/item/%d", it.id)
	}
	action := req.params["action"]
	if !slices.Contains(webLinkActions, action) {
		return response{}, notFound("no web link for %q", action)
	}
	if err := tx.mayOpenActionPage(who.account, action); err != nil {
		return response{}, err
	}
	return success(wireLandingPage{LandingPage: emulatorURL(req.Request, "/pages"+path+"/"+action)}), nil
}

// mayOpenActionPage refuses the page of an action to a party that holds no role taking
// it: the creator that is only the partner party asking for the agree page, a buyer asking
// for ship. The live API refused the first with "Buyer is unable to agree at this stage
// in the transaction" (a 4xx; API notes, "What the live API answered"), naming the buyer
// though the caller was no buyer; the emulator answers 400 in those words, naming the
// caller's role when it has one besides partner. Whether live refuses a party that has
// already taken the action is not known, so the page stays open to it.
func (t *transaction) mayOpenActionPage(who *account, action string) error {
	rule, ok := actionNamed(action)
	if !ok || action == "cancel" { // view, pay; cancel has rules of its own
		return nil
	}
	roles := t.rolesBesidesPartner(who.id)
	if slices.ContainsFunc(roles, rule.takenBy) {
		return nil
	}
	role := roleBuyer // the live API's word to a caller that is only the partner
	if len(roles) > 0 {
		role = roles[0]
	}
	return invalidState(action, t.phase(), 0, "%s is unable to %s at this stage in the transaction", strings.ToUpper(role[:1])+role[1:], action)
}

// rolesBesidesPartner are the roles an account holds in the transaction, but partner, in
// the order of its parties.
func (t *transaction) rolesBesidesPartner(accountID int64) []string {
	var roles []string
	for _, p := range t.partiesOf(accountID) {
		if p.role != rolePartner {
			roles = append(roles, p.role)
		}
	}
	return roles
}
