package uitest

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	escrow "github.com/escrowkit/escrow-go"
	"github.com/escrowkit/escrow-go/escrowtest"
)

// TestPageIsAWorkbench: the page shows a fault injected before it loaded and the
// request log in its DOM at once, the accounts too though their tab is hidden; its
// controls remove the fault, drive the sale to in inspection, resend a webhook call,
// filter the requests, show the raw JSON, import a state; at phone width the parties are
// whole.
func TestPageIsAWorkbench(t *testing.T) {
	p := newPage(t, 1280, 1000)
	srv, hook, m, id := p.roadBike()
	ctx := p.ctx
	if _, err := m.Partner.Transactions.Agree(ctx, id, escrow.AsCustomer(BuyerEmail)); err == nil {
		t.Fatal("agreeing twice was not refused") // a 400 for the request log's filter
	}
	if err := srv.InjectFault(escrowtest.Fault{Endpoint: "GET /transaction/{id}", Status: 503, Probability: 0.5}); err != nil {
		t.Fatal(err)
	}
	var state bytes.Buffer
	if err := srv.Snapshot(&state); err != nil {
		t.Fatal(err)
	}

	key := srv.AddPartner(PartnerEmail).APIKey // a key of the partner's, never shown whole
	// Loaded: the fault, the requests and the accounts are in the page, the last hidden.
	p.do("opening the transaction", OpenTransaction(srv.UIURL(), id))
	p.has("#faults-list", "GET /transaction/{id}", "status 503, 50 % of calls")
	p.has("#requests tbody", "POST /2017-09-01/transaction", "market@example.com", "201", "PATCH /2017-09-01/transaction/", "as buyer@example.com", "400")
	if !eval[bool](p, `document.querySelector("#p-accounts").hidden`) {
		t.Error("the accounts' tab is shown before it is picked")
	}
	p.has("#accounts tbody", PartnerEmail, "approved partner", BuyerEmail, SellerEmail)
	if shown := p.text("#accounts"); strings.Contains(shown, key) || !strings.Contains(shown, "…"+key[len(key)-4:]) {
		t.Errorf("the accounts show the partner's key whole, or not by its last four: %s", shown)
	}

	// The fault's Remove button.
	p.do("removing the fault", chromedp.Click(chromedp.CSS(`#faults-list button[data-remove]`)),
		WaitText("#result", "Remove fault 1 → 200"), WaitTrue(`!document.querySelector("#no-faults").hidden`))
	if n := len(srv.Faults()); n != 0 {
		t.Errorf("%d faults stand after Remove", n)
	}

	// Reach: in inspection, as the parties' steps would.
	p.do("reaching in inspection", choose("#reach-state", "in_inspection"), chromedp.Click(chromedp.CSS(`#reach button[type=submit]`)),
		WaitText("#result", fmt.Sprintf("Reach in inspection for %d → 200", id)), WaitText("#d-items", "received"), WaitText("#d-deliveries", "receive"))
	if got, err := m.Partner.Transactions.Get(ctx, id); err != nil || got.State() != escrow.StateInInspection {
		t.Errorf("after the page's Reach the SDK reads %v, %v", got.State(), err)
	}

	// Resend a delivered call.
	p.do("resending", chromedp.Click(chromedp.CSS(`#d-deliveries button[data-resend="payment_approved"]`)),
		WaitText("#result", fmt.Sprintf("Resend payment_approved of %d → 200", id)), WaitText("#d-deliveries", "payment_approved (resent)"))

	// The raw JSON.
	p.do("opening the raw JSON", chromedp.Click(chromedp.CSS("#d-raw summary")), WaitTrue(`document.querySelector("#d-raw").open`))
	p.has("#d-json", fmt.Sprintf(`"id": %d`, id), `"received": true`)

	// The request log's filters.
	p.do("filtering the requests", choose("#r-status", "4xx"), WaitTrue(`document.querySelectorAll("#requests tbody tr").length === 1`), WaitText("#requests tbody", "400"))
	p.has("#requests tbody", "400", "as buyer@example.com")
	p.do("filtering by path", choose("#r-status", ""), choose("#r-path", "/webhook"), WaitTrue(`document.querySelectorAll("#requests tbody tr").length === 1`))
	p.do("filtering by account", choose("#r-path", ""), choose("#r-account", "nobody"), WaitTrue(`!document.querySelector("#no-requests").hidden`))
	p.do("clearing the filter", choose("#r-account", ""), WaitTrue(`document.querySelectorAll("#requests tbody tr").length > 3`))

	// The accounts' tab.
	p.do("showing the accounts", chromedp.Click(chromedp.CSS("#tab-accounts")), WaitTrue(`!document.querySelector("#p-accounts").hidden && document.querySelector("#p-requests").hidden`))
	p.has("#accounts", hook.URL)
	p.snap("accounts")

	// Import the state saved before: the sale is back awaiting payment.
	file := filepath.Join(t.TempDir(), "state.json")
	if err := os.WriteFile(file, state.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	p.do("importing", chromedp.SetUploadFiles(chromedp.CSS("#import-file"), []string{file}),
		WaitText("#result", "Import state.json → 200"), WaitText("#d-meta", "awaiting"))
	if fs := srv.Faults(); len(fs) != 1 {
		t.Errorf("the imported state has %d faults, want its 1", len(fs))
	}

	// At phone width the parties are whole in the list.
	p.do("narrowing the window", chromedp.EmulateViewport(390, 844), WaitTrue(`window.innerWidth === 390`))
	cut := eval[string](p, `[...document.querySelectorAll("#txs td.parties span")].filter((s) => s.scrollWidth > s.clientWidth + 1 || s.getBoundingClientRect().width === 0).map((s) => s.textContent).join(", ")`)
	if cut != "" {
		t.Errorf("at phone width these parties are cut: %s", cut)
	}
	p.has("#txs tbody tr", "buyer: "+BuyerEmail, "seller: "+SellerEmail)
	if w := eval[float64](p, `document.documentElement.scrollWidth`); w > 390 {
		t.Errorf("at phone width the page is %v px wide", w)
	}
	p.snap("phone")
}
