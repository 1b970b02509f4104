package escrowtest

import "net/http"

// Endpoint is one route of the API the emulator serves, named as Fault.Endpoint and the
// rate limit name it: the method and the pattern below the version segment, with the
// spec's parameter names ("GET", "/transaction/{id}").
type Endpoint struct {
	Method  string
	Pattern string
	// Delegable: an approved partner may call it As-Customer for a party.
	Delegable bool
}

// String returns the endpoint as Fault.Endpoint takes it: "GET /transaction/{id}".
func (e Endpoint) String() string { return e.Method + " " + e.Pattern }

// Endpoints returns every route of the API the emulator serves, from the table it routes
// by: what a client of the SDK can reach, and what a Fault can name.
func Endpoints() []Endpoint {
	routes := apiRouter().routes
	out := make([]Endpoint, len(routes))
	for i, r := range routes {
		out[i] = Endpoint{Method: r.method, Pattern: r.pattern, Delegable: r.delegable}
	}
	return out
}

// apiRouter returns every endpoint of spec part 4, below versionRoot. Customer paths take
// "me" or an id in {customer_id}.
func apiRouter() *router {
	return newRouter(
		// Customers (customers.go).
		&route{method: http.MethodPost, pattern: "/customer", handle: (*Emulator).createCustomer},
		&route{method: http.MethodGet, pattern: "/customer/{customer_id}", handle: (*Emulator).getCustomer},
		&route{method: http.MethodPatch, pattern: "/customer/{customer_id}", handle: (*Emulator).updateCustomer},
		&route{method: http.MethodGet, pattern: "/customer/{customer_id}/identification-documents", handle: (*Emulator).identificationDocuments},
		&route{method: http.MethodGet, pattern: "/customer/{customer_id}/api_key", handle: (*Emulator).listAPIKeys},
		&route{method: http.MethodPost, pattern: "/customer/{customer_id}/api_key", handle: (*Emulator).createAPIKey},
		&route{method: http.MethodPatch, pattern: "/customer/{customer_id}/api_key/{key_id}", handle: (*Emulator).updateAPIKey},
		&route{method: http.MethodGet, pattern: "/customer/{customer_id}/disbursement_methods", handle: (*Emulator).customerDisbursementMethods},
		&route{method: http.MethodGet, pattern: "/customer/{customer_id}/disbursement_methods/{disbursement_id}", handle: (*Emulator).customerDisbursementMethod},
		&route{method: http.MethodGet, pattern: "/customer/{customer_id}/webhook", handle: (*Emulator).listWebhooks},
		&route{method: http.MethodPost, pattern: "/customer/{customer_id}/webhook", handle: (*Emulator).createWebhook},
		&route{method: http.MethodDelete, pattern: "/customer/{customer_id}/webhook/{webhook_id}", handle: (*Emulator).deleteWebhook},

		// Transactions (transactions.go, lifecycle.go, payments.go, disbursement.go).
		&route{method: http.MethodPost, pattern: "/transaction", handle: (*Emulator).createTransaction},
		&route{method: http.MethodGet, pattern: "/transaction", handle: (*Emulator).listTransactions},
		&route{method: http.MethodGet, pattern: "/transaction/{id}", handle: (*Emulator).getTransaction},
		&route{method: http.MethodGet, pattern: "/transaction/reference/{reference}", handle: (*Emulator).getTransactionByReference},
		&route{method: http.MethodPatch, pattern: "/transaction/{id}", handle: (*Emulator).actOnTransaction, delegable: true},
		&route{method: http.MethodPatch, pattern: "/transaction/{id}/item/{item_id}", handle: (*Emulator).actOnItem, delegable: true},
		&route{method: http.MethodGet, pattern: "/transaction/{id}/timeline-entries", handle: (*Emulator).timeline},
		&route{method: http.MethodGet, pattern: "/transaction/{id}/disbursement_methods", handle: (*Emulator).disbursementMethods},
		&route{method: http.MethodPatch, pattern: "/transaction/{id}/disbursement_methods", handle: (*Emulator).selectDisbursementMethod},
		&route{method: http.MethodPost, pattern: "/transaction/{id}/disbursement_methods", handle: (*Emulator).selectDisbursementMethod},
		&route{method: http.MethodGet, pattern: "/transaction/{id}/payment_methods", handle: (*Emulator).paymentMethods, delegable: true},
		&route{method: http.MethodPost, pattern: "/transaction/{id}/payment_methods/{payment_method_name}", handle: (*Emulator).choosePaymentMethod, delegable: true},
		&route{method: http.MethodGet, pattern: "/transaction/{id}/payment_methods/wire_transfer", handle: (*Emulator).wireDetails},
		&route{method: http.MethodPost, pattern: "/transaction/{id}/payment_methods/wire_transfer", handle: (*Emulator).markWireSent, delegable: true},
		&route{method: http.MethodGet, pattern: "/transaction/{id}/web_link/{action}", handle: (*Emulator).webLink, delegable: true},
		&route{method: http.MethodGet, pattern: "/transaction/{id}/item/{item_id}/web_link/{action}", handle: (*Emulator).webLink, delegable: true},

		// Partners (listings.go, partner.go).
		&route{method: http.MethodGet, pattern: "/partner/transactions", handle: (*Emulator).partnerTransactions},
		&route{method: http.MethodGet, pattern: "/partner/customers", handle: (*Emulator).partnerCustomers},
		&route{method: http.MethodGet, pattern: "/partner/customer", handle: (*Emulator).partnerCustomer},
		&route{method: http.MethodGet, pattern: "/partner/statistics/transactions/count", handle: (*Emulator).transactionStatistics},
		&route{method: http.MethodGet, pattern: "/partner/statistics/customers/count", handle: (*Emulator).customerStatistics},
		&route{method: http.MethodGet, pattern: "/partner/customer/{customer_id}/payments_in", handle: (*Emulator).paymentsIn},
		&route{method: http.MethodGet, pattern: "/partner/customer/{customer_id}/payments_out", handle: (*Emulator).paymentsOut},
		&route{method: http.MethodGet, pattern: "/partner/reports", handle: (*Emulator).listReports},
		&route{method: http.MethodGet, pattern: "/partner/reports/count", handle: (*Emulator).countReports},
		&route{method: http.MethodPost, pattern: "/partner/reports", handle: (*Emulator).createReport},
		&route{method: http.MethodGet, pattern: "/partner/reports/{task_id}/download", handle: (*Emulator).downloadReport},
	)
}
