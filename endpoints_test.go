package escrow

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"reflect"
	"strings"
	"testing"
	"time"
)

// endpointCase is one call of the SDK and everything the wire must show of it.
type endpointCase struct {
	name   string
	call   func(ctx context.Context, c *Client) (any, error)
	method string
	path   string     // escaped, relative to the base URL's path
	query  url.Values // the whole query, parsed; nil: no query at all
	// rawQuery holds substrings the encoded query must contain, for the forms a parsed
	// comparison cannot see (repeated list parameters, two-decimal amounts).
	rawQuery []string
	header   map[string]string // headers the request must carry; As-Customer is absent unless named
	// request is the golden body under testdata/requests/; "" means the request has no body.
	request string
	status  int    // the answer's status; 0 means 200
	answer  string // the response document under testdata/responses/; "" answers with no body
	check   func(t *testing.T, got any)
}

// TestEndpoints calls every endpoint method of the four services against a mock server and
// checks the request on the wire and the decoded answer.
func TestEndpoints(t *testing.T) {
	for _, tt := range endpointCases() {
		t.Run(tt.name, func(t *testing.T) {
			c, mt := setup(t)
			var rec recorder
			status := tt.status
			if status == 0 {
				status = http.StatusOK
			}
			body := ""
			if tt.answer != "" {
				body = readTestdata(t, "responses/"+tt.answer)
			}
			// Every request is answered and recorded; exactly one must arrive, with the
			// row's method, exact escaped path and whole query (checked below): stricter
			// than httpmock's routes, which also match a URL stripped of its query.
			mt.RegisterNoResponder(rec.then(respond(status, body)))

			got, err := tt.call(context.Background(), c)
			if err != nil {
				t.Fatalf("call: %v", err)
			}
			reqs := rec.all()
			if len(reqs) != 1 {
				t.Fatalf("%d requests sent, want 1", len(reqs))
			}
			r := reqs[0]
			if r.Method != tt.method {
				t.Errorf("method = %s, want %s", r.Method, tt.method)
			}
			if want := "/2017-09-01/" + tt.path; r.EscapedPath != want {
				t.Errorf("path = %s, want %s", r.EscapedPath, want)
			}
			// The endpoint table (endpoints.go) lists what the client calls: rate limits
			// and Client.Do count by its rows.
			row, ok := matchRoute(r.Method, strings.TrimPrefix(r.EscapedPath, "/2017-09-01/"))
			if !ok {
				t.Errorf("%s %s is no row of the endpoint table", r.Method, r.EscapedPath)
			}
			// The method counts its rate limit under the row's name, so that Client.Do on
			// the same path shares the allowance.
			c.limits.mu.Lock()
			for endpoint := range c.limits.byEndpoint {
				if want := row.String(); endpoint != want {
					t.Errorf("rate limit counted under %q, want the table's %q", endpoint, want)
				}
			}
			c.limits.mu.Unlock()
			checkQuery(t, r.RawQuery, tt.query, tt.rawQuery)
			if r.Header.Get("Authorization") != "Basic "+basicToken(testEmail, testKey) {
				t.Error("no credentials on the request")
			}
			if _, ok := tt.header["As-Customer"]; !ok && r.Header.Get("As-Customer") != "" {
				t.Errorf("As-Customer = %q on a call without AsCustomer", r.Header.Get("As-Customer"))
			}
			for k, want := range tt.header {
				if got := r.Header.Get(k); got != want {
					t.Errorf("header %s = %q, want %q", k, got, want)
				}
			}
			if tt.request == "" {
				if len(r.Body) != 0 || r.Header.Get("Content-Type") != "" {
					t.Errorf("a request without a body sent %q (Content-Type %q)", r.Body, r.Header.Get("Content-Type"))
				}
			} else {
				if ct := r.Header.Get("Content-Type"); ct != "application/json" {
					t.Errorf("Content-Type = %q", ct)
				}
				golden(t, "requests/"+tt.request, r.Body)
			}
			tt.check(t, got)
		})
	}
}

