package escrowtest

import (
	"math"
	"slices"
	"strings"
	"time"
)

// requirePartner refuses partner endpoints to customers who are not approved partners.
func requirePartner(req *request) error {
	if !req.caller.partner {
		return forbidden("partner endpoints are for approved partners")
	}
	return nil
}

// cursor is the paging of the partner listings. The cursor is the id of the first record
// of a page, so pages stay stable when records are added: next_cursor is the id of the
// first record of the next page, and null after the last page.
type cursor struct {
	limit     int   // 0: everything from the cursor on
	start     int64 // 0: from the first record
	direction string
}

func parseCursor(q query) cursor {
	c := cursor{
		limit:     q.integer("limit", 0, 1, 1000),
		direction: q.oneOf("sort_direction", "desc", "asc", "desc"),
	}
	q.oneOf("sort_by", "id", "id")
	if q.has("next_cursor") {
		c.start = int64(q.integer("next_cursor", 0, 1, math.MaxInt))
	}
	return c
}

// page returns the records of the page (sorted by ascending id on entry) and the next
// cursor.
func page[T any](c cursor, records []T, id func(T) int64) ([]T, *int64) {
	records = slices.Clone(records)
	before := func(a, b int64) bool { return a < b }
	if c.direction == "desc" {
		slices.Reverse(records)
		before = func(a, b int64) bool { return a > b }
	}
	from := 0
	if c.start != 0 {
		from = slices.IndexFunc(records, func(r T) bool { return !before(id(r), c.start) })
		if from < 0 {
			from = len(records)
		}
	}
	rest := records[from:]
	if c.limit == 0 || len(rest) <= c.limit {
		return rest, nil
	}
	next := id(rest[c.limit])
	return rest[:c.limit], &next
}

// echo is the listing's answer about its paging; the limit is null when none was given.
func (c cursor) echo(next *int64) wireCursor {
	w := wireCursor{SortBy: "id", SortDirection: c.direction, NextCursor: next}
	if c.limit != 0 {
		w.Limit = &c.limit
	}
	return w
}

// txFilter is the query of GET /partner/transactions and the body of POST /partner/reports.
type txFilter struct {
	cursor
	status             string
	ids, customerIDs   []int64
	minAmount          cents
	maxAmount          cents
	hasMin, hasMax     bool
	startDate, endDate time.Time
}

func parseTxFilter(q query) txFilter {
	f := txFilter{
		cursor:      parseCursor(q),
		status:      q.oneOf("status", "", "ongoing", "completed"),
		ids:         q.ids("ids"),
		customerIDs: q.ids("customer_ids"),
	}
	f.minAmount, f.hasMin = q.amount("min_amount")
	f.maxAmount, f.hasMax = q.amount("max_amount")
	f.startDate, _ = q.timestamp("initiation_start_date")
	f.endDate, _ = q.timestamp("initiation_end_date")
	return f
}

// matches applies every filter. Amounts compare with the transaction's total as the
// partner sees it (every schedule entry of every item it sees); ongoing means neither complete nor cancelled, and
// cancelled transactions match neither status.
func (f txFilter) matches(v view) bool {
	tx := v.tx
	switch {
	case f.status == "ongoing" && tx.isClosed(), f.status == "completed" && !tx.completed:
		return false
	case f.ids != nil && !slices.Contains(f.ids, tx.id):
		return false
	case f.customerIDs != nil && !slices.ContainsFunc(tx.parties, func(p *party) bool { return slices.Contains(f.customerIDs, p.account) }):
		return false
	}
	return f.inRanges(v)
}

// inRanges applies the amount and creation-date filters.
func (f txFilter) inRanges(v view) bool {
	created := v.tx.created
	switch {
	case f.hasMin && v.amount() < f.minAmount, f.hasMax && v.amount() > f.maxAmount:
		return false
	case !f.startDate.IsZero() && created.Before(f.startDate), !f.endDate.IsZero() && created.After(f.endDate):
		return false
	}
	return true
}

// partnerTransactionsMatching returns the partner's transactions that match f, by id.
func (e *Emulator) partnerTransactionsMatching(partner *account, f txFilter) []*transaction {
	var out []*transaction
	for _, tx := range e.st.txOrder {
		if tx.hasRole(partner.id, rolePartner) && f.matches(view{st: e.st, tx: tx, reader: partner.id}) {
			out = append(out, tx)
		}
	}
	return out
}

// transactionCursor renders one page of transactions for the partner.
func (e *Emulator) transactionCursor(partner *account, f txFilter) wireTransactionCursor {
	txs, next := page(f.cursor, e.partnerTransactionsMatching(partner, f), func(t *transaction) int64 { return t.id })
	out := wireTransactionCursor{wireCursor: f.echo(next), Transactions: []wireTransaction{}}
	for _, tx := range txs {
		out.Transactions = append(out.Transactions, e.render(tx, partner))
	}
	return out
}

