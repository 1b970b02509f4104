package escrow

import (
	"net/http"
	"net/url"
	"strings"
)

//go:generate go run ./internal/gen/tables

// Route is one endpoint of the API, a row of the client's route table: its method, its
// path template below the version segment, and what the client decides per route. Every
// method of a service names its row (routeGetTransaction, …) rather than spelling a path,
// so a route is written once; the service doc tables and the README's "Every endpoint"
// table are generated from the rows (go generate; internal/gen/tables fails the tests when
// they are stale).
type Route struct {
	// Method is the HTTP method: "GET".
	Method string
	// Template is the path below the version segment, its {…} segments standing for
	// parameters: "/transaction/{id}". It is the url.template of OpenTelemetry's HTTP
	// conventions.
	Template string

	body bodyCap
	// settle is how the client finds out whether an ambiguous write took effect.
	settle settleKind
	// asCustomer: the API honours an approved partner's As-Customer header here
	// (escrowtest's delegable routes; the contract test compares them).
	asCustomer bool
	// note is shown beside the row in the generated tables.
	note string
}

// String names the route as the rate-limit memory, errors and logs do: "GET /transaction/{id}".
func (r Route) String() string { return r.Method + " " + r.Template }

// path is the template relative to the base URL: "transaction/{id}".
func (r Route) path() string { return strings.TrimPrefix(r.Template, "/") }

// MaxBody is the cap on the body of the route's successful answer: [MaxResourceBody],
// [MaxListBody] or [MaxReportBody].
func (r Route) MaxBody() int64 {
	switch r.body {
	case bodyList:
		return MaxListBody
	case bodyReport:
		return MaxReportBody
	}
	return MaxResourceBody
}

// AsCustomer reports whether the API lets an approved partner act for a customer on this
// route with the As-Customer header ([AsCustomer]).
func (r Route) AsCustomer() bool { return r.asCustomer }

// Settles says how the client settles an ambiguous failure of this route (a write that may
// have taken effect), or "" when it does not: the route is a read, or a write the client
// sends once.
func (r Route) Settles() string { return settleReadings[r.settle] }

// Note is what the route table says of the route beyond its columns, or "".
func (r Route) Note() string { return r.note }

// bodyCap is the class of a route's answer, which sets its cap (limits.go).
type bodyCap uint8

const (
	bodyResource bodyCap = iota // one resource: MaxResourceBody
	bodyList                    // a page of a listing: MaxListBody
	bodyReport                  // a report in the answer itself: MaxReportBody
)

// settleKind is what the client reads after an ambiguous write (settle.go).
type settleKind uint8

const (
	settleNone settleKind = iota
	settleByReference
	settleByTransaction
	settleByPaymentState
	settleByTimeline
	settleByDisbursementMethods
	settleByWebhooks
)

// settleReadings say what each settle kind reads, for Route.Settles and the docs.
var settleReadings = [...]string{
	settleNone:                  "",
	settleByReference:           "looks the reference up (with a Reference)",
	settleByTransaction:         "reads the transaction for the action's effect",
	settleByPaymentState:        "reads whether the transaction is still unfunded",
	settleByTimeline:            "reads the timeline for payment_sent",
	settleByDisbursementMethods: "reads the selected disbursement method",
	settleByWebhooks:            "reads the customer's webhooks",
}

