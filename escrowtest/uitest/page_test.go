package uitest

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	escrow "github.com/escrowkit/escrow-go"
	"github.com/escrowkit/escrow-go/escrowtest"
)

// start is the emulator's frozen clock in these tests, so that what the page shows of
// time is known in advance.
var start = time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)

// chromium returns the browser to drive, or skips the test when there is none, unless
// ESCROW_REQUIRE_SERVERS is set (CI installs Chromium and sets it).
func chromium(t *testing.T) string {
	t.Helper()
	path, err := FindChromium()
	if err == nil {
		return path
	}
	if os.Getenv("ESCROW_REQUIRE_SERVERS") != "" {
		t.Fatalf("ESCROW_REQUIRE_SERVERS is set and the page cannot be tested: %v", err)
	}
	t.Skipf("skipping the emulator page's browser test: %v", err)
	return ""
}

// page drives one browser tab for a test.
type page struct {
	t   *testing.T
	ctx context.Context
	n   int // screenshots taken
}

// newPage starts a browser for the test, with a window width wide.
func newPage(t *testing.T, width, height int) *page {
	t.Helper()
	path := chromium(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	tab, stop := NewBrowser(ctx, path, width, height)
	t.Cleanup(func() {
		stop()
		cancel()
	})
	return &page{t: t, ctx: tab}
}

// do runs steps, failing the test at the first that fails.
func (p *page) do(what string, steps ...chromedp.Action[chromedp.Void]) {
	p.t.Helper()
	if err := chromedp.Do(p.ctx, steps...); err != nil {
		body, _ := chromedp.Run(p.ctx, chromedp.Evaluate[string](`document.body.innerText`))
		p.t.Fatalf("%s: %v\nthe page shows:\n%s", what, err, body)
	}
}

// text returns the text of the first element sel matches.
func (p *page) text(sel string) string {
	p.t.Helper()
	s, err := chromedp.Run(p.ctx, chromedp.Evaluate[string](fmt.Sprintf(`(document.querySelector(%s) || {textContent: "(no element)"}).textContent`, quote(sel))))
	if err != nil {
		p.t.Fatalf("reading %s: %v", sel, err)
	}
	return s
}

// has checks that the first element sel matches holds every text.
func (p *page) has(sel string, texts ...string) {
	p.t.Helper()
	got := p.text(sel)
	for _, want := range texts {
		if !strings.Contains(got, want) {
			p.t.Errorf("%s shows %q, want it to hold %q", sel, got, want)
		}
	}
}

// eval evaluates a JavaScript expression.
func eval[T any](p *page, expr string) T {
	p.t.Helper()
	v, err := chromedp.Run(p.ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		p.t.Fatalf("%s: %v", expr, err)
	}
	return v
}

// choose sets a select's or an input's value and fires the events a person's choice
// fires (input, change).
func choose(sel, value string) chromedp.Action[chromedp.Void] {
	return chromedp.Evaluate[chromedp.Void](fmt.Sprintf(
		`(() => { const s = document.querySelector(%s); s.value = %s; for (const e of ["input", "change"]) s.dispatchEvent(new Event(e, {bubbles: true})); })()`, quote(sel), quote(value)))
}

// snap saves a screenshot in ESCROW_UI_SCREENSHOTS, when set, for a person to look at.
func (p *page) snap(name string) {
	dir := os.Getenv("ESCROW_UI_SCREENSHOTS")
	if dir == "" {
		return
	}
	p.t.Helper()
	png, err := chromedp.Run(p.ctx, chromedp.FullScreenshot(100))
	if err != nil {
		p.t.Fatalf("screenshot: %v", err)
	}
	p.n++
	if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("%s-%02d-%s.png", p.t.Name(), p.n, name)), png, 0o644); err != nil {
		p.t.Fatal(err)
	}
}

// roadBike starts an emulator with the page, a receiver of webhook calls the buyer
// registered, and a marketplace's sale of a road bike, agreed by both parties.
func (p *page) roadBike() (*escrowtest.Server, *httptest.Server, *Market, int64) {
	p.t.Helper()
	srv := escrowtest.NewServer(escrowtest.WithUI(), escrowtest.WithClock(start))
	p.t.Cleanup(srv.Close)
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) }))
	p.t.Cleanup(hook.Close)
	m, err := NewMarket(p.ctx, srv, hook.URL)
	if err != nil {
		p.t.Fatal(err)
	}
	id, err := m.Sell(p.ctx, "Road bike", "1500.00")
	if err != nil {
		p.t.Fatal(err)
	}
	return srv, hook, m, id
}

