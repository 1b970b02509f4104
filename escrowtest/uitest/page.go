package uitest

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/chromedp/chromedp"
)

// waitTimeout bounds every wait for the page to show something: the page updates within
// a fraction of a second of a change, so a wait this long means it never will.
const waitTimeout = 15 * time.Second

// WaitText waits until the first element that the CSS selector sel matches holds text.
func WaitText(sel, text string) chromedp.Action[chromedp.Void] {
	return chromedp.Poll[chromedp.Void](fmt.Sprintf(
		`((s, t) => { const e = document.querySelector(s); return !!e && e.textContent.includes(t); })(%s, %s)`,
		quote(sel), quote(text)), chromedp.WithPollingTimeout(waitTimeout))
}

// WaitTrue waits until a JavaScript expression is true.
func WaitTrue(expr string) chromedp.Action[chromedp.Void] {
	return chromedp.Poll[chromedp.Void](expr, chromedp.WithPollingTimeout(waitTimeout))
}

// OpenTransaction loads the page of one transaction and waits until it shows it.
func OpenTransaction(uiURL string, id int64) chromedp.Action[chromedp.Void] {
	return chromedp.Steps(
		chromedp.Navigate(fmt.Sprintf("%s?tx=%d", uiURL, id)),
		WaitText("#detail-h", fmt.Sprintf("Transaction %d", id)),
		WaitText("#live", "live"),
	)
}

// quote makes s a JavaScript string literal.
func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