// checkQuery compares a sent query with the expected parameters, ignoring their order.
func checkQuery(t *testing.T, raw string, want url.Values, substrings []string) {
	t.Helper()
	if want == nil {
		if raw != "" {
			t.Errorf("query = %q, want none", raw)
		}
		return
	}
	got, err := url.ParseQuery(raw)
	if err != nil {
		t.Fatalf("query %q: %v", raw, err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("query = %v\nwant    %v", got, want)
	}
	for _, s := range substrings {
		if !strings.Contains("&"+raw+"&", "&"+s+"&") {
			t.Errorf("query %q does not contain %q", raw, s)
		}
	}
}

// as returns got as a T or fails the test.
func as[T any](t *testing.T, got any) T {
	t.Helper()
	v, ok := got.(T)
	if !ok {
		t.Fatalf("result is %T, want %T", got, v)
	}
	return v
}

// amt fails the test unless a decoded amount reads want ("1000.00").
func amt(t *testing.T, what string, a Amount, want string) {
	t.Helper()
	if a.String() != want {
		t.Errorf("%s = %s, want %s", what, a.String(), want)
	}
}

// at fails the test unless a decoded timestamp is the instant want.
func at(t *testing.T, what string, ts Timestamp, want time.Time) {
	t.Helper()
	if !ts.Equal(want) {
		t.Errorf("%s = %v (from %q), want %v", what, ts.Time, ts.Raw(), want)
	}
}

func utc(y int, mo time.Month, d, h, mi, s, ns int) time.Time {
	return time.Date(y, mo, d, h, mi, s, ns, time.UTC)
}

func endpointCases() []endpointCase {
	hiddenFromSeller := &Visibility{HiddenFrom: []string{"dev@studio.example"}}
	halfEach := []FeeInput{
		{Type: FeeEscrow, PayerCustomer: "me", Split: SplitHalf},
		{Type: FeeEscrow, PayerCustomer: "dev@studio.example", Split: SplitHalf},
	}
	pacific := time.FixedZone("PDT", -7*3600)
	sydney := time.FixedZone("AEST", 10*3600)
	tracking := &ShippingInformation{TrackingInformation: &TrackingInformation{Carrier: "DHL", TrackingID: "JD0146", CarrierContact: "+49 228 1820"}}
	updated := func(t *testing.T, got any) { checkUpdatedTransaction(t, as[*Transaction](t, got)) }
	buyer := map[string]string{"As-Customer": "buyer@shop.example"}
	seller := map[string]string{"As-Customer": "dev@studio.example"}

	return []endpointCase{
		// ---- TransactionsService ----
		{
			name: "create_transaction_milestone",
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.Transactions.Create(ctx, &CreateTransactionRequest{
					Currency: USD, Description: "Website redesign in two milestones", Reference: "acme/7781",
					Parties: []PartyInput{
						{Role: RoleBuyer, Customer: "me", Visibility: hiddenFromSeller},
						{Role: RoleSeller, Customer: "dev@studio.example"},
						{Role: RoleBroker, Customer: "broker@agency.example"},
					},
					Items: []ItemInput{
						{
							Title: "Design", Description: "Wireframes and mock-ups", Type: ItemMilestone,
							Category: CategoryBusinessAndInternet, InspectionPeriod: Days(1), Quantity: 1, Fees: halfEach,
							Schedule: []ScheduleInput{{Amount: MustAmount("1000"), PayerCustomer: "me", BeneficiaryCustomer: "dev@studio.example",
								DueDate: Timestamp{Time: utc(2024, 6, 1, 0, 0, 0, 0)}}},
						},
						{
							Title: "Build", Description: "Implementation and launch", Type: ItemMilestone,
							Category: CategoryBusinessAndInternet, InspectionPeriod: Days(1), Quantity: 1, Fees: halfEach,
							Schedule: []ScheduleInput{{Amount: MustAmount("2500.5"), PayerCustomer: "me", BeneficiaryCustomer: "dev@studio.example",
								DueDate: Timestamp{Time: time.Date(2024, 7, 15, 17, 30, 0, 0, pacific)}}},
						},
						{Type: ItemBrokerFee, Visibility: hiddenFromSeller, Schedule: []ScheduleInput{
							{Amount: MustAmount("150"), PayerCustomer: "me", BeneficiaryCustomer: "broker@agency.example"}}},
						{Type: ItemBrokerFee, Visibility: hiddenFromSeller, Schedule: []ScheduleInput{
							{Amount: MustAmount("75.25"), PayerCustomer: "dev@studio.example", BeneficiaryCustomer: "broker@agency.example"}}},
					},
				})
			},
			method: "POST", path: "transaction", request: "create_transaction_milestone.json",
			status: http.StatusCreated, answer: "transaction.json",
			check: func(t *testing.T, got any) { checkMilestoneTransaction(t, as[*Transaction](t, got)) },
		},
		{
			name: "create_transaction_domain",
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.Transactions.Create(ctx, &CreateTransactionRequest{
					Currency: EUR, Description: "example.net with its content", Reference: "dom-3",
					Parties: []PartyInput{{Role: RoleBuyer, Customer: "me"}, {Role: RoleSeller, Customer: "owner@domains.example"}},
					Items: []ItemInput{{
						Title: "example.net", Description: "Domain with its website", Type: ItemDomainName,
						Category: CategoryBusinessAndInternet, InspectionPeriod: Days(3), Quantity: 1,
						ExtraAttributes: &ExtraAttributes{WithContent: true},
						Schedule:        []ScheduleInput{{Amount: MustAmount("1000.00"), PayerCustomer: "me", BeneficiaryCustomer: "owner@domains.example"}},
						Fees: []FeeInput{
							{Type: FeeEscrow, PayerCustomer: "me", Split: SplitWhole},
							{Type: FeeCreditCardDeposit, PayerCustomer: "me"},
							{Type: FeeWireDisbursement, PayerCustomer: "owner@domains.example"},
						},
					}},
				})
			},
			method: "POST", path: "transaction", request: "create_transaction_domain.json",
			status: http.StatusCreated, answer: "transaction_domain.json",
			check: func(t *testing.T, got any) {
				tx := as[*Transaction](t, got)
				if tx.ID != 48017 || tx.Currency != EUR || !tx.IsDraft || tx.Reference != "dom-3" {
					t.Errorf("transaction = %+v", tx)
				}
				at(t, "creation_date", tx.CreationDate, utc(2024, 5, 6, 22, 1, 2, 1000))
				it := tx.Items[0]
				if it.Type != ItemDomainName || !it.ExtraAttributes.WithContent || it.InspectionPeriod != Days(3) {
					t.Errorf("item = %+v", it)
				}
				if f := it.Fees; len(f) != 3 || f[0].Split != SplitWhole || f[1].Type != FeeCreditCardDeposit || f[2].Type != FeeWireDisbursement ||
					f[2].PayerCustomer != "owner@domains.example" {
					t.Errorf("fees = %+v", f)
				}
				amt(t, "escrow fee", it.Fees[0].Amount, "32.50")
				amt(t, "wire fee", it.Fees[2].Amount, "25.00")
			},
		},
		{
			name: "create_transaction_domain_holding",
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.Transactions.Create(ctx, &CreateTransactionRequest{
					Currency: USD, Description: "premium.example held until paid in full",
					Parties: []PartyInput{{Role: RoleBuyer, Customer: "me"}, {Role: RoleSeller, Customer: "owner@domains.example"}},
					Items: []ItemInput{{
						Title: "premium.example", Type: ItemDomainNameHolding, InspectionPeriod: Days(3), Quantity: 1,
						Schedule: []ScheduleInput{
							{Amount: MustAmount("5000"), PayerCustomer: "me", BeneficiaryCustomer: "owner@domains.example", DueDate: Timestamp{Time: utc(2024, 6, 1, 0, 0, 0, 0)}},
							{Amount: MustAmount("5000"), PayerCustomer: "me", BeneficiaryCustomer: "owner@domains.example", DueDate: Timestamp{Time: time.Date(2024, 7, 1, 10, 0, 0, 0, sydney)}},
						},
					}},
				})
			},
			method: "POST", path: "transaction", request: "create_transaction_domain_holding.json",
			status: http.StatusCreated, answer: "transaction_domain_holding.json",
			check: func(t *testing.T, got any) {
				tx := as[*Transaction](t, got)
				s := tx.Items[0].Schedule
				if tx.ID != 48018 || tx.Items[0].Type != ItemDomainNameHolding || len(s) != 2 {
					t.Fatalf("transaction = %+v", tx)
				}
				at(t, "due_date 1", s[0].DueDate, utc(2024, 6, 1, 0, 0, 0, 0))
				at(t, "due_date 2 (no offset)", s[1].DueDate, utc(2024, 7, 1, 0, 0, 0, 0))
				amt(t, "schedule 2", s[1].Amount, "5000.00")
				amt(t, "fee", tx.Items[0].Fees[0].Amount, "162.50")
			},
		},
		{
			name: "list_transactions",
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.Transactions.List(ctx, &ListTransactionsOptions{Page: 2, PerPage: 2, SortBy: "id", SortDirection: SortAsc})
			},
			method: "GET", path: "transaction",
			query:  url.Values{"page": {"2"}, "per_page": {"2"}, "sort_by": {"id"}, "sort_direction": {"asc"}},
			answer: "transaction_list.json",
			check: func(t *testing.T, got any) {
				l := as[*TransactionList](t, got)
				if l.Page != 2 || l.PageCount != 3 || l.PerPage != 2 || len(l.Transactions) != 2 {
					t.Fatalf("list = %+v", l)
				}
				second := l.Transactions[1]
				if second.ID != 48002 || second.Currency != AUD || !second.IsCancelled || second.Items[0].Type != ItemGeneralMerchandise {
					t.Errorf("second = %+v", second)
				}
				at(t, "creation_date without offset", second.CreationDate, utc(2024, 4, 30, 23, 59, 59, 0))
				amt(t, "schedule", second.Items[0].Schedule[0].Amount, "780.05")
			},
		},
		{
			name:   "list_transactions_defaults",
			call:   func(ctx context.Context, c *Client) (any, error) { return c.Transactions.List(ctx, nil) },
			method: "GET", path: "transaction", answer: "transaction_list.json",
			check: func(t *testing.T, got any) {
				if l := as[*TransactionList](t, got); l.Transactions[0].ID != 48016 {
					t.Errorf("list = %+v", l)
				}
			},
		},
		{
			name:   "get_transaction",
			call:   func(ctx context.Context, c *Client) (any, error) { return c.Transactions.Get(ctx, 48016) },
			method: "GET", path: "transaction/48016", answer: "transaction.json",
			check: func(t *testing.T, got any) { checkMilestoneTransaction(t, as[*Transaction](t, got)) },
		},
		{
			name: "get_transaction_by_reference",
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.Transactions.GetByReference(ctx, "acme/7781")
			},
			method: "GET", path: "transaction/reference/acme%2F7781", answer: "transaction.json",
			check: func(t *testing.T, got any) { checkMilestoneTransaction(t, as[*Transaction](t, got)) },
		},
		{
			name: "act",
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.Transactions.Act(ctx, 48016, &ActionRequest{Action: ActionShip, ShippingInformation: tracking})
			},
			method: "PATCH", path: "transaction/48016", request: "act.json", answer: "transaction_updated.json", check: updated,
		},
		{
			name: "agree",
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.Transactions.Agree(ctx, 48016, AsCustomer("buyer@shop.example"))
			},
			method: "PATCH", path: "transaction/48016", header: buyer, request: "agree.json", answer: "transaction_updated.json", check: updated,
		},
		{
			name: "ship",
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.Transactions.Ship(ctx, 48016, tracking, AsCustomer("dev@studio.example"))
			},
			method: "PATCH", path: "transaction/48016", header: seller, request: "ship.json", answer: "transaction_updated.json", check: updated,
		},
		{
			name:   "receive",
			call:   func(ctx context.Context, c *Client) (any, error) { return c.Transactions.Receive(ctx, 48016) },
			method: "PATCH", path: "transaction/48016", request: "receive.json", answer: "transaction_updated.json", check: updated,
		},
		{
			name:   "accept",
			call:   func(ctx context.Context, c *Client) (any, error) { return c.Transactions.Accept(ctx, 48016) },
			method: "PATCH", path: "transaction/48016", request: "accept.json", answer: "transaction_updated.json", check: updated,
		},
		{
			name:   "reject",
			call:   func(ctx context.Context, c *Client) (any, error) { return c.Transactions.Reject(ctx, 48016) },
			method: "PATCH", path: "transaction/48016", request: "reject.json", answer: "transaction_updated.json", check: updated,
		},
		{
			name: "ship_return",
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.Transactions.ShipReturn(ctx, 48016, &ShippingInformation{TrackingInformation: &TrackingInformation{Carrier: "USPS", TrackingID: "9400 1000"}})
			},
			method: "PATCH", path: "transaction/48016", request: "ship_return.json", answer: "transaction_updated.json", check: updated,
		},
		{
			name:   "receive_return",
			call:   func(ctx context.Context, c *Client) (any, error) { return c.Transactions.ReceiveReturn(ctx, 48016) },
			method: "PATCH", path: "transaction/48016", request: "receive_return.json", answer: "transaction_updated.json", check: updated,
		},
		{
			name:   "accept_return",
			call:   func(ctx context.Context, c *Client) (any, error) { return c.Transactions.AcceptReturn(ctx, 48016) },
			method: "PATCH", path: "transaction/48016", request: "accept_return.json", answer: "transaction_updated.json", check: updated,
		},
		{
			name:   "reject_return",
			call:   func(ctx context.Context, c *Client) (any, error) { return c.Transactions.RejectReturn(ctx, 48016) },
			method: "PATCH", path: "transaction/48016", request: "reject_return.json", answer: "transaction_updated.json", check: updated,
		},
		{
			name: "cancel",
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.Transactions.Cancel(ctx, 48016, "Buyer found another studio")
			},
			method: "PATCH", path: "transaction/48016", request: "cancel.json", answer: "transaction_updated.json", check: updated,
		},
		{
			name: "act_on_item",
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.Transactions.ActOnItem(ctx, 48016, 7001, &ActionRequest{Action: ActionShip,
					ShippingInformation: &ShippingInformation{AuthorizationType: AuthorizationUsernamePassword}}, AsCustomer("dev@studio.example"))
			},
			method: "PATCH", path: "transaction/48016/item/7001", header: seller, request: "act_on_item.json",
			answer: "transaction_updated.json", check: updated,
		},
		{
			name: "timeline_entries",
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.Transactions.ListTimelineEntries(ctx, 48016)
			},
			method: "GET", path: "transaction/48016/timeline-entries", answer: "timeline.json",
			check: func(t *testing.T, got any) {
				tl := as[*Timeline](t, got)
				if len(tl.Entries) != 3 {
					t.Fatalf("entries = %+v", tl.Entries)
				}
				e := tl.Entries
				if e[0].Event != EventCreate || e[1].Event != EventShip || e[1].ItemID != 7001 || e[2].Event != "milestone_extended" || e[2].Message != "Due date moved" {
					t.Errorf("entries = %+v", e)
				}
				if e[0].ID != 1 || e[1].ID != 2 || e[2].ID != 0 || e[1].EventType != EventTypeTransaction || e[0].Customer != "me" || e[1].Customer != "dev@studio.example" {
					t.Errorf("ids, types and customers = %+v", e)
				}
				at(t, "entry 0", e[0].Date, utc(2024, 5, 5, 23, 15, 2, 123456000))
				at(t, "entry 1 (no offset)", e[1].Date, utc(2024, 5, 20, 8, 0, 0, 0))
				at(t, "entry 2", e[2].Date, utc(2024, 5, 21, 10, 0, 0, 500000000))
				if !strings.Contains(string(tl.Raw), `"actor": "dev@studio.example"`) || !strings.Contains(string(tl.Raw), `"count": 3`) {
					t.Errorf("Raw does not keep the document: %s", tl.Raw)
				}
			},
		},
		{
			name: "transaction_disbursement_methods",
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.Transactions.GetDisbursementMethods(ctx, 48016)
			},
			method: "GET", path: "transaction/48016/disbursement_methods", answer: "transaction_disbursement_methods.json",
			check: func(t *testing.T, got any) {
				dm := as[*DisbursementMethods](t, got)
				a := dm.AvailableDisbursementMethods
				if len(a) != 3 || a[0].Type != "ach" || a[2].Type != "crypto_wallet" || a[2].Currency != USD {
					t.Fatalf("available = %+v", a)
				}
				amt(t, "ach total (number)", a[0].Total, "3475.25")
				amt(t, "wire total (number 3450.0)", a[1].Total, "3450.00")
				amt(t, "crypto total (string)", a[2].Total, "3460.00")
				if dm.SelectedDisbursementMethod != nil {
					t.Errorf("selected = %+v, want nil", dm.SelectedDisbursementMethod)
				}
				s := dm.SavedDisbursementMethods
				if len(s) != 1 || s[0].ID != 31 || s[0].Type != DisbursementACH || s[0].AccountType != "savings" ||
					s[0].BankABARoutingNumber != "021000021" || s[0].BankAddress == nil || s[0].BankAddress.PostCode != "10001" {
					t.Errorf("saved = %+v", s)
				}
				if !reflect.DeepEqual(dm.AvailableCurrencies, []Currency{USD, "gbp"}) {
					t.Errorf("currencies = %v", dm.AvailableCurrencies)
				}
			},
		},
		{
			name: "select_disbursement_method",
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.Transactions.SelectDisbursementMethod(ctx, 48016, &DisbursementMethod{ID: 31})
			},
			method: "PATCH", path: "transaction/48016/disbursement_methods", request: "select_disbursement_method.json",
			answer: "transaction_disbursement_selected.json",
			check: func(t *testing.T, got any) {
				dm := as[*DisbursementMethods](t, got)
				if sel := dm.SelectedDisbursementMethod; sel == nil || sel.ID != 31 || sel.Type != DisbursementACH || sel.BankAccountNumber != "****6789" {
					t.Errorf("selected = %+v", sel)
				}
				amt(t, "wire total", dm.AvailableDisbursementMethods[1].Total, "3450.00")
			},
		},
		{
			name: "select_disbursement_method_details",
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.Transactions.SelectDisbursementMethod(ctx, 48016, &DisbursementMethod{
					Type: DisbursementWireTransferInternational, Currency: USD, AccountName: "Studio Ltd",
					BankIBAN: "GB33BUKB20201555555555", BankSwiftCode: "BUKBGB22", BankName: "Barclays",
					BankSortCode: "202015", ClearingSystemCode: ClearingGBDSC,
					BankAddress:        &Address{Line1: "1 Churchill Place", City: "London", Country: "GB", PostCode: "E14 5HP"},
					BeneficiaryAddress: &Address{Line1: "8 Shoreditch High St", City: "London", Country: "GB", PostCode: "E1 6JE"},
					IntermediaryBank: &IntermediaryBank{BankName: "Citibank", BankSwiftCode: "CITIUS33", ClearingSystemCode: ClearingUSABA,
						BankABARoutingNumber: "021000089"},
				})
			},
			method: "PATCH", path: "transaction/48016/disbursement_methods", request: "select_disbursement_method_details.json",
			answer: "transaction_disbursement_added.json",
			check: func(t *testing.T, got any) {
				dm := as[*DisbursementMethods](t, got)
				sel := dm.SelectedDisbursementMethod
				if sel == nil || sel.ID != 32 || sel.Type != DisbursementWireTransferInternational || sel.ClearingSystemCode != ClearingGBDSC ||
					sel.IntermediaryBank == nil || sel.IntermediaryBank.BankSwiftCode != "CITIUS33" || sel.IntermediaryBank.ClearingSystemCode != ClearingUSABA {
					t.Errorf("selected = %+v", sel)
				}
				amt(t, "total", dm.AvailableDisbursementMethods[0].Total, "3425.00")
			},
		},
		{
			name: "payment_methods",
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.Transactions.GetPaymentMethods(ctx, 48016, AsCustomer("buyer@shop.example"))
			},
			method: "GET", path: "transaction/48016/payment_methods", header: buyer, answer: "payment_methods.json",
			check: func(t *testing.T, got any) {
				pm := as[*PaymentMethods](t, got)
				a := pm.AvailablePaymentMethods
				if len(a) != 4 || a[0].Type != PaymentWireTransfer || a[0].Currency != USD || a[1].Type != PaymentCreditCard || a[3].Type != "open_banking" {
					t.Fatalf("available = %+v", a)
				}
				amt(t, "wire total (3650.5)", a[0].Total, "3650.50")
				amt(t, "card total (3760.0)", a[1].Total, "3760.00")
				amt(t, "paypal total", a[2].Total, "3741.02")
				amt(t, "string total", a[3].Total, "3655.00")
				cond := pm.ConditionallyAvailablePaymentMethods
				if len(cond) != 1 || cond[0].Type != PaymentInternationalWireTransfer ||
					!reflect.DeepEqual(cond[0].Conditions, []string{"verification_required", "limit_review"}) {
					t.Errorf("conditional = %+v", cond)
				}
				amt(t, "conditional total", cond[0].Total, "3670.00")
				amt(t, "total_without_payment_fee", pm.TotalWithoutPaymentFee, "3650.50")
			},
		},
		{
			name: "choose_payment_method",
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.Transactions.ChoosePaymentMethod(ctx, 48016, PaymentCreditCard,
					&ChoosePaymentMethodRequest{ReturnURL: "https://shop.example/orders/7781?paid=1"}, AsCustomer("buyer@shop.example"))
			},
			method: "POST", path: "transaction/48016/payment_methods/credit_card", header: buyer,
			request: "choose_payment_method.json", answer: "landing_page.json",
			check: func(t *testing.T, got any) {
				if lp := as[*LandingPage](t, got); lp.LandingPage != "https://www.escrow.com/checkout?tid=48016&token=3f9a" {
					t.Errorf("landing page = %q", lp.LandingPage)
				}
			},
		},
		{
			name: "choose_payment_method_without_input",
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.Transactions.ChoosePaymentMethod(ctx, 48016, PaymentPaypal, nil)
			},
			method: "POST", path: "transaction/48016/payment_methods/paypal",
			request: "choose_payment_method_without_input.json", answer: "landing_page.json",
			check: func(t *testing.T, got any) {
				if lp := as[*LandingPage](t, got); !strings.HasPrefix(lp.LandingPage, "https://www.escrow.com/checkout") {
					t.Errorf("landing page = %q", lp.LandingPage)
				}
			},
		},
		{
			name: "wire_transfer_details",
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.Transactions.GetWireTransferDetails(ctx, 48016)
			},
			method: "GET", path: "transaction/48016/payment_methods/wire_transfer", answer: "wire_transfer_details.json",
			check: func(t *testing.T, got any) {
				w := as[*WireTransferDetails](t, got)
				want := WireTransferDetails{
					BankName: "Bank of the West", BankAddress: "180 Montgomery Street, San Francisco, CA 94104, USA",
					StructuredBankAddress: &Address{Line1: "180 Montgomery Street", City: "San Francisco", State: "CA", Country: "US", PostCode: "94104"},
					RoutingNumber:         "121100782", SwiftCode: "BWSTUS66", CreditAccountName: "Internet Escrow Services",
					CreditAccountNumber: "8001234567", AdditionalInstructions: "Include transaction 48016 in the memo",
				}
				if !reflect.DeepEqual(*w, want) {
					t.Errorf("details = %+v\nwant %+v", *w, want)
				}
			},
		},
		{
			name:   "mark_wire_sent",
			call:   func(ctx context.Context, c *Client) (any, error) { return c.Transactions.MarkWireSent(ctx, 48016) },
			method: "POST", path: "transaction/48016/payment_methods/wire_transfer", answer: "mark_wire_sent.json",
			check: func(t *testing.T, got any) {
				raw := as[*WireSent](t, got).Raw
				var doc struct {
					Status string `json:"status"`
					Amount Amount `json:"amount"`
				}
				if err := json.Unmarshal(raw, &doc); err != nil || doc.Status != "wire_sent" || doc.Amount.String() != "3650.50" {
					t.Errorf("raw answer %s: %+v, %v", raw, doc, err)
				}
			},
		},
		{
			name: "web_link",
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.Transactions.GetWebLink(ctx, 48016, "agree")
			},
			method: "GET", path: "transaction/48016/web_link/agree", answer: "web_link.json",
			check: func(t *testing.T, got any) {
				if lp := as[*LandingPage](t, got); lp.LandingPage != "https://www.escrow.com/transaction/48016/agree?token=77ab" {
					t.Errorf("landing page = %q", lp.LandingPage)
				}
			},
		},
		{
			name: "web_link_escaped_action",
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.Transactions.GetWebLink(ctx, 48016, "pay now/?x")
			},
			method: "GET", path: "transaction/48016/web_link/pay%20now%2F%3Fx", answer: "web_link.json",
			check: func(t *testing.T, got any) {
				if lp := as[*LandingPage](t, got); lp.LandingPage == "" {
					t.Error("no landing page")
				}
			},
		},
		{
			name: "item_web_link",
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.Transactions.GetItemWebLink(ctx, 48016, 7002, "receive")
			},
			method: "GET", path: "transaction/48016/item/7002/web_link/receive", answer: "item_web_link.json",
			check: func(t *testing.T, got any) {
				if lp := as[*LandingPage](t, got); lp.LandingPage != "https://www.escrow.com/transaction/48016/item/7002/receive?token=c0de" {
					t.Errorf("landing page = %q", lp.LandingPage)
				}
			},
		},

		// ---- CustomersService ----
		{
			name:   "get_customer_me",
			call:   func(ctx context.Context, c *Client) (any, error) { return c.Customers.Get(ctx, Me) },
			method: "GET", path: "customer/me", answer: "customer.json",
			check: func(t *testing.T, got any) { checkCustomer(t, as[*Customer](t, got)) },
		},
		{
			name:   "get_customer_id",
			call:   func(ctx context.Context, c *Client) (any, error) { return c.Customers.Get(ctx, CustomerID(8)) },
			method: "GET", path: "customer/8", answer: "customer.json",
			check: func(t *testing.T, got any) { checkCustomer(t, as[*Customer](t, got)) },
		},
		{
			name: "update_customer_me",
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.Customers.Update(ctx, Me, &UpdateCustomerRequest{
					LastName: "Okafor-Reyes", PhoneNumber: "+1 415 555 0199",
					Address: &Address{Line1: "501 Market St", City: "San Francisco", State: "CA", Country: "US", PostCode: "94105"},
					IdentificationDocuments: []IdentificationDocument{
						{Type: "passport", Field: "passport_number", Value: "X1234567", Country: "US"},
						{Type: "drivers_license", Value: "D7654321", Country: "US", DateRemovedUTC: Timestamp{Time: utc(2024, 1, 2, 0, 0, 0, 0)}},
					},
				})
			},
			method: "PATCH", path: "customer/me", request: "update_customer.json", answer: "customer_updated.json",
			check: checkUpdatedCustomer,
		},
		{
			name: "update_customer_id",
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.Customers.Update(ctx, CustomerID(8), &UpdateCustomerRequest{FirstName: "Dana"}, AsCustomer("dana@studio.example"))
			},
			method: "PATCH", path: "customer/8", request: "update_customer_name.json", answer: "customer_updated.json",
			header: map[string]string{"As-Customer": "dana@studio.example"},
			check:  checkUpdatedCustomer,
		},
		{
			name: "create_customer",
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.Customers.Create(ctx, &CreateCustomerRequest{
					Email: "lee.nguyen@shop.example", FirstName: "Lee", MiddleName: "Minh", LastName: "Nguyen",
					PhoneNumber: "+61 2 9000 0000",
					Address:     &Address{Line1: "10 George St", City: "Sydney", State: "NSW", Country: "AU", PostCode: "2000"},
					DisbursementMethods: []DisbursementMethod{{
						Type: DisbursementWireTransfer, Currency: AUD, AccountName: "Lee Nguyen", BankAccountNumber: "12345678",
						BankSwiftCode: "CTBAAU2S", BankName: "Commonwealth Bank", ClearingSystemCode: ClearingAUBSB, BankBranchNumber: "062000",
						BankAddress:        &Address{Line1: "1 Harbour St", City: "Sydney", State: "NSW", Country: "AU", PostCode: "2000"},
						BeneficiaryAddress: &Address{Line1: "10 George St", City: "Sydney", State: "NSW", Country: "AU", PostCode: "2000"},
					}},
				})
			},
			method: "POST", path: "customer", request: "create_customer.json", answer: "customer_created.json",
			check: func(t *testing.T, got any) {
				cu := as[*Customer](t, got)
				if cu.ID != 9112 || cu.Email != "lee.nguyen@shop.example" || cu.Address == nil || cu.Address.Country != "AU" ||
					cu.Verification == nil || cu.Verification.Personal.Status != VerificationNotVerified {
					t.Errorf("customer = %+v", cu)
				}
			},
		},
		{
			name: "identification_documents_me",
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.Customers.ListIdentificationDocuments(ctx, Me)
			},
			method: "GET", path: "customer/me/identification-documents", answer: "identification_documents.json",
			check: checkIdentificationDocuments,
		},
		{
			name: "identification_documents_id",
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.Customers.ListIdentificationDocuments(ctx, CustomerID(8))
			},
			method: "GET", path: "customer/8/identification-documents", answer: "identification_documents.json",
			check: checkIdentificationDocuments,
		},
		{
			name:   "api_keys_me",
			call:   func(ctx context.Context, c *Client) (any, error) { return c.Customers.ListAPIKeys(ctx, Me) },
			method: "GET", path: "customer/me/api_key", answer: "api_keys.json", check: checkAPIKeys,
		},
		{
			name:   "api_keys_id",
			call:   func(ctx context.Context, c *Client) (any, error) { return c.Customers.ListAPIKeys(ctx, CustomerID(8)) },
			method: "GET", path: "customer/8/api_key", answer: "api_keys.json", check: checkAPIKeys,
		},
		{
			name: "update_api_key_me",
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.Customers.UpdateAPIKey(ctx, Me, 2, &UpdateAPIKeyRequest{Name: ptr("ci-rotated"), IsActive: ptr(false)})
			},
			method: "PATCH", path: "customer/me/api_key/2", request: "update_api_key.json", answer: "api_key.json", check: checkUpdatedAPIKey,
		},
		{
			name: "update_api_key_id",
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.Customers.UpdateAPIKey(ctx, CustomerID(8), 2, &UpdateAPIKeyRequest{Name: ptr("ci-rotated"), IsActive: ptr(false)})
			},
			method: "PATCH", path: "customer/8/api_key/2", request: "update_api_key.json", answer: "api_key.json", check: checkUpdatedAPIKey,
		},
		{
			name:   "customer_disbursement_methods_me",
			call:   func(ctx context.Context, c *Client) (any, error) { return c.Customers.ListDisbursementMethods(ctx, Me) },
			method: "GET", path: "customer/me/disbursement_methods", answer: "customer_disbursement_methods.json",
			check: checkCustomerDisbursementMethods,
		},
		{
			name: "customer_disbursement_methods_id",
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.Customers.ListDisbursementMethods(ctx, CustomerID(8))
			},
			method: "GET", path: "customer/8/disbursement_methods", answer: "customer_disbursement_methods.json",
			check: checkCustomerDisbursementMethods,
		},
		{
			name: "customer_disbursement_method_me",
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.Customers.GetDisbursementMethod(ctx, Me, 32)
			},
			method: "GET", path: "customer/me/disbursement_methods/32", answer: "disbursement_method.json",
			check: checkDisbursementMethod,
		},
		{
			name: "customer_disbursement_method_id",
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.Customers.GetDisbursementMethod(ctx, CustomerID(8), 32)
			},
			method: "GET", path: "customer/8/disbursement_methods/32", answer: "disbursement_method.json",
			check: checkDisbursementMethod,
		},

		// ---- PartnerService ----
		{
			name: "partner_transactions",
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.Partner.Transactions(ctx, &PartnerTransactionsOptions{
					Limit: 2, NextCursor: 48020, SortBy: "id", SortDirection: SortDesc, Status: StatusOngoing,
					IDs: []int64{1, 2}, CustomerIDs: []int64{8, 9}, MinAmount: ptr(MustAmount("100")), MaxAmount: ptr(MustAmount("2500.5")),
					InitiationStartDate: utc(2024, 1, 1, 0, 0, 0, 0),
					InitiationEndDate:   time.Date(2024, 3, 31, 23, 59, 59, 0, sydney),
				})
			},
			method: "GET", path: "partner/transactions",
			query: url.Values{
				"limit": {"2"}, "next_cursor": {"48020"}, "sort_by": {"id"}, "sort_direction": {"desc"}, "status": {"ongoing"},
				"ids": {"1", "2"}, "customer_ids": {"8", "9"}, "min_amount": {"100.00"}, "max_amount": {"2500.50"},
				"initiation_start_date": {"2024-01-01T00:00:00Z"}, "initiation_end_date": {"2024-03-31T23:59:59+10:00"},
			},
			rawQuery: []string{"ids=1&ids=2", "customer_ids=8&customer_ids=9", "min_amount=100.00", "max_amount=2500.50",
				"initiation_start_date=2024-01-01T00%3A00%3A00Z", "initiation_end_date=2024-03-31T23%3A59%3A59%2B10%3A00"},
			answer: "partner_transactions.json",
			check: func(t *testing.T, got any) {
				l := as[*TransactionCursorList](t, got)
				if l.SortBy != "id" || l.SortDirection != SortDesc || l.NextCursor == nil || *l.NextCursor != 48010 ||
					l.Limit == nil || *l.Limit != 2 || len(l.Transactions) != 2 {
					t.Fatalf("list = %+v", l)
				}
				tx := l.Transactions[0]
				at(t, "close_date", tx.CloseDate, utc(2024, 8, 1, 12, 0, 0, 0))
				if p, _ := tx.Party(RoleSeller); p.ID != 202 || !p.DisbursementMethodSelected || !p.Agreed {
					t.Errorf("seller = %+v", p)
				}
				it := tx.Items[0]
				if !it.Schedule[0].Status.Secured || !it.Schedule[0].Status.DisbursedToBeneficiary || !it.Status.InDispute || it.Status.Canceled {
					t.Errorf("item statuses = %+v %+v", it.Schedule[0].Status, it.Status)
				}
				fee := it.Fees[0]
				if fee.Split != SplitWhole {
					t.Errorf("split %q = %v", "1.0", fee.Split)
				}
				amt(t, "fee amount", fee.Amount, "35.75")
				amt(t, "fee amount_without_taxes", fee.AmountWithoutTaxes, "32.50")
				boat := l.Transactions[1]
				if !boat.CloseDate.IsZero() || !boat.IsCancelled || boat.Items[0].Category != CategoryBoats || boat.Items[0].ExtraAttributes.Year != 2019 ||
					!boat.Items[0].Status.Canceled || boat.Items[0].Fees[1].Split != SplitHalf {
					t.Errorf("boat = %+v", boat)
				}
			},
		},
		{
			name:   "partner_transactions_unfiltered",
			call:   func(ctx context.Context, c *Client) (any, error) { return c.Partner.Transactions(ctx, nil) },
			method: "GET", path: "partner/transactions", answer: "partner_transactions.json",
			check: func(t *testing.T, got any) {
				if l := as[*TransactionCursorList](t, got); len(l.Transactions) != 2 {
					t.Errorf("list = %+v", l)
				}
			},
		},
		{
			name: "partner_customers",
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.Partner.Customers(ctx, &PartnerCustomersOptions{
					Limit: 5, NextCursor: 7, SortBy: "id", SortDirection: SortAsc, IDs: []int64{8, 9, 10},
					Country: "AU", VerificationStatus: VerificationCompanyVerified,
				})
			},
			method: "GET", path: "partner/customers",
			query: url.Values{"limit": {"5"}, "next_cursor": {"7"}, "sort_by": {"id"}, "sort_direction": {"asc"},
				"ids": {"8", "9", "10"}, "country": {"AU"}, "verification_status": {"company_verified"}},
			rawQuery: []string{"ids=8&ids=9&ids=10"},
			answer:   "partner_customers.json",
			check: func(t *testing.T, got any) {
				l := as[*CustomerCursorList](t, got)
				if l.NextCursor != nil || l.Limit == nil || *l.Limit != 5 || l.SortDirection != SortAsc || len(l.Customers) != 2 {
					t.Fatalf("list = %+v", l)
				}
				kim := l.Customers[1]
				if kim.ID != 9 || kim.DisplayName != "Kim B." || kim.Verification.Personal.Status != "manual_review" {
					t.Errorf("customer = %+v", kim)
				}
				at(t, "bare date of birth", kim.DateOfBirth, utc(1990, 2, 28, 0, 0, 0, 0))
				if l.Customers[0].Verification.Company.Status != VerificationVerified {
					t.Errorf("customer = %+v", l.Customers[0])
				}
			},
		},
		{
			name: "partner_customer_by_party",
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.Partner.Customer(ctx, &PartnerCustomerOptions{PartyID: 191})
			},
			method: "GET", path: "partner/customer", query: url.Values{"party_id": {"191"}}, answer: "partner_customer.json",
			check: checkPartnerCustomer,
		},
		{
			name: "partner_customer_by_customer_id",
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.Partner.Customer(ctx, &PartnerCustomerOptions{CustomerID: 9})
			},
			method: "GET", path: "partner/customer", query: url.Values{"customer_id": {"9"}}, answer: "partner_customer.json",
			check: checkPartnerCustomer,
		},
		{
			name: "transaction_statistics",
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.Partner.TransactionStatistics(ctx, &StatisticsOptions{
					StartDate: utc(2024, 1, 1, 0, 0, 0, 0), EndDate: time.Date(2024, 3, 31, 23, 59, 59, 0, sydney), Interval: "month",
					Extra: url.Values{"currency": {"usd"}, "interval": {"week"}},
				})
			},
			method: "GET", path: "partner/statistics/transactions/count",
			query: url.Values{"start_date": {"2024-01-01T00:00:00Z"}, "end_date": {"2024-03-31T23:59:59+10:00"},
				"interval": {"month"}, "currency": {"usd"}},
			answer: "transaction_statistics.json",
			check: func(t *testing.T, got any) {
				s := as[*Statistics](t, got)
				want := []StatisticsCountTimeData{{12, "2024-01"}, {30, "2024-02"}, {0, "2024-03-01T00:00:00+00:00"}}
				if !reflect.DeepEqual(s.TimeData, want) {
					t.Errorf("time_data = %+v", s.TimeData)
				}
				var agg struct {
					Total  int64  `json:"total"`
					Volume Amount `json:"volume"`
				}
				if err := json.Unmarshal(s.Aggregates, &agg); err != nil || agg.Total != 42 || agg.Volume.String() != "98000.50" {
					t.Errorf("aggregates %s: %+v %v", s.Aggregates, agg, err)
				}
				if !strings.Contains(string(s.Queries), `"interval": "month"`) || !strings.Contains(string(s.Raw), `"currency_breakdown"`) {
					t.Errorf("queries %s, raw %s", s.Queries, s.Raw)
				}
			},
		},
		{
			name:   "customer_statistics",
			call:   func(ctx context.Context, c *Client) (any, error) { return c.Partner.CustomerStatistics(ctx, nil) },
			method: "GET", path: "partner/statistics/customers/count", answer: "customer_statistics.json",
			check: func(t *testing.T, got any) {
				s := as[*Statistics](t, got)
				if len(s.TimeData) != 2 || s.TimeData[1] != (StatisticsCountTimeData{5, "2024-W19"}) || compact(t, s.Aggregates) != `{"total":8}` {
					t.Errorf("statistics = %+v", s)
				}
			},
		},
		{
			name:   "payments_in",
			call:   func(ctx context.Context, c *Client) (any, error) { return c.Partner.PaymentsIn(ctx, 9) },
			method: "GET", path: "partner/customer/9/payments_in", answer: "payments_in.json",
			check: func(t *testing.T, got any) {
				cards := as[*CreditCards](t, got)
				if len(cards.Cards) != 2 {
					t.Fatalf("cards = %+v", cards.Cards)
				}
				c0, c1 := cards.Cards[0], cards.Cards[1]
				if c0.LastFour != "4242" || c0.ExpirationMonth != 12 || c0.ExpirationYear != 2027 || c0.Brand != "visa" || c0.CustomerID != 9 || c0.TransactionID != 48016 {
					t.Errorf("card 0 = %+v", c0)
				}
				amt(t, "card 0 amount", c0.Amount, "3650.50")
				at(t, "card 0 date", c0.Date, utc(2024, 5, 7, 10, 0, 0, 0))
				if c1 != (CreditCard{LastFour: "0005", ExpirationMonth: 1, ExpirationYear: 2026, Brand: "amex", CustomerID: 9}) {
					t.Errorf("card 1 = %+v", c1)
				}
				if !bytes.Contains(cards.Raw, []byte(`"funding": "credit"`)) {
					t.Errorf("Raw = %s", cards.Raw)
				}
			},
		},
		{
			name:   "payments_out",
			call:   func(ctx context.Context, c *Client) (any, error) { return c.Partner.PaymentsOut(ctx, 9) },
			method: "GET", path: "partner/customer/9/payments_out", answer: "payments_out.json",
			check: func(t *testing.T, got any) {
				want := []CreditCard{{LastFour: "5100", ExpirationMonth: 7, ExpirationYear: 2028, Brand: "mastercard", CustomerID: 9}}
				if cards := as[*CreditCards](t, got); !reflect.DeepEqual(cards.Cards, want) {
					t.Errorf("cards = %+v", cards.Cards)
				}
			},
		},
		{
			name:   "reports",
			call:   func(ctx context.Context, c *Client) (any, error) { return c.Partner.Reports(ctx) },
			method: "GET", path: "partner/reports", answer: "reports.json",
			check: func(t *testing.T, got any) {
				r := as[*Reports](t, got)
				if len(r.Reports) != 2 || r.Reports[0].TaskID != "rpt_9f2c" || r.Reports[0].Status != "completed" ||
					r.Reports[1].Status != "queued_behind_maintenance" || !r.Reports[1].CompletedAt.IsZero() {
					t.Fatalf("reports = %+v", r.Reports)
				}
				at(t, "created_at", r.Reports[0].CreatedAt, utc(2024, 5, 1, 0, 0, 0, 0))
				at(t, "completed_at (no offset)", r.Reports[0].CompletedAt, utc(2024, 5, 1, 0, 2, 13, 0))
				at(t, "created_at +09:30", r.Reports[1].CreatedAt, utc(2024, 5, 2, 0, 0, 0, 250000000))
				if !strings.Contains(string(r.Raw), `"retention_days": 30`) {
					t.Errorf("Raw = %s", r.Raw)
				}
			},
		},
		{
			name:   "reports_count",
			call:   func(ctx context.Context, c *Client) (any, error) { return c.Partner.ReportsCount(ctx) },
			method: "GET", path: "partner/reports/count", answer: "reports_count.json",
			check: func(t *testing.T, got any) {
				if n := as[*ReportsCount](t, got); n.Count != 2 {
					t.Errorf("count = %d", n.Count)
				}
			},
		},
		{
			name: "create_report",
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.Partner.CreateReport(ctx, &PartnerTransactionsOptions{
					SortBy: "id", SortDirection: SortAsc, Status: StatusCompleted, IDs: []int64{48011, 48016},
					CustomerIDs: []int64{9}, MinAmount: ptr(MustAmount("100")), MaxAmount: ptr(MustAmount("2500.5")),
					InitiationStartDate: utc(2024, 1, 1, 0, 0, 0, 0),
					InitiationEndDate:   time.Date(2024, 3, 31, 23, 59, 59, 0, sydney),
				})
			},
			method: "POST", path: "partner/reports", request: "create_report.json", answer: "create_report.json",
			check: func(t *testing.T, got any) {
				l := as[*CreatedReport](t, got)
				if l.NextCursor != nil || l.Limit != nil || l.SortDirection != SortAsc || l.Transactions == nil || len(l.Transactions) != 0 {
					t.Errorf("list = %+v", l)
				}
			},
		},
		{
			name:   "create_report_unfiltered",
			call:   func(ctx context.Context, c *Client) (any, error) { return c.Partner.CreateReport(ctx, nil) },
			method: "POST", path: "partner/reports", request: "create_report_unfiltered.json", answer: "create_report.json",
			check: func(t *testing.T, got any) {
				if l := as[*CreatedReport](t, got); l.SortBy != "id" {
					t.Errorf("list = %+v", l)
				}
			},
		},
		{
			name: "download_report_as_json",
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.Partner.DownloadReport(ctx, "rpt_9f2c", &DownloadReportOptions{AsJSON: true})
			},
			method: "GET", path: "partner/reports/rpt_9f2c/download", query: url.Values{"as_json": {"true"}}, rawQuery: []string{"as_json=true"},
			answer: "download_report.json",
			check: func(t *testing.T, got any) {
				d := as[*ReportDownload](t, got)
				if d.URL != "https://reports.escrow-files.example/rpt_9f2c.csv?signature=8c1e" || d.Content != nil {
					t.Errorf("download = %+v", d)
				}
			},
		},
		{
			name: "download_report_escaped_task",
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.Partner.DownloadReport(ctx, "rpt 2024/05", nil)
			},
			method: "GET", path: "partner/reports/rpt%202024%2F05/download", answer: "download_report.json",
			check: func(t *testing.T, got any) {
				if d := as[*ReportDownload](t, got); !strings.HasPrefix(d.URL, "https://reports.escrow-files.example/") {
					t.Errorf("download = %+v", d)
				}
			},
		},

		// ---- WebhooksService ----
		{
			name: "create_webhook",
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.Webhooks.Create(ctx, Me, "https://hooks.studio.example/escrow?source=escrow&v=2")
			},
			method: "POST", path: "customer/me/webhook", request: "create_webhook.json", answer: "webhook.json",
			check: func(t *testing.T, got any) {
				if w := as[*Webhook](t, got); w.ID != 91 || w.URL != "https://hooks.studio.example/escrow?source=escrow&v=2" {
					t.Errorf("webhook = %+v", w)
				}
			},
		},
		{
			name:   "list_webhooks_me",
			call:   func(ctx context.Context, c *Client) (any, error) { return c.Webhooks.List(ctx, Me) },
			method: "GET", path: "customer/me/webhook", answer: "webhooks.json", check: checkWebhooks,
		},
		{
			name:   "list_webhooks_id",
			call:   func(ctx context.Context, c *Client) (any, error) { return c.Webhooks.List(ctx, CustomerID(8)) },
			method: "GET", path: "customer/8/webhook", answer: "webhooks.json", check: checkWebhooks,
		},
		{
			name:   "delete_webhook_me",
			call:   func(ctx context.Context, c *Client) (any, error) { return nil, c.Webhooks.Delete(ctx, Me, 91) },
			method: "DELETE", path: "customer/me/webhook/91", status: http.StatusNoContent,
			check: func(*testing.T, any) {},
		},
		{
			name: "delete_webhook_id",
			call: func(ctx context.Context, c *Client) (any, error) {
				return nil, c.Webhooks.Delete(ctx, CustomerID(8), 92)
			},
			method: "DELETE", path: "customer/8/webhook/92", status: http.StatusNoContent,
			check: func(*testing.T, any) {},
		},
	}
}