// partnerTransactions serves GET /partner/transactions.
func (e *Emulator) partnerTransactions(req *request) (response, error) {
	if err := requirePartner(req); err != nil {
		return response{}, err
	}
	q := newQuery(req.URL.Query())
	f := parseTxFilter(q)
	if err := q.errs.orNil(); err != nil {
		return response{}, err
	}
	return success(e.transactionCursor(req.caller, f)), nil
}

// verificationStatuses are the values of /partner/customers?verification_status.
var verificationStatuses = []string{"verified", "not_verified", "company_verified"}

// partnerCustomers serves GET /partner/customers.
func (e *Emulator) partnerCustomers(req *request) (response, error) {
	if err := requirePartner(req); err != nil {
		return response{}, err
	}
	q := newQuery(req.URL.Query())
	c := parseCursor(q)
	ids := q.ids("ids")
	country := strings.ToUpper(q.values.Get("country"))
	status := q.oneOf("verification_status", "", verificationStatuses...)
	if err := q.errs.orNil(); err != nil {
		return response{}, err
	}
	var matching []*account
	for _, a := range e.customersOf(req.caller) {
		if customerMatches(a, ids, country, status) {
			matching = append(matching, a)
		}
	}
	customers, next := page(c, matching, func(a *account) int64 { return a.id })
	out := wireCustomerCursor{wireCursor: c.echo(next), Customers: []wireCustomer{}}
	for _, a := range customers {
		out.Customers = append(out.Customers, renderCustomer(a, partnerView))
	}
	return success(out), nil
}

// customerMatches applies the filters of GET /partner/customers.
func customerMatches(a *account, ids []int64, country, status string) bool {
	return (ids == nil || slices.Contains(ids, a.id)) &&
		(country == "" || a.country() == country) &&
		statusMatches(a, status)
}

// statusMatches applies the verification_status filter of GET /partner/customers: verified and
// not_verified read the personal verification, company_verified the company's; no status
// filters nothing.
func statusMatches(a *account, status string) bool {
	switch status {
	case "verified":
		return a.verifiedPersonal
	case "not_verified":
		return !a.verifiedPersonal
	case "company_verified":
		return a.verifiedCompany
	}
	return true
}

// partnerCustomer serves GET /partner/customer?party_id=…&customer_id=…: a customer of
// one of the partner's transactions, found by party id or customer id (both, when given,
// must name the same customer).
func (e *Emulator) partnerCustomer(req *request) (response, error) {
	if err := requirePartner(req); err != nil {
		return response{}, err
	}
	partyID, customerID, err := customerQuery(req)
	if err != nil {
		return response{}, err
	}
	if partyID != 0 {
		found := e.partyAccount(req.caller, partyID)
		if found == 0 || (customerID != 0 && customerID != found) {
			return response{}, notFound("no party %d in your transactions", partyID)
		}
		customerID = found
	}
	return e.partnersView(req.caller, customerID)
}

// customerQuery reads GET /partner/customer's party_id and customer_id (0 when absent),
// one of which is required.
func customerQuery(req *request) (partyID, customerID int64, err error) {
	q := newQuery(req.URL.Query())
	partyID = int64(q.integer("party_id", 0, 1, math.MaxInt))
	customerID = int64(q.integer("customer_id", 0, 1, math.MaxInt))
	if partyID == 0 && customerID == 0 && q.errs.orNil() == nil {
		q.errs.add("party_id or customer_id is required", "party_id")
	}
	return partyID, customerID, q.errs.orNil()
}

// partyAccount is the account of the party partyID of one of partner's transactions; 0
// when there is none.
func (e *Emulator) partyAccount(partner *account, partyID int64) int64 {
	found := int64(0)
	for _, tx := range e.st.txOrder {
		for _, p := range tx.parties {
			if p.id == partyID && tx.hasRole(partner.id, rolePartner) {
				found = p.account
			}
		}
	}
	return found
}

// partnersView renders the customer as the partner may see it.
func (e *Emulator) partnersView(partner *account, customerID int64) (response, error) {
	a := e.st.accounts[customerID]
	switch {
	case a == nil:
	case a == partner:
		return success(renderCustomer(a, ownView)), nil
	case e.relatedTo(partner, a):
		return success(renderCustomer(a, partnerView)), nil
	case e.partyOf(partner, a):
		// "Customer, when the partner is part of the transaction": the customer, but not
		// its profile, which the partner has no relationship to read.
		return success(renderCustomer(a, partyView)), nil
	}
	return response{}, notFound("no customer %d in your transactions", customerID)
}
