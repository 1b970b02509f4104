package escrowtest

import (
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
)

// What the control API shows of transactions, for the page at /_emulator/ui/ and for
// anyone who would rather read one JSON document than three: a list with who must act
// next, and one transaction whole (parties as a chosen party sees them, items, timeline,
// ledger, the webhook calls it caused and the As-Customer calls made on it).

// maxDelegated bounds the As-Customer calls kept per transaction: the latest ones.
const maxDelegated = 100

// delegatedCall is one As-Customer request on a transaction, whatever its answer.
type delegatedCall struct {
	at       time.Time
	endpoint string // "PATCH /transaction/{id}"
	partner  int64  // the caller
	as       string // the As-Customer header, as sent
	status   int
}

// recordAsCustomer keeps an As-Customer request on a transaction in its journal; the
// lock is held. Refused requests are kept too: why a partner's call failed is what a
// person looks for.
func (e *Emulator) recordAsCustomer(r *http.Request, c call, caller *account, status int) {
	as := r.Header.Get(asCustomerHeader)
	if as == "" || c.route == nil || caller == nil {
		return
	}
	id, err := strconv.ParseInt(c.params["id"], 10, 64)
	tx := e.st.txs[id]
	if err != nil || tx == nil {
		return
	}
	if len(tx.delegated) >= maxDelegated {
		tx.delegated = slices.Delete(tx.delegated, 0, len(tx.delegated)-maxDelegated+1)
	}
	tx.delegated = append(tx.delegated, delegatedCall{at: e.now, endpoint: c.endpoint, partner: caller.id, as: as, status: status})
}

// controlParty is a party of a transaction in the control API's listing.
type controlParty struct {
	Role     string `json:"role"`
	Customer string `json:"customer"`
	Agreed   bool   `json:"agreed"`
}

// controlSummary is one row of GET /_emulator/transactions.
type controlSummary struct {
	ID          int64          `json:"id"`
	Description string         `json:"description"`
	Reference   string         `json:"reference,omitempty"`
	Currency    string         `json:"currency"`
	Created     string         `json:"created"`
	Amount      string         `json:"amount"` // every schedule entry of every item
	State       string         `json:"state"`  // Progress.State
	Phase       string         `json:"phase"`  // Progress.Phase
	Parties     []controlParty `json:"parties"`
	NextSteps   []NextStep     `json:"next_steps"`
	Waiting     string         `json:"waiting"`
}

type controlTransactions struct {
	Now string `json:"now"`
	// Total counts the transactions that match; Transactions holds the newest of them.
	Total        int              `json:"total"`
	Transactions []controlSummary `json:"transactions"`
	States       []string         `json:"states"` // what ?state= takes
}

// defaultListLimit is how many transactions the list shows unless told otherwise.
const defaultListLimit = 200

// controlTransactions serves GET /_emulator/transactions ?state= &party= &limit=: newest
// first; party matches any part of a party's address, without case.
func (e *Emulator) controlTransactions(r *http.Request, _ []byte) (response, error) {
	q := newQuery(r.URL.Query())
	state := q.oneOf("state", "", transactionStates...)
	party := strings.ToLower(strings.TrimSpace(q.values.Get("party")))
	limit := q.integer("limit", defaultListLimit, 1, 1000)
	if err := q.errs.orNil(); err != nil {
		return response{}, err
	}
	return success(e.listing(state, party, limit)), nil
}

// listing is the list of transactions, filtered.
func (e *Emulator) listing(state, party string, limit int) controlTransactions {
	e.lock()
	defer e.mu.Unlock()
	out := controlTransactions{Now: formatTime(e.now), Transactions: []controlSummary{}, States: transactionStates}
	for _, tx := range slices.Backward(e.st.txOrder) {
		if (state != "" && tx.state() != state) || (party != "" && !e.hasPartyLike(tx, party)) {
			continue
		}
		out.Total++
		if len(out.Transactions) < limit {
			out.Transactions = append(out.Transactions, e.summary(tx))
		}
	}
	return out
}

// hasPartyLike reports whether a party's address contains s; the lock is held.
func (e *Emulator) hasPartyLike(tx *transaction, s string) bool {
	return slices.ContainsFunc(tx.parties, func(p *party) bool {
		return strings.Contains(e.st.accounts[p.account].email, s)
	})
}

// summary is a transaction's row; the lock is held.
func (e *Emulator) summary(tx *transaction) controlSummary {
	p := e.progress(tx)
	var amount cents
	for _, it := range tx.items {
		amount += it.amount()
	}
	s := controlSummary{
		ID: tx.id, Description: tx.description, Reference: tx.reference, Currency: tx.currency,
		Created: formatTime(tx.created), Amount: amount.String(), State: p.State, Phase: p.Phase,
		Parties: []controlParty{}, NextSteps: p.Steps, Waiting: p.Waiting,
	}
	for _, pt := range tx.parties {
		s.Parties = append(s.Parties, controlParty{Role: pt.role, Customer: e.st.accounts[pt.account].email, Agreed: pt.agreed})
	}
	return s
}