func ptr[T any](v T) *T { return &v }

// checkMilestoneTransaction asserts what testdata/responses/transaction.json holds.
func checkMilestoneTransaction(t *testing.T, tx *Transaction) {
	t.Helper()
	if tx.ID != 48016 || tx.Currency != USD || tx.Reference != "acme/7781" || tx.IsCancelled || tx.IsDraft ||
		tx.Description != "Website redesign in two milestones" {
		t.Errorf("transaction = %+v", tx)
	}
	at(t, "creation_date", tx.CreationDate, utc(2024, 5, 5, 23, 15, 2, 123456000))
	if tx.CreationDate.Raw() != "2024-05-06T09:15:02.123456+10:00" || !tx.CloseDate.IsZero() {
		t.Errorf("dates = %q, %v", tx.CreationDate.Raw(), tx.CloseDate)
	}
	if len(tx.Parties) != 5 {
		t.Fatalf("parties = %+v", tx.Parties)
	}
	if b, _ := tx.Party(RoleBuyer); b.ID != 201 || !b.Initiator || b.Visibility == nil || !reflect.DeepEqual(b.Visibility.HiddenFrom, []string{"dev@studio.example"}) {
		t.Errorf("buyer = %+v", b)
	}
	if s, _ := tx.Party(RoleSeller); s.Agreed || s.Customer != "dev@studio.example" {
		t.Errorf("seller = %+v", s)
	}
	if p, ok := tx.Party("escrow_officer"); !ok || p.Customer != "officer@escrow.example" {
		t.Errorf("a party of an unknown role was lost: %+v", tx.Parties)
	}
	if len(tx.Items) != 4 {
		t.Fatalf("items = %+v", tx.Items)
	}
	design := tx.Items[0]
	if design.ID != 7001 || design.Type != ItemMilestone || design.Category != CategoryBusinessAndInternet || design.InspectionPeriod != Days(1) ||
		design.Quantity != 1 || design.ExtraAttributes.WithContent || design.ExtraAttributes.Concierge {
		t.Errorf("design = %+v", design)
	}
	amt(t, "design schedule", design.Schedule[0].Amount, "1000.00")
	at(t, "due_date without offset", design.Schedule[0].DueDate, utc(2024, 6, 1, 0, 0, 0, 0))
	if !design.Schedule[0].Status.Secured || design.Schedule[0].BeneficiaryCustomer != "dev@studio.example" {
		t.Errorf("design schedule = %+v", design.Schedule[0])
	}
	if st := design.Status; !st.Shipped || !st.Received || !st.Accepted || st.Rejected || st.ShippedReturned || st.Canceled {
		t.Errorf("design status = %+v", st)
	}
	if f := design.Fees; len(f) != 2 || f[0].Type != FeeEscrow || f[0].Split != SplitHalf || f[1].Split != SplitHalf || f[1].PayerCustomer != "dev@studio.example" {
		t.Errorf("design fees = %+v", f)
	}
	amt(t, "fee amount", design.Fees[0].Amount, "16.25")
	amt(t, "fee amount_without_taxes", design.Fees[0].AmountWithoutTaxes, "14.77")

	build := tx.Items[1]
	if build.Category != "web_three_services" || build.Fees[1].Type != "fx_conversion" || build.Fees[1].Split != 0 {
		t.Errorf("unknown enum values were not kept: %+v", build)
	}
	amt(t, "build schedule", build.Schedule[0].Amount, "2500.50")
	at(t, "due_date -07:00", build.Schedule[0].DueDate, utc(2024, 7, 16, 0, 30, 0, 0))
	amt(t, "fx fee", build.Fees[1].Amount, "3.00")

	broker := tx.Items[2]
	if broker.Type != ItemBrokerFee || broker.Visibility == nil || broker.Visibility.HiddenFrom[0] != "dev@studio.example" ||
		broker.Schedule[0].BeneficiaryCustomer != "broker@agency.example" {
		t.Errorf("broker fee = %+v", broker)
	}
	amt(t, "broker fee", broker.Schedule[0].Amount, "150.00")

	insurance := tx.Items[3]
	if insurance.Type != "insurance_fee" || insurance.Type.Transferable() || insurance.Schedule[0].BeneficiaryCustomer != "escrow" {
		t.Errorf("unknown item type = %+v", insurance)
	}
	amt(t, "insurance", insurance.Schedule[0].Amount, "12.00")
}

