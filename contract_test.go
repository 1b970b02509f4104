package escrow

// The contract between the SDK and the emulator (package escrowtest), which are written
// independently of each other: every answer the emulator gives decodes into the SDK's types
// with unknown fields disallowed, so a field the SDK drops fails here; and the SDK's
// endpoint table covers every route the emulator serves, so an endpoint the SDK does not
// know fails here too.

import (
	"bytes"
	"context"
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/escrowkit/escrow-go/escrowtest"
)

// emulatorExtensions are the routes the emulator serves beyond the API: its own
// conveniences, which the SDK's route table leaves out. Each must stay served and stay out
// of the table (TestRouteTableMatchesTheEmulator).
var emulatorExtensions = map[string]bool{
	"POST customer/{}/api_key": true, // creates an API key; the live API has no such route
}

// emulatorRoutes returns the routes the emulator serves, from the table it routes by
// (escrowtest.Endpoints), in the SDK's route shape. They are also checked against the
// running emulator (TestRouteTableMatchesTheEmulator), so that the list and the routing
// cannot part.
func emulatorRoutes(t *testing.T) []Route {
	t.Helper()
	var out []Route
	for _, e := range escrowtest.Endpoints() {
		out = append(out, Route{Method: e.Method, Template: e.Pattern, asCustomer: e.Delegable})
	}
	if len(out) < 30 {
		t.Fatalf("escrowtest.Endpoints lists %d routes; spec part 4 has more than 30", len(out))
	}
	return out
}

var paramSegment = regexp.MustCompile(`\{[^}]*\}`)

// endpointKey names a route whatever its parameters are called: "GET transaction/{}".
func endpointKey(r Route) string {
	return r.Method + " " + paramSegment.ReplaceAllString(r.path(), "{}")
}

// samplePath fills a pattern's parameters with plausible values.
func samplePath(pattern string) string {
	return paramSegment.ReplaceAllStringFunc(pattern, func(p string) string {
		switch p {
		case "{customer_id}":
			return "me"
		case "{reference}", "{task_id}", "{action}", "{payment_method_name}":
			return "x"
		}
		return "1"
	})
}

// TestRouteTableMatchesTheEmulator: the SDK's route table and the emulator's are the same
// routes, less the emulator's listed extensions, with the same As-Customer column; and every
// route escrowtest.Endpoints lists is one the running emulator serves (an unknown route
// answers 404 with the Allow header absent; a known path with another method answers 405
// listing the methods it has).
func TestRouteTableMatchesTheEmulator(t *testing.T) {
	sdk := map[string]Route{}
	for _, r := range routeTable() {
		sdk[endpointKey(r)] = r
	}
	emu := emulatorRoutes(t)
	served := map[string]bool{}
	for _, e := range emu {
		key := endpointKey(e)
		served[key] = true
		r, known := sdk[key]
		switch {
		case emulatorExtensions[key] && known:
			t.Errorf("%s is listed as the emulator's extension, but the SDK's route table (endpoints.go) has it", key)
		case emulatorExtensions[key]:
		case !known:
			t.Errorf("the emulator serves %s, which the SDK's route table (endpoints.go) lacks", e)
		case r.asCustomer != e.asCustomer:
			t.Errorf("%s: As-Customer is %v in the SDK's route table, %v in the emulator's", key, r.asCustomer, e.asCustomer)
		}
	}
	for key := range sdk {
		if !served[key] {
			t.Errorf("the SDK's route table has %s, which the emulator does not serve", key)
		}
	}
	for key := range emulatorExtensions {
		if !served[key] {
			t.Errorf("%s is listed as the emulator's extension, but the emulator does not serve it", key)
		}
	}

	srv := escrowtest.NewServer()
	defer srv.Close()
	hc := srv.Client()
	for _, r := range emu {
		// A method no route has makes the router list the methods the path has.
		req, err := http.NewRequest("PROPFIND", srv.URL+samplePath(r.path()), nil)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		allow := strings.Split(strings.ReplaceAll(resp.Header.Get("Allow"), " ", ""), ",")
		if resp.StatusCode != http.StatusMethodNotAllowed || !slices.Contains(allow, r.Method) {
			t.Errorf("%s listed by escrowtest.Endpoints, but the emulator answers PROPFIND %s with %d, Allow %q",
				r, samplePath(r.path()), resp.StatusCode, resp.Header.Get("Allow"))
		}
	}
}