// controlLedgerCheck is a ledger with its balance check, as the page shows it.
type controlLedgerCheck struct {
	Ledger
	// Balanced reports whether in = out + fees + held.
	Balanced bool `json:"balanced"`
}

// controlAsCustomer is one As-Customer call in GET /_emulator/transactions/{id}.
type controlAsCustomer struct {
	Date     string `json:"date"`
	Endpoint string `json:"endpoint"`
	Partner  string `json:"partner"`
	As       string `json:"as_customer"`
	Status   int    `json:"status"`
}

// controlTransaction is GET /_emulator/transactions/{id}: the transaction as Viewer sees
// it through the API ("" for the emulator, which sees everything), and what only the
// emulator knows about it.
type controlTransaction struct {
	Now    string `json:"now"`
	Viewer string `json:"viewer"`
	// Parties are every party, whoever the viewer: whom the page may show it to.
	Parties     []controlParty      `json:"parties"`
	Transaction wireTransaction     `json:"transaction"`
	Progress    Progress            `json:"progress"`
	Ledger      controlLedgerCheck  `json:"ledger"`
	Timeline    []wireTimelineEntry `json:"timeline"`
	Deliveries  []Delivery          `json:"deliveries"`
	AsCustomer  []controlAsCustomer `json:"as_customer"`
}

// controlTransaction serves GET /_emulator/transactions/{id} ?viewer=<party's address>.
func (e *Emulator) controlTransaction(r *http.Request, _ []byte) (response, error) {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil {
		return response{}, notFound("no transaction %q", r.PathValue("id"))
	}
	out, err := e.inspect(id, r.URL.Query().Get("viewer"))
	if err != nil {
		return response{}, err
	}
	return success(out), nil
}

// inspect is one transaction whole, as viewer (an address, "" for the emulator) sees it.
func (e *Emulator) inspect(id int64, viewer string) (controlTransaction, error) {
	// Deliveries are read before the emulator's lock is taken: the dispatcher's lock is
	// taken under the emulator's when events queue, never the other way round.
	var deliveries []Delivery
	for _, d := range e.Deliveries() {
		if d.TransactionID == id {
			deliveries = append(deliveries, d.masked())
		}
	}
	e.lock()
	defer e.mu.Unlock()
	tx := e.st.txs[id]
	if tx == nil {
		return controlTransaction{}, notFound("no transaction %d", id)
	}
	v := view{st: e.st, tx: tx, all: true}
	viewer = strings.ToLower(strings.TrimSpace(viewer))
	if viewer != "" {
		a := e.st.accountByEmail(viewer)
		if a == nil || !tx.isParty(a.id) {
			return controlTransaction{}, fieldErrors{"viewer": []string{viewer + " is not a party of transaction " + strconv.FormatInt(id, 10)}}
		}
		v = view{st: e.st, tx: tx, reader: a.id}
	}
	out := controlTransaction{
		Now: formatTime(e.now), Viewer: viewer, Parties: e.summary(tx).Parties,
		Transaction: v.transaction(), Progress: e.progress(tx), Ledger: ledgerCheck(tx), Timeline: v.timeline(),
		Deliveries: append([]Delivery{}, deliveries...), AsCustomer: []controlAsCustomer{},
	}
	for _, c := range tx.delegated {
		out.AsCustomer = append(out.AsCustomer, controlAsCustomer{
			Date: formatTime(c.at), Endpoint: c.endpoint, Partner: e.st.accounts[c.partner].email, As: c.as, Status: c.status,
		})
	}
	return out, nil
}

// ledgerCheck is the transaction's ledger and whether it balances; the lock is held.
func ledgerCheck(tx *transaction) controlLedgerCheck {
	h := held(tx)
	return controlLedgerCheck{
		Ledger:   Ledger{In: tx.money.in.String(), Out: tx.money.out.String(), Fees: tx.money.fees.String(), Held: h.String()},
		Balanced: tx.money.in == tx.money.out+tx.money.fees+h,
	}
}

// timeline is the transaction's timeline as the reader sees it.
func (v view) timeline() []wireTimelineEntry {
	out := []wireTimelineEntry{}
	for _, t := range v.tx.timeline {
		entry := wireTimelineEntry{ID: t.id, Event: t.event, EventType: "transaction", Date: formatTime(t.date), ItemID: t.item, Message: t.detail}
		if t.actor != 0 {
			entry.Customer = v.customer(t.actor)
		}
		out = append(out, entry)
	}
	return out
}
