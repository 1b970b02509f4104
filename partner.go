package escrow

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/escrowkit/escrow-go/internal/jsonbudget"
)

// PartnerService holds the endpoints only approved partners may call (spec part 4,
// "Partner endpoints").
//
//	GET  /partner/transactions                         Transactions, AllTransactions
//	GET  /partner/customers                            Customers, AllCustomers
//	GET  /partner/customer                             Customer
//	GET  /partner/statistics/transactions/count        TransactionStatistics
//	GET  /partner/statistics/customers/count           CustomerStatistics
//	GET  /partner/customer/{customer_id}/payments_in   PaymentsIn
//	GET  /partner/customer/{customer_id}/payments_out  PaymentsOut
//	GET  /partner/reports                              Reports
//	GET  /partner/reports/count                        ReportsCount
//	POST /partner/reports                              CreateReport
//	GET  /partner/reports/{task_id}/download           DownloadReport
//
// Where the spec says a shape is "not shown", the types below name the fields the
// escrowtest emulator uses and keep the whole document in a Raw field, so nothing the live
// API sends is lost.
type PartnerService service

// TransactionCursorList is one page of a cursored partner listing.
type TransactionCursorList struct {
	SortBy        SortField     `json:"sort_by"`
	SortDirection SortDirection `json:"sort_direction"`
	// NextCursor starts the next page; nil after the last.
	NextCursor   *int64        `json:"next_cursor"`
	Limit        *int          `json:"limit"`
	Transactions []Transaction `json:"transactions"`
}

// CustomerCursorList is one page of the partner's customers.
type CustomerCursorList struct {
	SortBy        SortField     `json:"sort_by"`
	SortDirection SortDirection `json:"sort_direction"`
	NextCursor    *int64        `json:"next_cursor"`
	Limit         *int          `json:"limit"`
	Customers     []Customer    `json:"customers"`
}

// PartnerTransactionsOptions filters GET /partner/transactions and is the body of
// [PartnerService.CreateReport]. Zero fields are not sent; with none set the API returns
// every transaction of the partner.
type PartnerTransactionsOptions struct {
	Limit         int               `url:"limit,omitempty" json:"limit,omitempty"`
	NextCursor    int64             `url:"next_cursor,omitempty" json:"next_cursor,omitempty"`
	SortBy        SortField         `url:"sort_by,omitempty" json:"sort_by,omitempty"`
	SortDirection SortDirection     `url:"sort_direction,omitempty" json:"sort_direction,omitempty"`
	Status        TransactionStatus `url:"status,omitempty" json:"status,omitempty"`
	IDs           []int64           `url:"ids,omitempty" json:"ids,omitempty"`
	CustomerIDs   []int64           `url:"customer_ids,omitempty" json:"customer_ids,omitempty"`
	MinAmount     *Amount           `url:"min_amount,omitempty" json:"min_amount,omitempty"`
	MaxAmount     *Amount           `url:"max_amount,omitempty" json:"max_amount,omitempty"`
	// Creation dates, inclusive.
	InitiationStartDate time.Time `url:"initiation_start_date,omitempty" json:"initiation_start_date,omitzero"`
	InitiationEndDate   time.Time `url:"initiation_end_date,omitempty" json:"initiation_end_date,omitzero"`
}

// PartnerCustomersOptions filters GET /partner/customers.
type PartnerCustomersOptions struct {
	Limit              int                `url:"limit,omitempty"`
	NextCursor         int64              `url:"next_cursor,omitempty"`
	SortBy             SortField          `url:"sort_by,omitempty"`
	SortDirection      SortDirection      `url:"sort_direction,omitempty"`
	IDs                []int64            `url:"ids,omitempty"`
	Country            string             `url:"country,omitempty"` // ISO 3166-1 alpha-2
	VerificationStatus VerificationStatus `url:"verification_status,omitempty"`
}