// The route table: every endpoint of the API the client knows. Rate limits are tracked per
// row, and [Client.Do] files a path under the row it matches so that it shares the
// allowance of the typed method. The contract test checks the table against the escrowtest
// emulator's routes, less the emulator's own extensions, which it lists.
var (
	routeGetCustomer                  = Route{Method: http.MethodGet, Template: "/customer/{customer_id}"}
	routeUpdateCustomer               = Route{Method: http.MethodPatch, Template: "/customer/{customer_id}"}
	routeCreateCustomer               = Route{Method: http.MethodPost, Template: "/customer"}
	routeListIdentificationDocuments  = Route{Method: http.MethodGet, Template: "/customer/{customer_id}/identification-documents", body: bodyList}
	routeListAPIKeys                  = Route{Method: http.MethodGet, Template: "/customer/{customer_id}/api_key", body: bodyList}
	routeUpdateAPIKey                 = Route{Method: http.MethodPatch, Template: "/customer/{customer_id}/api_key/{key_id}"}
	routeListSavedDisbursementMethods = Route{Method: http.MethodGet, Template: "/customer/{customer_id}/disbursement_methods", body: bodyList}
	routeGetSavedDisbursementMethod   = Route{Method: http.MethodGet, Template: "/customer/{customer_id}/disbursement_methods/{disbursement_id}"}
	routeListWebhooks                 = Route{Method: http.MethodGet, Template: "/customer/{customer_id}/webhook", body: bodyList}
	routeCreateWebhook                = Route{Method: http.MethodPost, Template: "/customer/{customer_id}/webhook", settle: settleByWebhooks}
	routeDeleteWebhook                = Route{Method: http.MethodDelete, Template: "/customer/{customer_id}/webhook/{webhook_id}"}
	routeCreateTransaction            = Route{Method: http.MethodPost, Template: "/transaction", settle: settleByReference}
	routeListTransactions             = Route{Method: http.MethodGet, Template: "/transaction", body: bodyList}
	routeGetTransaction               = Route{Method: http.MethodGet, Template: "/transaction/{id}"}
	routeGetTransactionByReference    = Route{Method: http.MethodGet, Template: "/transaction/reference/{reference}"}
	routeActOnTransaction             = Route{Method: http.MethodPatch, Template: "/transaction/{id}", settle: settleByTransaction, asCustomer: true}
	routeActOnItem                    = Route{Method: http.MethodPatch, Template: "/transaction/{id}/item/{item_id}", settle: settleByTransaction, asCustomer: true}
	routeListTimelineEntries          = Route{Method: http.MethodGet, Template: "/transaction/{id}/timeline-entries", body: bodyList}
	routeGetDisbursementMethods       = Route{Method: http.MethodGet, Template: "/transaction/{id}/disbursement_methods"}
	routeSelectDisbursementMethod     = Route{Method: http.MethodPatch, Template: "/transaction/{id}/disbursement_methods", settle: settleByDisbursementMethods}
	routeAddDisbursementMethod        = Route{Method: http.MethodPost, Template: "/transaction/{id}/disbursement_methods", note: "the spec documents it exactly as the PATCH"}
	routeGetPaymentMethods            = Route{Method: http.MethodGet, Template: "/transaction/{id}/payment_methods", asCustomer: true}
	routeChoosePaymentMethod          = Route{Method: http.MethodPost, Template: "/transaction/{id}/payment_methods/{payment_method_name}", settle: settleByPaymentState, asCustomer: true}
	routeGetWireTransferDetails       = Route{Method: http.MethodGet, Template: "/transaction/{id}/payment_methods/wire_transfer"}
	routeMarkWireSent                 = Route{Method: http.MethodPost, Template: "/transaction/{id}/payment_methods/wire_transfer", settle: settleByTimeline, asCustomer: true}
	routeGetWebLink                   = Route{Method: http.MethodGet, Template: "/transaction/{id}/web_link/{action}", asCustomer: true}
	routeGetItemWebLink               = Route{Method: http.MethodGet, Template: "/transaction/{id}/item/{item_id}/web_link/{action}", asCustomer: true}
	routePartnerTransactions          = Route{Method: http.MethodGet, Template: "/partner/transactions", body: bodyList}
	routePartnerCustomers             = Route{Method: http.MethodGet, Template: "/partner/customers", body: bodyList}
	routePartnerCustomer              = Route{Method: http.MethodGet, Template: "/partner/customer"}
	routeTransactionStatistics        = Route{Method: http.MethodGet, Template: "/partner/statistics/transactions/count", body: bodyList}
	routeCustomerStatistics           = Route{Method: http.MethodGet, Template: "/partner/statistics/customers/count", body: bodyList}
	routePaymentsIn                   = Route{Method: http.MethodGet, Template: "/partner/customer/{customer_id}/payments_in", body: bodyList}
	routePaymentsOut                  = Route{Method: http.MethodGet, Template: "/partner/customer/{customer_id}/payments_out", body: bodyList}
	routeListReports                  = Route{Method: http.MethodGet, Template: "/partner/reports", body: bodyList}
	routeCountReports                 = Route{Method: http.MethodGet, Template: "/partner/reports/count"}
	routeCreateReport                 = Route{Method: http.MethodPost, Template: "/partner/reports", body: bodyList}
	routeDownloadReport               = Route{Method: http.MethodGet, Template: "/partner/reports/{task_id}/download", body: bodyReport}
)

// routeTable lists the rows in the order of the generated tables. It is a function, so
// that the table is a value no caller can change.
func routeTable() []Route {
	return []Route{
		routeCreateTransaction, routeListTransactions, routeGetTransaction, routeGetTransactionByReference,
		routeActOnTransaction, routeActOnItem, routeListTimelineEntries,
		routeGetDisbursementMethods, routeSelectDisbursementMethod, routeAddDisbursementMethod,
		routeGetPaymentMethods, routeChoosePaymentMethod, routeGetWireTransferDetails, routeMarkWireSent,
		routeGetWebLink, routeGetItemWebLink,

		routeGetCustomer, routeUpdateCustomer, routeCreateCustomer, routeListIdentificationDocuments,
		routeListAPIKeys, routeUpdateAPIKey, routeListSavedDisbursementMethods, routeGetSavedDisbursementMethod,
		routeCreateWebhook, routeListWebhooks, routeDeleteWebhook,

		routePartnerTransactions, routePartnerCustomers, routePartnerCustomer,
		routeTransactionStatistics, routeCustomerStatistics, routePaymentsIn, routePaymentsOut,
		routeListReports, routeCountReports, routeCreateReport, routeDownloadReport,
	}
}

// Routes returns the client's route table: every endpoint of the API it knows, in the
// order of the README's "Every endpoint" table. The slice is the caller's.
func Routes() []Route { return routeTable() }

// matchRoute finds the row of the route table that a method and an escaped path
// (relative to the base URL, without a query) call. Literal segments win over parameters,
// so that ".../payment_methods/wire_transfer" is not read as a payment method name.
func matchRoute(method, escapedPath string) (Route, bool) {
	segments := strings.Split(escapedPath, "/")
	best, bestScore := Route{}, -1
	for _, r := range routeTable() {
		if r.Method != method {
			continue
		}
		if score, ok := bindPattern(r.path(), segments); ok && score > bestScore {
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