// TestPageTakesASaleThroughItsControls: a sale a marketplace sets up, paid with the
// page's Approve button, delivered through the API while the page watches, accepted when
// the page's clock control ends the inspection period, and paid out. At each step the
// page shows the state, who must act, the ledger, the timeline, the webhook calls and the
// As-Customer calls; then its fault, filter and reset controls, on a wide and a phone-width
// window.
func TestPageTakesASaleThroughItsControls(t *testing.T) {
	p := newPage(t, 1280, 1000)
	srv, hook, m, id := p.roadBike()
	ctx := p.ctx
	link := chromedp.CSS(fmt.Sprintf(`a[data-tx="%d"]`, id))

	// Before the payment: the list and the transaction's page say that the buyer pays.
	p.do("opening the page", chromedp.Navigate(srv.UIURL()), WaitText("#txs tbody", "Road bike"), WaitText("#live", "live"))
	p.has("#txs tbody tr", "Road bike", "buyer: buyer@example.com", "seller: seller@example.com", "1500.00 USD", "awaiting payment", "buyer pay")
	// Without a transaction in its address, the page shows the newest and follows new ones.
	p.has("#detail-h", fmt.Sprintf("Transaction %d: Road bike", id))
	if eval[bool](p, `document.querySelector("#d-follow").hidden`) {
		t.Error("the page does not say it follows the newest transaction")
	}
	p.do("picking the transaction", chromedp.Click(link), WaitTrue(`location.search === "?tx=`+fmt.Sprint(id)+`" && document.querySelector("#d-follow").hidden`))
	p.has("#d-meta", "awaiting payment", "created 2026-03-02 10:00:00")
	p.has("#d-next", "buyer@example.com (buyer): pay")
	p.has("#d-parties", "buyer@example.com", "seller@example.com", "market@example.com")
	p.has("#d-items", "Road bike", "general_merchandise", "1500.00 USD")
	p.has("#d-balance", "✓ balanced: in 0.00 = out 0.00 + fees 0.00 + held 0.00")
	p.has("#d-ascustomer", "PATCH /transaction/{id}", "market@example.com", "buyer@example.com", "seller@example.com", "200")
	p.has("#d-timeline", "create", "agree")
	for _, control := range []string{"#approve", "#reject", `#advance button[data-seconds="259200"]`, "#fault button[type=submit]", "#clear-faults", "#reset button[type=submit]"} {
		if !eval[bool](p, fmt.Sprintf(`!!document.querySelector(%s) && !document.querySelector(%[1]s).disabled`, quote(control))) {
			t.Errorf("control %s is missing or disabled", control)
		}
	}
	// Every field has a label and every button a name: what a screen reader announces.
	if unlabelled := eval[string](p, `[...document.querySelectorAll("input, select, button")].filter((e) => e.type === "submit" || e.tagName === "BUTTON" ? !e.textContent.trim() : !e.labels.length).map((e) => e.id || e.outerHTML).join(" ")`); unlabelled != "" {
		t.Errorf("controls without a label: %s", unlabelled)
	}
	p.snap("before-approve")

	// The page's Approve button: the funds arrive.
	p.do("approving the payment", chromedp.Click(chromedp.CSS("#approve")),
		WaitText("#result", fmt.Sprintf("Approve payment of %d → 200", id)), WaitText("#d-meta .state", "funded"))
	p.has("#d-ledger", "1548.75")
	p.has("#d-balance", "✓ balanced: in 1548.75 = out 0.00 + fees 0.00 + held 1548.75")
	p.has("#d-next", "seller@example.com (seller): ship")
	p.has("#d-timeline", "payment_approved")
	if eval[bool](p, `!document.querySelector("#approve").disabled`) {
		t.Error("Approve payment is still offered on a funded transaction")
	}
	p.has("#txs tbody tr", "funded", "seller ship")
	p.snap("after-approve")

	// The parties act through the API while the page is open: it shows it unasked.
	if err := m.Deliver(ctx, id); err != nil {
		t.Fatal(err)
	}
	p.do("watching the delivery", WaitText("#d-items", "received"), WaitText("#d-deliveries", "receive"),
		WaitText("#d-meta .state", "in inspection")) // escrow.TransactionState's word, as the SDK reads it
	p.has("#d-next", "buyer@example.com (buyer): accept", "by itself at 2026-03-05 10:00:00 UTC")
	p.has("#d-deliveries", hook.URL, "payment_approved", "204")
	p.has("#d-items", "shipped")

	// The clock's preset ends the inspection period; the free entry moves it on.
	p.do("advancing 3 days", chromedp.Click(chromedp.CSS(`#advance button[data-seconds="259200"]`)),
		WaitText("#result", "Advanced by 3 days"), WaitText("#d-items", "accepted"))
	p.has("#result", fmt.Sprintf("now 2026-03-05 10:00:00 UTC; changed %d: accepted", id))
	p.has("#d-meta .state", "accepted")
	p.has("#d-next", "seller@example.com (seller): select disbursement method")
	p.has("#d-waiting", "no disbursement method selected")
	p.do("advancing 2 hours", chromedp.SetValue(chromedp.CSS("#adv-n"), "2"), chromedp.SetValue(chromedp.CSS("#adv-unit"), "3600"),
		chromedp.Click(chromedp.CSS(`#advance button[type=submit]`)), WaitText("#result", "Advanced by 2 hours"), WaitText("#clock", "2026-03-05 12:00:00"))

	// The seller chooses how to be paid: the sale completes, and the ledger balances.
	if err := m.ChoosePayout(ctx, id); err != nil {
		t.Fatal(err)
	}
	p.do("watching the payout", WaitText("#d-meta .state", "complete"))
	p.has("#d-balance", "✓ balanced: in 1548.75 = out 1500.00 + fees 48.75 + held 0.00")
	p.has("#d-next", "nobody")
	p.has("#d-parties", "selected")
	p.has("#d-timeline", "payment_disbursed", "complete")
	// The list refreshes apart from the detail pane: wait for its row too.
	p.do("watching the list", WaitText("#txs tbody tr", "complete"))
	p.snap("complete")

	id2 := p.faultsAndKeyboard(m)
	p.filtersAndLayout(m)
	p.narrowAndReset(id2)
}