// PartnerCustomerOptions finds a customer of one of the partner's transactions, by party id
// or customer id.
type PartnerCustomerOptions struct {
	PartyID    int64 `url:"party_id,omitempty"`
	CustomerID int64 `url:"customer_id,omitempty"`
}

// StatisticsOptions narrows the statistics endpoints, whose query parameters the spec does
// not show: these are the ones escrowtest implements. Extra carries any other parameter
// as is.
type StatisticsOptions struct {
	StartDate time.Time  `url:"start_date,omitempty"`
	EndDate   time.Time  `url:"end_date,omitempty"`
	Interval  string     `url:"interval,omitempty"` // "day", "week" or "month"
	Extra     url.Values `url:"-"`
}

// extraQuery hands Extra to the request pipeline, which adds it to the encoded fields.
func (o *StatisticsOptions) extraQuery() url.Values { return o.Extra }

// Statistics is a count over time: the queries the API used, the counts per date range,
// and aggregates.
type Statistics struct {
	Queries    json.RawMessage           `json:"queries"`
	TimeData   []StatisticsCountTimeData `json:"time_data"`
	Aggregates json.RawMessage           `json:"aggregates"`
	// Raw is the whole document as the API sent it.
	Raw json.RawMessage `json:"-"`
}

// UnmarshalJSON keeps the whole document beside the typed fields.
func (s *Statistics) UnmarshalJSON(b []byte) error {
	type plain Statistics
	if err := json.Unmarshal(b, (*plain)(s)); err != nil {
		return err
	}
	s.Raw = append(json.RawMessage(nil), b...)
	return nil
}

// StatisticsCountTimeData is the count in one date range.
type StatisticsCountTimeData struct {
	Value int64  `json:"value"`
	Label string `json:"label"`
}

// CreditCard is a card payment a customer paid in with or was paid out to. The spec shows
// the card's fields; the payment's (TransactionID, Amount, Date) are those escrowtest sends.
type CreditCard struct {
	LastFour        string    `json:"last_four"`
	ExpirationMonth int       `json:"expiration_month"`
	ExpirationYear  int       `json:"expiration_year"`
	Brand           string    `json:"brand"`
	CustomerID      int64     `json:"customer_id"`
	TransactionID   int64     `json:"transaction_id,omitempty"`
	Amount          Amount    `json:"amount,omitzero"`
	Date            Timestamp `json:"date,omitzero"`
}

// CreditCards is the answer of the payments endpoints. It decodes a bare list, or an
// object holding one list, since the spec does not show which the API sends.
type CreditCards struct {
	Cards []CreditCard `json:"payments"`
	// Raw is the whole document as the API sent it.
	Raw json.RawMessage `json:"-"`
}

// UnmarshalJSON accepts [...] or an object holding the list, and keeps the whole document
// in Raw.
func (c *CreditCards) UnmarshalJSON(b []byte) error {
	return decodeList(b, &c.Cards, &c.Raw, "payments", "credit_cards", "cards")
}

// decodeList decodes into list a JSON list, or the list an object holds: under the first of
// keys present, else its only list member. raw, when not nil, keeps the whole document.
// It serves the answers whose spec says "a list of …" without showing the wrapping.
func decodeList[T any](b []byte, list *[]T, raw *json.RawMessage, keys ...string) error {
	inner, err := jsonbudget.TopLevelList(b, keys)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(inner, list); err != nil {
		return err
	}
	if raw != nil {
		*raw = append(json.RawMessage(nil), b...)
	}
	return nil
}

// Report is a report the partner requested.
type Report struct {
	TaskID      string    `json:"task_id"`
	Status      string    `json:"status"`
	CreatedAt   Timestamp `json:"created_at,omitzero"`
	CompletedAt Timestamp `json:"completed_at,omitzero"`
}

// Reports is the answer of [PartnerService.Reports].
type Reports struct {
	Reports []Report `json:"reports"`
	// Raw is the whole document as the API sent it.
	Raw json.RawMessage `json:"-"`
}