// checkUpdatedTransaction asserts what testdata/responses/transaction_updated.json holds.
func checkUpdatedTransaction(t *testing.T, tx *Transaction) {
	t.Helper()
	if tx.ID != 48016 || len(tx.Parties) != 3 || len(tx.Items) != 1 {
		t.Fatalf("transaction = %+v", tx)
	}
	for _, p := range tx.Parties {
		if !p.Agreed {
			t.Errorf("party %s has not agreed", p.Role)
		}
	}
	if st := tx.Items[0].Status; !st.Shipped || st.Received || st.InDispute {
		t.Errorf("status = %+v", st)
	}
	amt(t, "schedule", tx.Items[0].Schedule[0].Amount, "1000.00")
}

func checkCustomer(t *testing.T, cu *Customer) {
	t.Helper()
	if cu.ID != 8 || cu.FirstName != "Dana" || cu.MiddleName != "Q" || cu.LastName != "Okafor" || cu.Username != "dana.o" ||
		cu.DisplayName != "Dana O." || cu.Email != "dana@studio.example" || cu.PhoneNumber != "+1 415 555 0100" {
		t.Errorf("customer = %+v", cu)
	}
	at(t, "date_of_birth without offset", cu.DateOfBirth, utc(1985, 11, 23, 0, 0, 0, 0))
	if cu.Address == nil || *cu.Address != (Address{"500 Market St", "Floor 3", "San Francisco", "CA", "US", "94105"}) {
		t.Errorf("address = %+v", cu.Address)
	}
	if cu.ShippingAddress == nil || cu.ShippingAddress.City != "Oakland" {
		t.Errorf("shipping address = %+v", cu.ShippingAddress)
	}
	v := cu.Verification
	if v == nil || v.Personal.Status != VerificationVerified || v.Company.Status != "in_review" || v.Extended.Status != VerificationNotRequired {
		t.Errorf("verification = %+v", v)
	}
	if cu.Company == nil || cu.Company.CompanyName != "Studio LLC" || cu.Company.Address.PostCode != "94105" {
		t.Errorf("company = %+v", cu.Company)
	}
	if len(cu.DisbursementMethods) != 1 || cu.DisbursementMethods[0].ID != 31 || cu.DisbursementMethods[0].AccountType != "savings" {
		t.Errorf("disbursement methods = %+v", cu.DisbursementMethods)
	}
	if len(cu.Webhooks) != 1 || cu.Webhooks[0] != (Webhook{91, "https://hooks.studio.example/escrow"}) {
		t.Errorf("webhooks = %+v", cu.Webhooks)
	}
	if len(cu.TaxNumbers) != 1 || cu.TaxNumbers[0] != (TaxNumber{4, "ein", "**-***4567"}) {
		t.Errorf("tax numbers = %+v", cu.TaxNumbers)
	}
	if ev := cu.ElectronicVerification; !cu.CustomerEmailVerification.Verified || ev.Available ||
		!reflect.DeepEqual(ev.DocumentsSupported, []string{"passport"}) || !bytes.Contains(ev.Raw, []byte(`"provider": "idv"`)) {
		t.Errorf("verifications = %+v, %+v", cu.CustomerEmailVerification, ev)
	}
}

