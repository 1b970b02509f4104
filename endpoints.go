package escrow

import (
	"net/http"
	"net/url"
	"strings"
)

// route is one endpoint of the API as the client names it: a method and a path pattern
// relative to the base URL, whose {…} segments stand for parameters.
type route struct {
	method, pattern string
}

// routes is the client's endpoint table: every endpoint of the API the client knows, the
// ones its methods call and POST .../disbursement_methods, which the spec documents exactly
// as the PATCH and [Client.Do] reaches. Rate limits are tracked per row
// ("GET /transaction/{id}"), and Do files a path under the row it matches so that it shares
// the allowance of the typed method. The contract test checks that the table covers every
// route of the escrowtest emulator and that every method calls a row of it.
var routes = []route{
	{http.MethodGet, "customer/{customer_id}"},
	{http.MethodPatch, "customer/{customer_id}"},
	{http.MethodPost, "customer"},
	{http.MethodGet, "customer/{customer_id}/identification-documents"},
	{http.MethodGet, "customer/{customer_id}/api_key"},
	{http.MethodPost, "customer/{customer_id}/api_key"},
	{http.MethodPatch, "customer/{customer_id}/api_key/{key_id}"},
	{http.MethodGet, "customer/{customer_id}/disbursement_methods"},
	{http.MethodGet, "customer/{customer_id}/disbursement_methods/{disbursement_id}"},
	{http.MethodGet, "customer/{customer_id}/webhook"},
	{http.MethodPost, "customer/{customer_id}/webhook"},
	{http.MethodDelete, "customer/{customer_id}/webhook/{webhook_id}"},

	{http.MethodPost, "transaction"},
	{http.MethodGet, "transaction"},
	{http.MethodGet, "transaction/{id}"},
	{http.MethodGet, "transaction/reference/{reference}"},
	{http.MethodPatch, "transaction/{id}"},
	{http.MethodPatch, "transaction/{id}/item/{item_id}"},
	{http.MethodGet, "transaction/{id}/timeline-entries"},
	{http.MethodGet, "transaction/{id}/disbursement_methods"},
	{http.MethodPatch, "transaction/{id}/disbursement_methods"},
	{http.MethodPost, "transaction/{id}/disbursement_methods"},
	{http.MethodGet, "transaction/{id}/payment_methods"},
	{http.MethodPost, "transaction/{id}/payment_methods/{payment_method_name}"},
	{http.MethodGet, "transaction/{id}/payment_methods/wire_transfer"},
	{http.MethodPost, "transaction/{id}/payment_methods/wire_transfer"},
	{http.MethodGet, "transaction/{id}/web_link/{action}"},
	{http.MethodGet, "transaction/{id}/item/{item_id}/web_link/{action}"},

	{http.MethodGet, "partner/transactions"},
	{http.MethodGet, "partner/customers"},
	{http.MethodGet, "partner/customer"},
	{http.MethodGet, "partner/statistics/transactions/count"},
	{http.MethodGet, "partner/statistics/customers/count"},
	{http.MethodGet, "partner/customer/{customer_id}/payments_in"},
	{http.MethodGet, "partner/customer/{customer_id}/payments_out"},
	{http.MethodGet, "partner/reports"},
	{http.MethodGet, "partner/reports/count"},
	{http.MethodPost, "partner/reports"},
	{http.MethodGet, "partner/reports/{task_id}/download"},
}

// matchRoute finds the row of the endpoint table that a method and an escaped path
// (relative to the base URL, without a query) call. Literal segments win over parameters,
// so that ".../payment_methods/wire_transfer" is not read as a payment method name.
func matchRoute(method, escapedPath string) (route, bool) {
	segments := strings.Split(escapedPath, "/")
	best, bestScore := route{}, -1
	for _, r := range routes {
		if r.method != method {
			continue
		}
		if score, ok := bindPattern(r.pattern, segments); ok && score > bestScore {
			best, bestScore = r, score
		}
	}
	return best, bestScore >= 0
}

// bindPattern reports whether path segments fit a pattern, and how many fit literally.
func bindPattern(pattern string, segments []string) (int, bool) {
	want := strings.Split(pattern, "/")
	if len(want) != len(segments) {
		return 0, false
	}
	literal := 0
	for i, w := range want {
		got, err := url.PathUnescape(segments[i])
		switch {
		case err != nil || got == "":
			return 0, false
		case strings.HasPrefix(w, "{"):
		case got != w:
			return 0, false
		default:
			literal++
		}
	}
	return literal, true
}