// UnmarshalJSON accepts a list of reports or an object holding one, and keeps the whole
// document in Raw.
func (r *Reports) UnmarshalJSON(b []byte) error {
	return decodeList(b, &r.Reports, &r.Raw, "reports")
}

// ReportsCount is the answer of [PartnerService.ReportsCount].
type ReportsCount struct {
	Count int64 `json:"count"`
}

// UnmarshalJSON accepts {"count": n} or a bare number.
func (c *ReportsCount) UnmarshalJSON(b []byte) error {
	if b = bytes.TrimSpace(b); len(b) > 0 && b[0] != '{' {
		return json.Unmarshal(b, &c.Count)
	}
	type plain ReportsCount
	return json.Unmarshal(b, (*plain)(c))
}

// CreatedReport is the answer of [PartnerService.CreateReport]: the spec gives it as a
// cursored transaction list; TaskID is set when the answer names the new report.
type CreatedReport struct {
	TransactionCursorList
	TaskID string `json:"task_id,omitempty"`
	// Raw is the whole document as the API sent it.
	Raw json.RawMessage `json:"-"`
}

// UnmarshalJSON keeps the whole document beside the typed fields.
func (r *CreatedReport) UnmarshalJSON(b []byte) error {
	type plain CreatedReport
	if err := json.Unmarshal(b, (*plain)(r)); err != nil {
		return err
	}
	r.Raw = append(json.RawMessage(nil), b...)
	return nil
}

// DownloadReportOptions shapes [PartnerService.DownloadReport].
type DownloadReportOptions struct {
	// AsJSON asks for the download address in a JSON body instead of a redirect.
	AsJSON bool `url:"as_json,omitempty"`
}

// ReportDownload is where a report can be fetched, or the report itself when the API sends
// it in the answer.
type ReportDownload struct {
	URL         string // the download address, from a redirect or a JSON answer
	Content     []byte // the report, when the answer is the report itself
	ContentType string
}

// decodeResponse reads whichever answer the endpoint gave: a redirect (not followed: the
// address may be on another host and must not receive our credentials), a JSON document
// holding the address, or the report.
func (d *ReportDownload) decodeResponse(resp *http.Response, body []byte) error {
	if loc := resp.Header.Get("Location"); resp.StatusCode >= 300 && resp.StatusCode < 400 && loc != "" {
		u, err := resp.Request.URL.Parse(loc)
		if err != nil {
			return fmt.Errorf("redirect to %q: %w", loc, err)
		}
		d.URL = u.String()
		return nil
	}
	d.ContentType = resp.Header.Get("Content-Type")
	if mt, _, _ := mime.ParseMediaType(d.ContentType); mt == "application/json" {
		return d.decodeJSON(body)
	}
	d.Content = keepBody(body)
	return nil
}

// decodeJSON reads the download address from a JSON answer, under any of the names it has
// been seen under; a document naming none is taken for the report itself.
func (d *ReportDownload) decodeJSON(body []byte) error {
	// Only these members are read: decoding the whole document into a map would cost
	// many times its size in memory (see limits.go).
	var doc struct {
		URL         json.RawMessage `json:"url"`
		DownloadURL json.RawMessage `json:"download_url"`
		Link        json.RawMessage `json:"link"`
		Location    json.RawMessage `json:"location"`
	}
	if err := json.Unmarshal(body, &doc); err != nil {
		return err
	}
	for _, raw := range []json.RawMessage{doc.URL, doc.DownloadURL, doc.Link, doc.Location} {
		var s string
		if json.Unmarshal(raw, &s) == nil && s != "" {
			d.URL = s
			return nil
		}
	}
	d.Content = keepBody(body)
	return nil
}

// Transactions returns one page of the partner's transactions.
func (s *PartnerService) Transactions(ctx context.Context, opt *PartnerTransactionsOptions, opts ...RequestOption) (*TransactionCursorList, error) {
	return fetch[TransactionCursorList](ctx, s.client, call{route: routePartnerTransactions, query: queryOrNil(opt), opts: opts})
}