// checkUpdatedCustomer asserts what testdata/responses/customer_updated.json holds, empty
// objects included.
func checkUpdatedCustomer(t *testing.T, got any) {
	t.Helper()
	cu := as[*Customer](t, got)
	if cu.ID != 8 || cu.LastName != "Okafor-Reyes" || cu.PhoneNumber != "+1 415 555 0199" || cu.Address == nil || cu.Address.Line1 != "501 Market St" {
		t.Errorf("customer = %+v", cu)
	}
	if cu.ShippingAddress == nil || *cu.ShippingAddress != (Address{}) || cu.Company == nil || cu.Company.CompanyName != "" {
		t.Errorf("empty objects: shipping %+v, company %+v", cu.ShippingAddress, cu.Company)
	}
	if cu.Verification.Personal.Status != VerificationPending || !cu.ElectronicVerification.Available {
		t.Errorf("verification = %+v, %+v", cu.Verification, cu.ElectronicVerification)
	}
}

func checkIdentificationDocuments(t *testing.T, got any) {
	t.Helper()
	docs := as[*IdentificationDocuments](t, got).IdentificationDocuments
	if len(docs) != 2 {
		t.Fatalf("documents = %+v", docs)
	}
	if d := docs[0]; d.Type != "passport" || d.Field != "passport_number" || d.Value != "****4321" || d.Country != "AU" || !d.DateRemovedUTC.IsZero() {
		t.Errorf("document 0 = %+v", d)
	}
	if docs[1].Country != "US" {
		t.Errorf("document 1 = %+v", docs[1])
	}
	at(t, "date_removed_utc", docs[1].DateRemovedUTC, utc(2023, 11, 2, 8, 0, 0, 500000000))
}