// faultsAndKeyboard: the fault form injects a fault the API answers, a bad one is refused
// with the reason, Clear faults removes them; then a new row opened and its payment
// rejected by keyboard. It returns the new transaction.
func (p *page) faultsAndKeyboard(m *Market) int64 {
	t, ctx := p.t, p.ctx
	t.Helper()
	p.do("injecting a fault", chromedp.SetValue(chromedp.CSS("#fault-endpoint"), "POST /transaction"), chromedp.SetValue(chromedp.CSS("#fault-status"), "503"),
		chromedp.Click(chromedp.CSS("#fault button[type=submit]")), WaitText("#result", "Inject fault on POST /transaction → 200"))
	var apiErr *escrow.APIError
	if _, err := m.Sell(ctx, "Saddle", "100.00"); !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("creating under the injected fault: %v, want a 503", err)
	}
	p.do("injecting a fault that cannot fire", chromedp.SetValue(chromedp.CSS("#fault-endpoint"), "GET /nope"),
		chromedp.Click(chromedp.CSS("#fault button[type=submit]")), WaitText("#result", "Inject fault on GET /nope → 422"))
	if eval[bool](p, `!document.querySelector("#result").classList.contains("error")`) {
		t.Error("a refused control is not shown as an error")
	}
	p.do("clearing faults", chromedp.Click(chromedp.CSS("#clear-faults")), WaitText("#result", "Clear faults → 200"))
	id2, err := m.Sell(ctx, "Saddle", "100.00")
	if err != nil {
		t.Fatalf("creating after Clear faults: %v", err)
	}

	// By keyboard: the new row's link, Enter, and the page's Reject payment button.
	p.do("opening the new row by keyboard", WaitText("#txs tbody", "Saddle"), chromedp.Focus(chromedp.CSS(fmt.Sprintf(`a[data-tx="%d"]`, id2))),
		chromedp.KeyEvent("\r"), WaitText("#detail-h", fmt.Sprintf("Transaction %d: Saddle", id2)))
	p.do("rejecting the payment", chromedp.Focus(chromedp.CSS("#reject")), chromedp.KeyEvent(" "),
		WaitText("#result", fmt.Sprintf("Reject payment of %d → 200", id2)), WaitText("#d-timeline", "payment_rejected"))

	return id2
}

// filtersAndLayout: the state and party filters, and rows arriving without moving anything
// else on the page.
func (p *page) filtersAndLayout(m *Market) {
	t, ctx := p.t, p.ctx
	t.Helper()
	// The filter offers every state the SDK names, not only the API's coarse five.
	if got := eval[string](p, `[...document.querySelectorAll("#f-state option")].map((o) => o.value).join(" ")`); got != " awaiting_agreement awaiting_payment funded shipped in_inspection accepted returning returned in_dispute disbursed complete cancelled" {
		t.Errorf("the state filter offers %q", got)
	}
	p.do("filtering by state", choose("#f-state", "complete"), WaitTrue(`document.querySelectorAll("#txs tbody tr").length === 1`))
	p.has("#txs tbody", "Road bike")
	p.do("filtering by party", choose("#f-state", ""), chromedp.SendKeys(chromedp.CSS("#f-party"), "nobody@"), WaitTrue(`!document.querySelector("#empty").hidden`))
	p.do("filtering by another party", choose("#f-party", ""), chromedp.SendKeys(chromedp.CSS("#f-party"), "seller@"),
		WaitTrue(`document.querySelectorAll("#txs tbody tr").length === 2`))

	// Rows arriving move nothing else on the page.
	layout := `JSON.stringify(["#detail", "#controls", "#list"].map((s) => { const r = document.querySelector(s).getBoundingClientRect(); return [r.x, r.y, r.width, r.height]; }))`
	before := eval[string](p, layout)
	for i := range 5 {
		if _, err := m.Sell(ctx, fmt.Sprintf("Helmet %d", i), "120.00"); err != nil {
			t.Fatal(err)
		}
	}
	p.do("watching rows arrive", WaitTrue(`document.querySelectorAll("#txs tbody tr").length === 7`))
	if after := eval[string](p, layout); after != before {
		t.Errorf("the page moved as rows arrived: %s, then %s", before, after)
	}
	if heights := eval[string](p, `JSON.stringify([...new Set([...document.querySelectorAll("#txs tbody tr")].map((r) => r.getBoundingClientRect().height))])`); strings.Count(heights, ",") != 0 {
		t.Errorf("rows of different heights: %s", heights)
	}
}