// AllTransactions iterates over the partner's transactions, following next_cursor and
// asking for opt.Limit per page ([DefaultPageSize] when zero: without a limit the API
// answers every transaction in one page). It yields each transaction once, stops after the
// last page (a null cursor) or an empty one, at the first error (yielded once), or when the
// loop breaks; a cursor already followed, or a page of nothing but transactions already
// yielded, ends it with [ErrListingRepeats]. It fetches at most [DefaultMaxPages] pages, or
// what [MaxPages] says, and yields [ErrPageLimit] when that cuts the listing short. Each
// range starts afresh; the caller's options are not modified.
func (s *PartnerService) AllTransactions(ctx context.Context, opt *PartnerTransactionsOptions, opts ...RequestOption) iter.Seq2[*Transaction, error] {
	return followCursor(opt, func(page *PartnerTransactionsOptions, cursor int64) ([]Transaction, *int64, error) {
		page.NextCursor = cursor
		if page.Limit <= 0 {
			page.Limit = DefaultPageSize
		}
		list, err := s.Transactions(ctx, page, opts...)
		if err != nil {
			return nil, nil, err
		}
		return list.Transactions, list.NextCursor, nil
	}, func(o *PartnerTransactionsOptions) int64 { return o.NextCursor }, txIDOf, pageSizeOf(opt), opts)
}

// Customers returns one page of the partner's customers.
func (s *PartnerService) Customers(ctx context.Context, opt *PartnerCustomersOptions, opts ...RequestOption) (*CustomerCursorList, error) {
	return fetch[CustomerCursorList](ctx, s.client, call{route: routePartnerCustomers, query: queryOrNil(opt), opts: opts})
}

// AllCustomers iterates over the partner's customers as AllTransactions does, with the
// same default page size.
func (s *PartnerService) AllCustomers(ctx context.Context, opt *PartnerCustomersOptions, opts ...RequestOption) iter.Seq2[*Customer, error] {
	return followCursor(opt, func(page *PartnerCustomersOptions, cursor int64) ([]Customer, *int64, error) {
		page.NextCursor = cursor
		if page.Limit <= 0 {
			page.Limit = DefaultPageSize
		}
		list, err := s.Customers(ctx, page, opts...)
		if err != nil {
			return nil, nil, err
		}
		return list.Customers, list.NextCursor, nil
	}, func(o *PartnerCustomersOptions) int64 { return o.NextCursor }, func(c *Customer) int64 { return c.ID }, pageSizeOf(opt), opts)
}

// pageSizeOf is the limit a partner iterator asks for: the caller's, or DefaultPageSize.
func pageSizeOf[O PartnerTransactionsOptions | PartnerCustomersOptions](opt *O) int {
	size := 0
	switch o := any(opt).(type) {
	case *PartnerTransactionsOptions:
		if o != nil {
			size = o.Limit
		}
	case *PartnerCustomersOptions:
		if o != nil {
			size = o.Limit
		}
	}
	if size <= 0 {
		return DefaultPageSize
	}
	return size
}

// followCursor yields the elements of page after page. Each range copies the caller's
// options O and fetches each page with the cursor the previous one returned, until the
// cursor is null; a cursor already followed ends the walk with ErrListingRepeats.
func followCursor[O, T any](opt *O, fetchPage func(page *O, cursor int64) ([]T, *int64, error), start func(*O) int64, id func(*T) int64, pageSize int, opts []RequestOption) iter.Seq2[*T, error] {
	return func(yield func(*T, error) bool) {
		var page O
		if opt != nil {
			page = *opt
		}
		cursor := start(&page)
		followed := map[int64]bool{cursor: true}
		guard := newPageGuard(opts, pageSize) // see iterate.go
		for {
			items, next, err := fetchPage(&page, cursor)
			if err != nil {
				yield(nil, err)
				return
			}
			if !yieldPage(guard, items, id, yield) || next == nil {
				return
			}
			if followed[*next] {
				yield(nil, fmt.Errorf("%w (cursor %d again)", ErrListingRepeats, *next))
				return
			}
			if ok, err := guard.more(); !ok {
				yield(nil, err)
				return
			}
			followed[*next] = true
			cursor = *next
		}
	}
}