func checkAPIKeys(t *testing.T, got any) {
	t.Helper()
	keys := as[*APIKeys](t, got).APIKeys
	if len(keys) != 2 {
		t.Fatalf("keys = %+v", keys)
	}
	if k := keys[0]; k.ID != 1 || k.Name != "production" || !k.IsActive || k.LastFourCharacters != "cdef" || k.Key != "" {
		t.Errorf("key 0 = %+v", k)
	}
	at(t, "date_created", keys[0].DateCreated, utc(2023, 1, 15, 10, 20, 30, 654321000))
	if k := keys[1]; k.ID != 2 || k.IsActive || k.LastFourCharacters != "9z9z" {
		t.Errorf("key 1 = %+v", k)
	}
	at(t, "date_created without offset", keys[1].DateCreated, utc(2023, 2, 1, 0, 0, 0, 0))
}

func checkUpdatedAPIKey(t *testing.T, got any) {
	t.Helper()
	if k := as[*APIKey](t, got); k.ID != 2 || k.Name != "ci-rotated" || k.IsActive || k.LastFourCharacters != "9z9z" {
		t.Errorf("key = %+v", k)
	}
}

func checkCustomerDisbursementMethods(t *testing.T, got any) {
	t.Helper()
	dm := as[*DisbursementMethods](t, got)
	s := dm.SavedDisbursementMethods
	if len(s) != 3 || s[0].Type != DisbursementACH || s[1].BankIBAN != "GB33BUKB20201555555555" || s[2].Type != "interac_etransfer" || s[2].Currency != "cad" {
		t.Errorf("saved = %+v", s)
	}
	if dm.SelectedDisbursementMethod != nil || dm.AvailableDisbursementMethods != nil {
		t.Errorf("methods = %+v", dm)
	}
}