// narrowAndReset: at phone width nothing runs off sideways and the controls are there;
// then Reset forgets everything, and the page says so.
func (p *page) narrowAndReset(shown int64) {
	t := p.t
	t.Helper()
	p.do("narrowing the window", chromedp.EmulateViewport(390, 844), WaitTrue(`window.innerWidth === 390`))
	if w := eval[float64](p, `document.documentElement.scrollWidth`); w > 390 {
		t.Errorf("at phone width the page is %v px wide", w)
	}
	if eval[float64](p, `document.querySelector("#approve").getBoundingClientRect().width`) == 0 {
		t.Error("at phone width the payment controls are gone")
	}
	p.snap("phone")
	p.do("widening the window", chromedp.EmulateViewport(1280, 1000))

	p.do("resetting", chromedp.Click(chromedp.CSS("#reset-sure")), chromedp.Click(chromedp.CSS("#reset button[type=submit]")),
		WaitText("#result", "Reset → 200"), WaitTrue(`!document.querySelector("#empty").hidden`), WaitText("#detail-h", fmt.Sprintf("No transaction %d", shown)))
}

// TestPageShowsATransactionAsEachPartySeesIt: the page's "Seen by" switch shows the
// parties as the API shows them to that party: a broker who hides the seller from the
// buyer is obeyed in the buyer's view and not in the emulator's.
func TestPageShowsATransactionAsEachPartySeesIt(t *testing.T) {
	p := newPage(t, 1280, 1000)
	srv := escrowtest.NewServer(escrowtest.WithUI(), escrowtest.WithClock(start))
	defer srv.Close()
	broker := srv.AddCustomer("broker@example.com")
	c, err := escrow.NewClient(broker.Email, broker.APIKey, escrow.WithEmulator(srv))
	if err != nil {
		t.Fatal(err)
	}
	tx, err := c.Transactions.Create(p.ctx, &escrow.CreateTransactionRequest{
		Currency: escrow.USD, Description: "Brokered guitar",
		Parties: []escrow.PartyInput{
			{Role: escrow.RoleBuyer, Customer: BuyerEmail},
			{Role: escrow.RoleSeller, Customer: SellerEmail, Visibility: &escrow.Visibility{HiddenFrom: []string{BuyerEmail}}},
			{Role: escrow.RoleBroker, Customer: escrow.Me},
		},
		Items: []escrow.ItemInput{{
			Title: "Guitar", Type: escrow.ItemGeneralMerchandise, InspectionPeriod: escrow.Days(3), Quantity: 1,
			Schedule: []escrow.ScheduleInput{{Amount: escrow.MustAmount("900.00"), PayerCustomer: BuyerEmail, BeneficiaryCustomer: SellerEmail}},
		}},
	})
	if err != nil {
		t.Fatal(err)
	}
	p.do("opening the transaction", OpenTransaction(srv.UIURL(), tx.ID))
	p.has("#d-parties tbody tr:nth-child(2)", "seller", "seller@example.com")

	p.do("seeing it as the buyer", choose("#viewer", BuyerEmail), WaitText("#d-parties tbody tr:nth-child(2)", "hidden"))
	if loc := eval[string](p, `location.search`); !strings.Contains(loc, "viewer=buyer%40example.com") {
		t.Errorf("the address does not keep the viewer: %s", loc)
	}
	p.has("#d-items", "900.00 USD") // the buyer's own payment stays in view
	p.do("seeing it as the seller", choose("#viewer", SellerEmail), WaitText("#d-parties tbody tr:nth-child(2)", "seller@example.com"))
	p.do("seeing it whole", choose("#viewer", ""), WaitText("#d-parties tbody tr:nth-child(2)", "seller@example.com"))
	p.snap("whole")
}