// Customer returns a customer of one of the partner's transactions.
func (s *PartnerService) Customer(ctx context.Context, lookup *PartnerCustomerOptions, opts ...RequestOption) (*Customer, error) {
	if lookup == nil || (lookup.PartyID == 0 && lookup.CustomerID == 0) {
		return nil, fmt.Errorf("%w: a PartyID or a CustomerID is required", ErrInvalidArgument)
	}
	return fetch[Customer](ctx, s.client, call{route: routePartnerCustomer, query: lookup, opts: opts})
}

// TransactionStatistics counts the partner's transactions over time.
func (s *PartnerService) TransactionStatistics(ctx context.Context, opt *StatisticsOptions, opts ...RequestOption) (*Statistics, error) {
	return fetch[Statistics](ctx, s.client, call{route: routeTransactionStatistics, query: queryOrNil(opt), opts: opts})
}

// CustomerStatistics counts the partner's customers over time.
func (s *PartnerService) CustomerStatistics(ctx context.Context, opt *StatisticsOptions, opts ...RequestOption) (*Statistics, error) {
	return fetch[Statistics](ctx, s.client, call{route: routeCustomerStatistics, query: queryOrNil(opt), opts: opts})
}

// PaymentsIn lists the card payments a customer paid in with.
func (s *PartnerService) PaymentsIn(ctx context.Context, customerID int64, opts ...RequestOption) (*CreditCards, error) {
	return fetch[CreditCards](ctx, s.client, call{route: routePaymentsIn, params: []any{customerID}, opts: opts})
}

// PaymentsOut lists the card payments a customer was paid out to.
func (s *PartnerService) PaymentsOut(ctx context.Context, customerID int64, opts ...RequestOption) (*CreditCards, error) {
	return fetch[CreditCards](ctx, s.client, call{route: routePaymentsOut, params: []any{customerID}, opts: opts})
}

// Reports lists the reports the partner has requested.
func (s *PartnerService) Reports(ctx context.Context, opts ...RequestOption) (*Reports, error) {
	return fetch[Reports](ctx, s.client, call{route: routeListReports, opts: opts})
}

// ReportsCount counts the reports the partner has requested.
func (s *PartnerService) ReportsCount(ctx context.Context, opts ...RequestOption) (*ReportsCount, error) {
	return fetch[ReportsCount](ctx, s.client, call{route: routeCountReports, opts: opts})
}

// CreateReport requests a report of the transactions matching the filter.
func (s *PartnerService) CreateReport(ctx context.Context, filter *PartnerTransactionsOptions, opts ...RequestOption) (*CreatedReport, error) {
	if filter == nil {
		filter = &PartnerTransactionsOptions{}
	}
	for _, a := range []*Amount{filter.MinAmount, filter.MaxAmount} {
		if a != nil && a.IsNegative() {
			return nil, fmt.Errorf("%w: %w: amount filter %s is negative", ErrInvalidArgument, ErrInvalidAmount, a)
		}
	}
	return fetch[CreatedReport](ctx, s.client, call{route: routeCreateReport, body: filter, opts: opts})
}

// DownloadReport returns where to fetch a report, or the report itself. A redirect is
// reported, not followed.
func (s *PartnerService) DownloadReport(ctx context.Context, taskID string, opt *DownloadReportOptions, opts ...RequestOption) (*ReportDownload, error) {
	if strings.TrimSpace(taskID) == "" {
		return nil, fmt.Errorf("%w: empty report task id", ErrInvalidArgument)
	}
	return fetch[ReportDownload](ctx, s.client, call{route: routeDownloadReport, params: []any{taskID}, query: queryOrNil(opt), keepRedirect: true, opts: opts})
}