func checkDisbursementMethod(t *testing.T, got any) {
	t.Helper()
	m := as[*DisbursementMethod](t, got)
	if m.ID != 32 || m.Type != DisbursementWireTransferInternational || m.Currency != USD || m.BankAccountNumber != "55555555" ||
		m.BankSortCode != "202015" || m.BankBranchNumber != "0042" || m.InternationalRoutingCode != "GB202015" ||
		m.AdditionalInformation != "Ref: STUDIO" || m.ClearingSystemCode != ClearingGBDSC || m.MemberID != "M-20" {
		t.Errorf("method = %+v", m)
	}
	if m.BankAddress == nil || m.BankAddress.PostCode != "E14 5HP" || m.BeneficiaryAddress == nil || m.BeneficiaryAddress.Line1 != "8 Shoreditch High St" {
		t.Errorf("addresses = %+v %+v", m.BankAddress, m.BeneficiaryAddress)
	}
	ib := m.IntermediaryBanks
	if len(ib) != 2 || ib[0].BankABARoutingNumber != "021000089" || ib[0].BankAddress == nil || ib[0].BankAddress.State != "NY" ||
		ib[1].ClearingSystemCode != "SGIBG" || ib[1].MemberID != "7171" || m.IntermediaryBank != nil {
		t.Errorf("intermediary banks = %+v", ib)
	}
}