// exchange is one answer the recording transport saw.
type exchange struct {
	method, path string // path relative to the base URL
	status       int
	body         []byte
}

// recordingTransport keeps every answer that passes through it.
type recordingTransport struct {
	next http.RoundTripper
	mu   sync.Mutex
	seen []exchange
}

func (rt *recordingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := rt.next.RoundTrip(req)
	if err != nil {
		return resp, err
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	resp.Body = io.NopCloser(bytes.NewReader(body))
	rel, _ := strings.CutPrefix(req.URL.EscapedPath(), "/"+APIVersion+"/")
	rt.mu.Lock()
	rt.seen = append(rt.seen, exchange{req.Method, rel, resp.StatusCode, body})
	rt.mu.Unlock()
	return resp, nil
}

// Plain shapes of the answers whose SDK types decode leniently (a bare list or an object,
// with a Raw copy): the strict decoding checks the object the emulator sends field by field.
type (
	strictTimeline struct {
		TimelineEntries []TimelineEntry `json:"timeline_entries"`
	}
	strictDocuments struct {
		IdentificationDocuments []IdentificationDocument `json:"identification_documents"`
	}
	strictPayments struct {
		Payments []CreditCard `json:"payments"`
	}
	strictReports struct {
		Reports []Report `json:"reports"`
	}
	strictCount         struct{ Count int64 }
	strictStatistics    Statistics // without its UnmarshalJSON
	strictCreatedReport struct {
		TransactionCursorList
		TaskID string `json:"task_id"`
	}
	// strictDownload is what ReportDownload reads of a JSON answer.
	strictDownload struct {
		URL string `json:"url"`
	}
)

// answerTypes gives, per row of the endpoint table, the SDK type its answer decodes into.
var answerTypes = map[string]func() any{
	"POST customer":                                     func() any { return new(Customer) },
	"GET customer/{}":                                   func() any { return new(Customer) },
	"PATCH customer/{}":                                 func() any { return new(Customer) },
	"GET customer/{}/identification-documents":          func() any { return new(strictDocuments) },
	"GET customer/{}/api_key":                           func() any { return new(APIKeys) },
	"POST customer/{}/api_key":                          func() any { return new(APIKey) },
	"PATCH customer/{}/api_key/{}":                      func() any { return new(APIKey) },
	"GET customer/{}/disbursement_methods":              func() any { return new(DisbursementMethods) },
	"GET customer/{}/disbursement_methods/{}":           func() any { return new(DisbursementMethod) },
	"GET customer/{}/webhook":                           func() any { return new(Webhooks) },
	"POST customer/{}/webhook":                          func() any { return new(Webhook) },
	"DELETE customer/{}/webhook/{}":                     nil, // 204, no body
	"POST transaction":                                  func() any { return new(Transaction) },
	"GET transaction":                                   func() any { return new(TransactionList) },
	"GET transaction/{}":                                func() any { return new(Transaction) },
	"GET transaction/reference/{}":                      func() any { return new(Transaction) },
	"PATCH transaction/{}":                              func() any { return new(Transaction) },
	"PATCH transaction/{}/item/{}":                      func() any { return new(Transaction) },
	"GET transaction/{}/timeline-entries":               func() any { return new(strictTimeline) },
	"GET transaction/{}/disbursement_methods":           func() any { return new(DisbursementMethods) },
	"PATCH transaction/{}/disbursement_methods":         func() any { return new(DisbursementMethods) },
	"POST transaction/{}/disbursement_methods":          func() any { return new(DisbursementMethods) },
	"GET transaction/{}/payment_methods":                func() any { return new(PaymentMethods) },
	"POST transaction/{}/payment_methods/{}":            func() any { return new(LandingPage) },
	"GET transaction/{}/payment_methods/wire_transfer":  func() any { return new(WireTransferDetails) },
	"POST transaction/{}/payment_methods/wire_transfer": func() any { return new(Transaction) }, // WireSent.Transaction
	"GET transaction/{}/web_link/{}":                    func() any { return new(LandingPage) },
	"GET transaction/{}/item/{}/web_link/{}":            func() any { return new(LandingPage) },
	"GET partner/transactions":                          func() any { return new(TransactionCursorList) },
	"GET partner/customers":                             func() any { return new(CustomerCursorList) },
	"GET partner/customer":                              func() any { return new(Customer) },
	"GET partner/statistics/transactions/count":         func() any { return new(strictStatistics) },
	"GET partner/statistics/customers/count":            func() any { return new(strictStatistics) },
	"GET partner/customer/{}/payments_in":               func() any { return new(strictPayments) },
	"GET partner/customer/{}/payments_out":              func() any { return new(strictPayments) },
	"GET partner/reports":                               func() any { return new(strictReports) },
	"GET partner/reports/count":                         func() any { return new(strictCount) },
	"POST partner/reports":                              func() any { return new(strictCreatedReport) },
	"GET partner/reports/{}/download":                   func() any { return new(strictDownload) },
}

// TestEmulatorAnswersDecodeStrictly drives every route of the emulator through the SDK
// (with Client.Do where the SDK has no method) and decodes every answer into the SDK's type
// with unknown fields disallowed.
func TestEmulatorAnswersDecodeStrictly(t *testing.T) {
	for _, r := range routeTable() {
		if _, ok := answerTypes[endpointKey(r)]; !ok {
			t.Errorf("no answer type for %s: add one to answerTypes", r)
		}
	}
	emulated := map[string]bool{}
	for _, r := range emulatorRoutes(t) {
		emulated[endpointKey(r)] = true
	}

	srv := escrowtest.NewServer(escrowtest.WithClock(time.Date(2025, 3, 3, 9, 0, 0, 0, time.UTC)))
	defer srv.Close()
	rec := &recordingTransport{next: srv.Client().Transport}
	connect := func(a escrowtest.Account) *Client {
		c, err := NewClient(a.Email, a.APIKey, WithBaseURL(srv.URL), WithHTTPClient(&http.Client{Transport: rec}))
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	partner := connect(srv.AddPartner("market@example.com"))
	buyerAcct, sellerAcct := srv.AddCustomer("buyer@example.com"), srv.AddCustomer("seller@example.com")
	buyer, seller := connect(buyerAcct), connect(sellerAcct)
	asBuyer, asSeller := AsCustomer(buyerAcct.Email), AsCustomer(sellerAcct.Email)

	ctx := context.Background()
	must := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	mustT := func(tx *Transaction, err error) *Transaction { // err names the call
		t.Helper()
		must("transaction", err)
		return tx
	}
	sale := func(ref string, items ...ItemInput) *CreateTransactionRequest {
		return &CreateTransactionRequest{
			Currency: USD, Description: "contract " + ref, Reference: ref,
			Parties: []PartyInput{{Role: RoleBuyer, Customer: buyerAcct.Email}, {Role: RoleSeller, Customer: sellerAcct.Email}},
			Items:   items,
		}
	}
	goods := ItemInput{Title: "Lamp", Type: ItemGeneralMerchandise, InspectionPeriod: Days(3), Quantity: 1,
		Schedule: []ScheduleInput{{Amount: MustAmount("120.00"), PayerCustomer: buyerAcct.Email, BeneficiaryCustomer: sellerAcct.Email}}}
	agree := func(id int64) {
		mustT(partner.Transactions.Agree(ctx, id, asBuyer))
		mustT(partner.Transactions.Agree(ctx, id, asSeller))
	}
	byCard := func(id int64) {
		_, err := buyer.Transactions.GetPaymentMethods(ctx, id)
		must("payment methods", err)
		_, err = buyer.Transactions.ChoosePaymentMethod(ctx, id, PaymentCreditCard, &ChoosePaymentMethodRequest{ReturnURL: "https://market.example/paid"})
		must("choose card", err)
		must("approve payment", srv.ApprovePayment(id))
	}

	// Customers.
	_, err := partner.Customers.Create(ctx, &CreateCustomerRequest{Email: "new@example.com", FirstName: "New",
		Address: &Address{Line1: "1 Main St", City: "Springfield", Country: "US", PostCode: "12345"}})
	must("create customer", err)
	me, err := partner.Customers.Get(ctx, Me)
	must("get me", err)
	_, err = partner.Customers.Update(ctx, Me, &UpdateCustomerRequest{PhoneNumber: "+1 555 0100",
		ShippingAddress: &Address{Line1: "2 Dock Rd", City: "Springfield", Country: "US", PostCode: "12346"},
		Company:         &Company{CompanyName: "Market Inc"}})
	must("update me", err)
	_, err = partner.Customers.ListIdentificationDocuments(ctx, Me)
	must("identification documents", err)
	var key APIKey
	must("create API key", partner.Do(ctx, http.MethodPost, "customer/me/api_key", map[string]string{"name": "contract"}, &key))
	_, err = partner.Customers.ListAPIKeys(ctx, Me)
	must("api keys", err)
	_, err = partner.Customers.UpdateAPIKey(ctx, CustomerID(me.ID), key.ID, &UpdateAPIKeyRequest{IsActive: ptr(false)})
	must("update API key", err)
	hook, err := partner.Webhooks.Create(ctx, Me, "https://127.0.0.1:1/hook")
	must("create webhook", err)
	_, err = partner.Webhooks.List(ctx, Me)
	must("list webhooks", err)

	// A sale paid by card, shipped, accepted and paid out.
	tx := mustT(partner.Transactions.Create(ctx, sale("contract-1", goods)))
	_, err = partner.Transactions.List(ctx, &ListTransactionsOptions{SortBy: SortByID, SortDirection: SortAsc})
	must("list", err)
	mustT(partner.Transactions.Get(ctx, tx.ID))
	mustT(partner.Transactions.GetByReference(ctx, "contract-1"))
	agree(tx.ID)
	byCard(tx.ID)
	_, err = seller.Transactions.GetDisbursementMethods(ctx, tx.ID)
	must("disbursement methods", err)
	dm, err := seller.Transactions.SelectDisbursementMethod(ctx, tx.ID, &DisbursementMethod{
		Type: DisbursementACH, AccountName: "Sam Seller", AccountType: "checking",
		BankABARoutingNumber: "021000021", BankAccountNumber: "000123456789", BankName: "Example Bank",
	})
	must("select disbursement method", err)
	var reselected DisbursementMethods
	must("re-select by POST", seller.Do(ctx, http.MethodPost, "transaction/"+strconv.FormatInt(tx.ID, 10)+"/disbursement_methods",
		map[string]int64{"id": dm.SelectedDisbursementMethod.ID}, &reselected))
	saved, err := seller.Customers.ListDisbursementMethods(ctx, Me)
	must("saved methods", err)
	_, err = seller.Customers.GetDisbursementMethod(ctx, Me, saved.SavedDisbursementMethods[0].ID)
	must("saved method", err)
	mustT(partner.Transactions.Ship(ctx, tx.ID, &ShippingInformation{TrackingInformation: &TrackingInformation{Carrier: "UPS", TrackingID: "1Z"}}, asSeller))
	mustT(partner.Transactions.Receive(ctx, tx.ID, asBuyer))
	if done := mustT(buyer.Transactions.Accept(ctx, tx.ID)); !done.Completed() {
		t.Errorf("the sale did not complete: %s", done.State())
	}
	_, err = buyer.Transactions.GetWebLink(ctx, tx.ID, "agree")
	must("web link", err)
	_, err = partner.Transactions.ListTimelineEntries(ctx, tx.ID)
	must("timeline", err)

	// A milestone contract paid by wire, acted on per item.
	milestone := func(title, due string) ItemInput {
		d, _ := time.Parse(time.DateOnly, due)
		return ItemInput{Title: title, Type: ItemMilestone, InspectionPeriod: Days(5), Quantity: 1,
			Schedule: []ScheduleInput{{Amount: MustAmount("500.00"), PayerCustomer: buyerAcct.Email, BeneficiaryCustomer: sellerAcct.Email, DueDate: Timestamp{Time: d}}}}
	}
	mc := mustT(partner.Transactions.Create(ctx, sale("contract-2", milestone("Design", "2025-04-01"), milestone("Build", "2025-05-01"))))
	agree(mc.ID)
	_, err = buyer.Transactions.GetWireTransferDetails(ctx, mc.ID)
	must("wire details", err)
	sent, err := buyer.Transactions.MarkWireSent(ctx, mc.ID)
	must("mark wire sent", err)
	if sent.Transaction == nil || sent.Transaction.ID != mc.ID {
		t.Errorf("MarkWireSent did not read the transaction the emulator answers: %s", sent.Raw)
	}
	must("approve wire", srv.ApprovePayment(mc.ID))
	mustT(partner.Transactions.ActOnItem(ctx, mc.ID, mc.Items[0].ID, &ActionRequest{Action: ActionShip}, asSeller))
	_, err = buyer.Transactions.GetItemWebLink(ctx, mc.ID, mc.Items[0].ID, "receive")
	must("item web link", err)

	// A sale paid by card and cancelled: the refund is a card payment out.
	cx := mustT(partner.Transactions.Create(ctx, sale("contract-3", goods)))
	agree(cx.ID)
	byCard(cx.ID)
	mustT(partner.Transactions.Cancel(ctx, cx.ID, "contract test"))

	// The partner endpoints.
	_, err = partner.Partner.Transactions(ctx, &PartnerTransactionsOptions{Limit: 2, SortBy: SortByID})
	must("partner transactions", err)
	_, err = partner.Partner.Customers(ctx, nil)
	must("partner customers", err)
	_, err = partner.Partner.Customer(ctx, &PartnerCustomerOptions{CustomerID: buyerAcct.ID})
	must("partner customer", err)
	_, err = partner.Partner.TransactionStatistics(ctx, &StatisticsOptions{Interval: "day"})
	must("transaction statistics", err)
	_, err = partner.Partner.CustomerStatistics(ctx, nil)
	must("customer statistics", err)
	in, err := partner.Partner.PaymentsIn(ctx, buyerAcct.ID)
	must("payments in", err)
	out, err := partner.Partner.PaymentsOut(ctx, buyerAcct.ID)
	must("payments out", err)
	if len(in.Cards) == 0 || len(out.Cards) == 0 || in.Cards[0].TransactionID == 0 || in.Cards[0].Amount.IsZero() || in.Cards[0].Date.IsZero() {
		t.Errorf("card payments in %+v, out %+v: want the payments' transaction, amount and date", in.Cards, out.Cards)
	}
	report, err := partner.Partner.CreateReport(ctx, &PartnerTransactionsOptions{Status: StatusCompleted})
	must("create report", err)
	_, err = partner.Partner.Reports(ctx)
	must("reports", err)
	_, err = partner.Partner.ReportsCount(ctx)
	must("reports count", err)
	_, err = partner.Partner.DownloadReport(ctx, report.TaskID, &DownloadReportOptions{AsJSON: true})
	must("download report", err)
	must("delete webhook", partner.Webhooks.Delete(ctx, Me, hook.ID))

	// Every answer decodes strictly, and every route of the emulator gave one.
	answered := map[string]bool{}
	for _, x := range rec.seen {
		r, ok := matchRoute(x.method, x.path)
		if !ok {
			r = Route{Method: x.method, Template: "/" + foldIDs(strings.Replace(x.path, "customer/me/", "customer/1/", 1))}
		}
		key := endpointKey(r)
		if !ok && !emulatorExtensions[key] {
			t.Errorf("%s %s: no row of the route table", x.method, x.path)
			continue
		}
		if x.status < 200 || x.status > 299 {
			t.Errorf("%s %s answered %d: %s", x.method, x.path, x.status, x.body)
			continue
		}
		answered[key] = true
		newT := answerTypes[key]
		if newT == nil || len(bytes.TrimSpace(x.body)) == 0 {
			continue
		}
		dec := json.NewDecoder(bytes.NewReader(x.body))
		dec.DisallowUnknownFields()
		if err := dec.Decode(newT()); err != nil {
			t.Errorf("%s %s: the SDK's %T drops or misreads a field: %v\n%s", x.method, x.path, newT(), err, x.body)
		}
	}
	for key := range emulated {
		if !answered[key] {
			t.Errorf("the emulator's %s gave no answer in this test: add a step for it", key)
		}
	}
}

// nonEmpty is s as a list: none when s is "".
func nonEmpty(s string) []string {
	if s == "" {
		return nil
	}
	return []string{s}
}

// TestActionTableMatchesTheEmulator: the SDK's action table (actions.go) and the emulator's
// (escrowtest.Actions), written independently, name the same actions with the same roles,
// events and As-Customer answer, and each action on the goods sets the flag the SDK reads
// (reject_return also sets in_dispute in the emulator; the SDK reads rejected_returned),
// puts them in the same state, and follows the flag after which the SDK lists it as a next
// step.
func TestActionTableMatchesTheEmulator(t *testing.T) {
	emu := escrowtest.Actions()
	var names []Action
	for _, e := range emu {
		a := Action(e.Name)
		names = append(names, a)
		if !a.Known() {
			t.Errorf("the emulator performs %s, which the SDK's action table lacks", a)
			continue
		}
		var roles []string
		for _, r := range a.Roles() {
			roles = append(roles, string(r))
		}
		slices.Sort(roles)
		want := slices.Sorted(slices.Values(e.Roles))
		if !slices.Equal(roles, want) {
			t.Errorf("%s: roles %v in the SDK, %v in the emulator", a, roles, want)
		}
		if string(a.Event()) != e.Event {
			t.Errorf("%s: event %q in the SDK, %q in the emulator", a, a.Event(), e.Event)
		}
		if a.Delegable() != e.Delegable {
			t.Errorf("%s: delegable %v in the SDK, %v in the emulator", a, a.Delegable(), e.Delegable)
		}
		if flag := a.ItemFlag(); (flag == "") != (len(e.Sets) == 0) || (flag != "" && !slices.Contains(e.Sets, flag)) {
			t.Errorf("%s: the SDK reads flag %q, the emulator sets %v", a, flag, e.Sets)
		}
		if r, _ := a.rule(); r.flag != "" && (r.optional != e.Optional || !slices.Equal(nonEmpty(r.after), e.Requires)) {
			t.Errorf("%s: the SDK takes it after %q (optional %v), the emulator after %v (optional %v)", a, r.after, r.optional, e.Requires, e.Optional)
		}
		if r, _ := a.rule(); string(r.state) != e.State {
			t.Errorf("%s: the SDK reads its goods as %q, the emulator as %q", a, r.state, e.State)
		}
	}
	for _, a := range Actions() {
		if !slices.Contains(names, a) {
			t.Errorf("the SDK's action table has %s, which the emulator does not perform", a)
		}
	}
}

// sdkStates returns the TransactionState constants state.go declares, in their order.
// They are read from the source so that a state added there and not to the emulator's
// vocabulary fails TestStateVocabularyMatchesTheEmulator, with no list here to forget.
func sdkStates(t *testing.T) []string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), "state.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, decl := range f.Decls {
		gd, ok := decl.(*ast.GenDecl)
		if !ok || gd.Tok != token.CONST {
			continue
		}
		for _, spec := range gd.Specs {
			vs := spec.(*ast.ValueSpec)
			if id, ok := vs.Type.(*ast.Ident); !ok || id.Name != "TransactionState" {
				continue
			}
			for _, v := range vs.Values {
				lit, ok := v.(*ast.BasicLit)
				if !ok {
					t.Fatalf("a TransactionState constant is not a literal: %#v", v)
				}
				name, err := strconv.Unquote(lit.Value)
				if err != nil {
					t.Fatal(err)
				}
				out = append(out, name)
			}
		}
	}
	if len(out) < 10 {
		t.Fatalf("state.go declares %d TransactionState constants: the parse missed them", len(out))
	}
	return out
}

// TestStateVocabularyMatchesTheEmulator: the states the emulator's control API offers to
// filter by (its vocabulary, which Progress.State and the page take their words from) are
// the SDK's TransactionState constants, in the same order.
func TestStateVocabularyMatchesTheEmulator(t *testing.T) {
	srv := escrowtest.NewServer()
	defer srv.Close()
	u, err := url.Parse(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := srv.Client().Get(u.Scheme + "://" + u.Host + "/_emulator/transactions")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var listing struct {
		States []string `json:"states"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&listing); err != nil {
		t.Fatal(err)
	}
	if want := sdkStates(t); !slices.Equal(listing.States, want) {
		t.Errorf("the emulator's states %v, the SDK's %v", listing.States, want)
	}
}
