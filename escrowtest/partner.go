package escrowtest

import (
	"bytes"
	"crypto/rand"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// statisticsIntervals are the bucket sizes of the statistics endpoints.
var statisticsIntervals = map[string]func(time.Time) time.Time{
	"day":   func(t time.Time) time.Time { return t.AddDate(0, 0, 1) },
	"week":  func(t time.Time) time.Time { return t.AddDate(0, 0, 7) },
	"month": func(t time.Time) time.Time { return t.AddDate(0, 1, 0) },
}

const maxBuckets = 1000

// statistics counts dates in buckets. Query: start_date and end_date (ISO 8601, both
// inclusive; by default the 30 days up to now) and interval (day, week or month; day by
// default). Buckets start at midnight UTC of start_date; each is labelled
// "YYYY-MM-DD/YYYY-MM-DD", its first day and the day after its last.
func (e *Emulator) statistics(req *request, dates func(partner *account) []time.Time) (response, error) {
	if err := requirePartner(req); err != nil {
		return response{}, err
	}
	q := newQuery(req.URL.Query())
	end, hasEnd := q.timestamp("end_date")
	if !hasEnd {
		end = e.now
	}
	start, hasStart := q.timestamp("start_date")
	if !hasStart {
		start = end.AddDate(0, 0, -30)
	}
	interval := q.oneOf("interval", "day", "day", "week", "month")
	if start.After(end) {
		q.errs.add("must not be after end_date", "start_date")
	}
	step := statisticsIntervals[interval]
	bounds := buckets(start, end, step)
	if len(bounds) > maxBuckets {
		q.errs.add(fmt.Sprintf("the range holds more than %d intervals", maxBuckets), "interval")
	}
	if err := q.errs.orNil(); err != nil {
		return response{}, err
	}
	out := wireStatistics{
		Queries:  wireStatisticsQueries{StartDate: formatTime(start), EndDate: formatTime(end), Interval: interval},
		TimeData: []wireTimeData{},
	}
	all := dates(req.caller)
	for _, b := range bounds {
		bucket := count(all, b, step(b), start, end)
		out.Aggregates.Total += bucket.Value
		out.TimeData = append(out.TimeData, bucket)
	}
	return success(out), nil
}

// buckets are the starts of the intervals from start's day to end, one more than
// maxBuckets at most (which the caller refuses).
func buckets(start, end time.Time, step func(time.Time) time.Time) []time.Time {
	var bounds []time.Time
	for b := start.Truncate(24 * time.Hour); !b.After(end) && len(bounds) <= maxBuckets; b = step(b) {
		bounds = append(bounds, b)
	}
	return bounds
}

// count is the bucket [b, next) of the dates, within [start, end].
func count(dates []time.Time, b, next, start, end time.Time) wireTimeData {
	bucket := wireTimeData{Label: b.Format(time.DateOnly) + "/" + next.Format(time.DateOnly)}
	for _, d := range dates {
		if !d.Before(b) && d.Before(next) && !d.Before(start) && !d.After(end) {
			bucket.Value++
		}
	}
	return bucket
}

// transactionStatistics serves GET /partner/statistics/transactions/count: the partner's
// transactions by creation date.
func (e *Emulator) transactionStatistics(req *request) (response, error) {
	return e.statistics(req, func(partner *account) []time.Time {
		var ds []time.Time
		for _, tx := range e.partnerTransactionsMatching(partner, txFilter{}) {
			ds = append(ds, tx.created)
		}
		return ds
	})
}

// customerStatistics serves GET /partner/statistics/customers/count: the partner's
// customers by the date their account was created.
func (e *Emulator) customerStatistics(req *request) (response, error) {
	return e.statistics(req, func(partner *account) []time.Time {
		var ds []time.Time
		for _, a := range e.customersOf(partner) {
			ds = append(ds, a.created)
		}
		return ds
	})
}

// paymentsIn serves GET /partner/customer/{customer_id}/payments_in: the cards a customer
// funded the partner's transactions with.
func (e *Emulator) paymentsIn(req *request) (response, error) {
	return e.cardPayments(req, paidFromCard)
}

// paymentsOut serves GET /partner/customer/{customer_id}/payments_out: refunds to cards.
func (e *Emulator) paymentsOut(req *request) (response, error) {
	return e.cardPayments(req, refundedToCard)
}

// cardDirection is which way the card payments listed went, as cardPayment.out says.
type cardDirection bool

const (
	paidFromCard   cardDirection = false // the customer funded a transaction
	refundedToCard cardDirection = true  // a refund went back to the customer's card
)

// cardPayments lists a customer's card payments in the partner's transactions that went
// the given way.
func (e *Emulator) cardPayments(req *request, way cardDirection) (response, error) {
	if err := requirePartner(req); err != nil {
		return response{}, err
	}
	a, err := e.customerByRef(req.params["customer_id"], req.caller)
	if err != nil {
		return response{}, err
	}
	// Payments into the partner's own transactions are the partner's to see, whether or
	// not the customer is related to it.
	if a == req.caller || !e.partyOf(req.caller, a) {
		return response{}, notFound("no customer %d in your transactions", a.id)
	}
	list := wirePayments{Payments: []wireCardPayment{}}
	for _, p := range e.st.payments {
		if cardDirection(p.out) == way && e.partnerSeesPayment(req.caller, a, p) {
			list.Payments = append(list.Payments, cardPaymentView(a, p))
		}
	}
	return success(list), nil
}

// partnerSeesPayment reports whether partner sees a card payment as customer a's: one of
// a's, in the partner's transactions, where a is not concealed from the partner. A
// customer concealed (from a partner that is also the seller, say) keeps its payments to
// itself, as it keeps its amounts in the transaction.
func (e *Emulator) partnerSeesPayment(partner, a *account, p cardPayment) bool {
	tx := e.st.txs[p.tx]
	return p.customer == a.id && tx.hasRole(partner.id, rolePartner) && !(view{st: e.st, tx: tx, reader: partner.id}).hidden(a.id)
}

// cardPaymentView is a card payment of customer a as the API shows it. The emulator's
// cards are made up from the customer id: one card per customer.
func cardPaymentView(a *account, p cardPayment) wireCardPayment {
	return wireCardPayment{
		LastFour: fmt.Sprintf("%04d", a.id%10000), ExpirationMonth: 12, ExpirationYear: p.created.Year() + 3,
		Brand: "visa", CustomerID: a.id, TransactionID: p.tx, Amount: p.amount.String(), Date: formatTime(p.created),
	}
}

// createReport serves POST /partner/reports. The body takes the fields of the
// GET /partner/transactions query as JSON (lists as arrays). The report covers every
// matching transaction and is ready at once; the answer is the first page of them, as a
// cursored list, with the report's task_id.
func (e *Emulator) createReport(req *request) (response, error) {
	if err := requirePartner(req); err != nil {
		return response{}, err
	}
	o, err := decodeObject(req.body)
	if err != nil {
		return response{}, err
	}
	q := newQuery(url.Values{})
	for key, v := range o.fields {
		if !addQueryValue(q.values, key, v) {
			q.errs.add("must be a string, a number, a boolean or a list of them", key)
		}
	}
	f := parseTxFilter(q)
	if err := q.errs.orNil(); err != nil {
		return response{}, err
	}
	// Task ids are random, not counted: the download is the partner's alone, and a counted
	// id would let anyone guess the next one.
	r := &report{taskID: "report_" + strings.ToLower(rand.Text()), partner: req.caller.id, created: e.now}
	r.csv = e.reportCSV(req.caller, e.partnerTransactionsMatching(req.caller, f))
	e.st.reports = append(e.st.reports, r)
	out := e.transactionCursor(req.caller, f)
	out.TaskID = r.taskID
	return success(out), nil
}

// addQueryValue adds a JSON value to a query as text, reporting whether it could.
func addQueryValue(values url.Values, key string, v any) bool {
	switch v := v.(type) {
	case nil:
		return true
	case string:
		values.Add(key, v)
	case json.Number:
		values.Add(key, v.String())
	case bool:
		values.Add(key, strconv.FormatBool(v))
	case []any:
		return addQueryList(values, key, v)
	default:
		return false
	}
	return true
}

// addQueryList adds each element of a JSON list to a query as text, reporting whether it
// could: lists of lists cannot be written in a query.
func addQueryList(values url.Values, key string, list []any) bool {
	for _, el := range list {
		if _, nested := el.([]any); nested || !addQueryValue(values, key, el) {
			return false
		}
	}
	return true
}

// reportCSV writes a report: one line per transaction.
func (e *Emulator) reportCSV(partner *account, txs []*transaction) []byte {
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	w.Write([]string{"id", "reference", "currency", "description", "creation_date", "amount", "status"})
	for _, tx := range txs {
		w.Write([]string{strconv.FormatInt(tx.id, 10), tx.reference, tx.currency, tx.description, formatTime(tx.created), view{st: e.st, tx: tx, reader: partner.id}.amount().String(), tx.phase()})
	}
	w.Flush()
	return buf.Bytes()
}

func renderReport(r *report) wireReport {
	return wireReport{TaskID: r.taskID, Status: "completed", CreatedAt: formatTime(r.created), CompletedAt: formatTime(r.created)}
}

// partnerReports returns the reports the partner requested.
func (e *Emulator) partnerReports(partner *account) []*report {
	var out []*report
	for _, r := range e.st.reports {
		if r.partner == partner.id {
			out = append(out, r)
		}
	}
	return out
}

// listReports serves GET /partner/reports.
func (e *Emulator) listReports(req *request) (response, error) {
	if err := requirePartner(req); err != nil {
		return response{}, err
	}
	out := wireReports{Reports: []wireReport{}}
	for _, r := range e.partnerReports(req.caller) {
		out.Reports = append(out.Reports, renderReport(r))
	}
	return success(out), nil
}

// countReports serves GET /partner/reports/count.
func (e *Emulator) countReports(req *request) (response, error) {
	if err := requirePartner(req); err != nil {
		return response{}, err
	}
	return success(wireCount{Count: len(e.partnerReports(req.caller))}), nil
}

// downloadReport serves GET /partner/reports/{task_id}/download: with as_json=true a JSON
// body {"url": …}; otherwise a 302 redirect to that address, on the emulator's host.
func (e *Emulator) downloadReport(req *request) (response, error) {
	if err := requirePartner(req); err != nil {
		return response{}, err
	}
	q := newQuery(req.URL.Query())
	asJSON := q.boolean("as_json")
	if err := q.errs.orNil(); err != nil {
		return response{}, err
	}
	for _, r := range e.partnerReports(req.caller) {
		if r.taskID != req.params["task_id"] {
			continue
		}
		link := emulatorURL(req.Request, "/reports/"+r.taskID+".csv")
		if asJSON {
			return success(wireDownload{URL: link}), nil
		}
		return response{status: http.StatusFound, header: http.Header{"Location": {link}}}, nil
	}
	return response{}, notFound("no report %q", req.params["task_id"])
}