func checkPartnerCustomer(t *testing.T, got any) {
	t.Helper()
	cu := as[*Customer](t, got)
	if cu.ID != 9 || cu.Email != "kim@boats.example" || cu.Address.State != "TAS" || cu.Verification.Company.Status != VerificationNotVerified {
		t.Errorf("customer = %+v", cu)
	}
	at(t, "date_of_birth", cu.DateOfBirth, utc(1990, 2, 28, 0, 0, 0, 0))
}

func checkWebhooks(t *testing.T, got any) {
	t.Helper()
	want := []Webhook{{91, "https://hooks.studio.example/escrow"}, {92, "http://localhost:8080/dev-hook"}}
	if w := as[*Webhooks](t, got); !reflect.DeepEqual(w.Webhooks, want) {
		t.Errorf("webhooks = %+v", w.Webhooks)
	}
}

// TestSettleColumnSaysWhatTheClientReads: a write whose row names a settle kind reads the
// state after an ambiguous failure (a 502) before answering; any other write answers the
// 502 without reading. So the column the docs are generated from is what the methods do.
func TestSettleColumnSaysWhatTheClientReads(t *testing.T) {
	writes := map[string]bool{}
	for _, tt := range endpointCases() {
		if tt.method == http.MethodGet {
			continue
		}
		t.Run(tt.name, func(t *testing.T) {
			c, mt := setup(t, WithMaxRetries(0))
			var reads, sent recorder
			mt.RegisterNoResponder(func(req *http.Request) (*http.Response, error) {
				if req.Method == http.MethodGet {
					return reads.then(respond(http.StatusNotFound, `{"message": "not found"}`))(req)
				}
				return sent.then(respond(http.StatusBadGateway, `{"message": "upstream"}`))(req)
			})
			row, ok := matchRoute(tt.method, tt.path)
			if !ok {
				t.Fatalf("%s %s is no row", tt.method, tt.path)
			}
			writes[row.String()] = true
			if _, err := tt.call(context.Background(), c); err == nil {
				t.Fatal("the write succeeded against a 502")
			}
			want := row.settle != settleNone
			if row.settle == settleByReference { // only a Create with a Reference can be looked up
				want = bytes.Contains(sent.all()[0].Body, []byte(`"reference"`))
			}
			if read := reads.count() > 0; read != want {
				t.Errorf("%s: %d reads after a 502; its row says %q", row, reads.count(), row.Settles())
			}
		})
	}
	for _, r := range routeTable() {
		if r.Method != http.MethodGet && r.note == "" && !writes[r.String()] {
			t.Errorf("%s: no case of endpointCases writes it", r)
		}
	}
}
