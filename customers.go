package escrow

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
)

// CustomersService reads and manages customer accounts (spec part 4, "Customers"). Every
// {customer_id} takes [Me] or a [CustomerID]. The table is generated from endpoints.go.
//
//	GET   /customer/{customer_id}                                         Get
//	PATCH /customer/{customer_id}                                         Update
//	POST  /customer                                                       Create
//	GET   /customer/{customer_id}/identification-documents                ListIdentificationDocuments
//	GET   /customer/{customer_id}/api_key                                 ListAPIKeys
//	PATCH /customer/{customer_id}/api_key/{key_id}                        UpdateAPIKey
//	GET   /customer/{customer_id}/disbursement_methods                    ListDisbursementMethods
//	GET   /customer/{customer_id}/disbursement_methods/{disbursement_id}  GetDisbursementMethod
//
// Webhook registration is on [WebhooksService].
type CustomersService service

// Customer is an account. Which fields are filled depends on who asks: other parties see
// display_name only in the early stages of a transaction.
type Customer struct {
	ID                  int64                 `json:"id"`
	FirstName           string                `json:"first_name,omitempty"`
	MiddleName          string                `json:"middle_name,omitempty"`
	LastName            string                `json:"last_name,omitempty"`
	Username            string                `json:"username,omitempty"`
	DisplayName         string                `json:"display_name,omitempty"`
	DateOfBirth         Timestamp             `json:"date_of_birth,omitzero"`
	PhoneNumber         string                `json:"phone_number,omitempty"`
	Email               string                `json:"email"`
	Address             *Address              `json:"address,omitempty"`
	ShippingAddress     *Address              `json:"shipping_address,omitempty"`
	DisbursementMethods []DisbursementMethod  `json:"disbursement_methods,omitempty"`
	Webhooks            []Webhook             `json:"webhooks,omitempty"`
	TaxNumbers          []TaxNumber           `json:"tax_numbers,omitempty"`
	Verification        *CustomerVerification `json:"verification,omitempty"`
	Company             *Company              `json:"company,omitempty"`
	// CustomerEmailVerification says whether the e-mail address is verified (live API).
	CustomerEmailVerification *EmailVerification `json:"customer_email_verification,omitempty"`
	// ElectronicVerification says whether identity can be verified electronically (live API).
	ElectronicVerification *ElectronicVerification `json:"electronic_verification,omitempty"`
}

// EmailVerification is the state of a customer's e-mail verification.
type EmailVerification struct {
	Verified bool `json:"verified"`
}

// ElectronicVerification says whether a customer's identity can be verified electronically,
// and with which documents. No public source shows what documents_supported holds:
// DocumentsSupported lists the names a list of strings, or the keys of an object, give;
// Raw keeps the object as sent.
type ElectronicVerification struct {
	Available          bool            `json:"available"`
	DocumentsSupported []string        `json:"-"`
	Raw                json.RawMessage `json:"-"`
}

// UnmarshalJSON reads available and whatever shape documents_supported has, never failing
// the customer on the latter.
func (v *ElectronicVerification) UnmarshalJSON(b []byte) error {
	var doc struct {
		Available          bool            `json:"available"`
		DocumentsSupported json.RawMessage `json:"documents_supported"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		return err
	}
	*v = ElectronicVerification{Available: doc.Available, Raw: append(json.RawMessage(nil), b...)}
	var names []string
	var byName map[string]json.RawMessage
	switch {
	case json.Unmarshal(doc.DocumentsSupported, &names) == nil:
		v.DocumentsSupported = names
	case json.Unmarshal(doc.DocumentsSupported, &byName) == nil:
		for name := range byName {
			v.DocumentsSupported = append(v.DocumentsSupported, name)
		}
		slices.Sort(v.DocumentsSupported)
	}
	return nil
}

// MarshalJSON writes the document as it was received, or available and the names.
func (v ElectronicVerification) MarshalJSON() ([]byte, error) {
	if v.Raw != nil {
		return v.Raw, nil
	}
	return json.Marshal(struct {
		Available          bool     `json:"available"`
		DocumentsSupported []string `json:"documents_supported,omitempty"`
	}{v.Available, v.DocumentsSupported})
}

// Address is a postal address. Country is an ISO 3166-1 alpha-2 code.
type Address struct {
	Line1    string `json:"line1,omitempty"`
	Line2    string `json:"line2,omitempty"`
	City     string `json:"city,omitempty"`
	State    string `json:"state,omitempty"`
	Country  string `json:"country,omitempty"`
	PostCode string `json:"post_code,omitempty"`
}

// TaxNumber is a customer's tax identifier.
type TaxNumber struct {
	ID     int64  `json:"id,omitempty"`
	Type   string `json:"type"`
	Number string `json:"number"`
}

// CustomerVerification holds the states of a customer's verifications.
type CustomerVerification struct {
	Personal *VerificationState `json:"personal,omitempty"`
	Company  *VerificationState `json:"company,omitempty"`
	Extended *VerificationState `json:"extended,omitempty"`
}

// VerificationState is one verification's status.
type VerificationState struct {
	Status VerificationStatus `json:"status"`
}

// Company is the business a customer acts for.
type Company struct {
	CompanyName string   `json:"company_name,omitempty"`
	Address     *Address `json:"address,omitempty"`
}

// UpdateCustomerRequest is the body of [CustomersService.Update]: the spec's customer patch
// shape. Empty fields are not sent and stay as they are.
type UpdateCustomerRequest struct {
	FirstName       string      `json:"first_name,omitempty"`
	MiddleName      string      `json:"middle_name,omitempty"`
	LastName        string      `json:"last_name,omitempty"`
	Username        string      `json:"username,omitempty"`
	DateOfBirth     Timestamp   `json:"date_of_birth,omitzero"`
	PhoneNumber     string      `json:"phone_number,omitempty"`
	Address         *Address    `json:"address,omitempty"`
	ShippingAddress *Address    `json:"shipping_address,omitempty"`
	Company         *Company    `json:"company,omitempty"`
	TaxNumbers      []TaxNumber `json:"tax_numbers,omitempty"`
	// IdentificationDocuments adds identity documents (the patch shape's addition).
	IdentificationDocuments []IdentificationDocument `json:"identification_documents,omitempty"`
}

// IdentificationDocument is an identity document on file (CustomerCountryIdentification).
type IdentificationDocument struct {
	Type           string    `json:"type,omitempty"`
	Field          string    `json:"field,omitempty"`
	Value          string    `json:"value,omitempty"`
	Country        string    `json:"country,omitempty"`
	DateRemovedUTC Timestamp `json:"date_removed_utc,omitzero"`
}

// IdentificationDocuments is the answer of [CustomersService.ListIdentificationDocuments]. The
// spec does not show its shape: a list, or an object holding one, decodes.
type IdentificationDocuments struct {
	IdentificationDocuments []IdentificationDocument `json:"identification_documents"`
}

// UnmarshalJSON accepts [...] or {"identification_documents": [...]}.
func (d *IdentificationDocuments) UnmarshalJSON(b []byte) error {
	return decodeList(b, &d.IdentificationDocuments, nil, "identification_documents", "documents")
}

// CreateCustomerRequest creates an account ahead of a transaction. Only Email is required;
// once an account exists its details can no longer be supplied through the API.
type CreateCustomerRequest struct {
	Email               string               `json:"email"`
	FirstName           string               `json:"first_name,omitempty"`
	MiddleName          string               `json:"middle_name,omitempty"`
	LastName            string               `json:"last_name,omitempty"`
	Address             *Address             `json:"address,omitempty"`
	PhoneNumber         string               `json:"phone_number,omitempty"`
	DisbursementMethods []DisbursementMethod `json:"disbursement_methods,omitempty"`
}

// DisbursementMethod is a saved or new way to pay out a seller or broker. It is also the
// input shape: set ID alone to select a saved method, or the details to add one. Which
// details are required depends on Type.
type DisbursementMethod struct {
	ID                       int64                  `json:"id,omitempty"`
	Type                     DisbursementMethodType `json:"type,omitempty"`
	Currency                 Currency               `json:"currency,omitempty"`
	AccountName              string                 `json:"account_name,omitempty"`
	AccountType              string                 `json:"account_type,omitempty"` // e.g. "savings"
	BankABARoutingNumber     string                 `json:"bank_aba_routing_number,omitempty"`
	BankAccountNumber        string                 `json:"bank_account_number,omitempty"`
	BankBranchNumber         string                 `json:"bank_branch_number,omitempty"`
	BankIBAN                 string                 `json:"bank_iban,omitempty"`
	BankName                 string                 `json:"bank_name,omitempty"`
	BankSwiftCode            string                 `json:"bank_swift_code,omitempty"`
	BankSortCode             string                 `json:"bank_sort_code,omitempty"`
	InternationalRoutingCode string                 `json:"international_routing_code,omitempty"`
	BankAddress              *Address               `json:"bank_address,omitempty"`
	BeneficiaryAddress       *Address               `json:"beneficiary_address,omitempty"`
	IntermediaryBank         *IntermediaryBank      `json:"intermediary_bank,omitempty"`
	IntermediaryBanks        []IntermediaryBank     `json:"intermediary_banks,omitempty"`
	AdditionalInformation    string                 `json:"additional_information,omitempty"`
	ClearingSystemCode       ClearingSystemCode     `json:"clearing_system_code,omitempty"`
	MemberID                 string                 `json:"member_id,omitempty"`
}

// IntermediaryBank is a correspondent bank of an international wire.
type IntermediaryBank struct {
	ClearingSystemCode   ClearingSystemCode `json:"clearing_system_code,omitempty"`
	BankAddress          *Address           `json:"bank_address,omitempty"`
	BankName             string             `json:"bank_name,omitempty"`
	BankAccountNumber    string             `json:"bank_account_number,omitempty"`
	BankSwiftCode        string             `json:"bank_swift_code,omitempty"`
	MemberID             string             `json:"member_id,omitempty"`
	BankABARoutingNumber string             `json:"bank_aba_routing_number,omitempty"`
}

// DisbursementMethods lists what a seller or broker can be paid out with, what they have
// saved, and what is selected.
type DisbursementMethods struct {
	AvailableDisbursementMethods []AvailableDisbursementMethod `json:"available_disbursement_methods"`
	SavedDisbursementMethods     []DisbursementMethod          `json:"saved_disbursement_methods"`
	// SelectedDisbursementMethod is nil until one is selected; only one is selected, even
	// for milestone transactions.
	SelectedDisbursementMethod *DisbursementMethod `json:"selected_disbursement_method"`
	AvailableCurrencies        []Currency          `json:"available_currencies"`
}

// AvailableDisbursementMethod is a way the caller can be paid out, with the total it would
// pay.
type AvailableDisbursementMethod struct {
	Type     DisbursementMethodType `json:"type"`
	Total    Amount                 `json:"total"`
	Currency Currency               `json:"currency,omitempty"`
}

// APIKey is an API key of an account. Key is set only in the answer that created it: keys
// are stored irreversibly, and listings show LastFourCharacters alone.
type APIKey struct {
	ID                 int64     `json:"id"`
	Name               string    `json:"name"`
	Key                string    `json:"key,omitempty"`
	DateCreated        Timestamp `json:"date_created,omitzero"`
	IsActive           bool      `json:"is_active"`
	LastFourCharacters string    `json:"last_four_characters"`
}

// APIKeys is the answer of [CustomersService.ListAPIKeys].
type APIKeys struct {
	APIKeys []APIKey `json:"api_keys"`
}

// UpdateAPIKeyRequest renames or (de)activates a key. Nil fields are left as they are.
type UpdateAPIKeyRequest struct {
	Name     *string `json:"name,omitempty"`
	IsActive *bool   `json:"is_active,omitempty"`
}

// Get returns a customer: [Me] or a [CustomerID] the caller has access to.
func (s *CustomersService) Get(ctx context.Context, customer CustomerRef, opts ...RequestOption) (*Customer, error) {
	return fetch[Customer](ctx, s.client, call{route: routeGetCustomer, params: []any{customer}, opts: opts})
}

// Update changes a customer's details (PATCH /customer/{me|id}) and returns the customer
// updated: given fields replace the stored ones, empty ones are left alone.
//
// Spec part 4 says that once an account exists, integrations can no longer supply its
// information: a customer updates its own account ([Me]), and an update of another
// customer's, even one the caller created, is refused with an [*APIError] matching
// [ErrForbidden] (as escrowtest answers; a server may also answer a [*ValidationError]
// naming the fields). Nothing changes then.
func (s *CustomersService) Update(ctx context.Context, customer CustomerRef, req *UpdateCustomerRequest, opts ...RequestOption) (*Customer, error) {
	if req == nil {
		return nil, fmt.Errorf("%w: nil UpdateCustomerRequest", ErrInvalidArgument)
	}
	return fetch[Customer](ctx, s.client, call{route: routeUpdateCustomer, params: []any{customer}, body: req, opts: opts})
}

// Create creates an account for an e-mail address; its owner receives an e-mail to set a
// password. An e-mail that already has an account answers 403: the error matches
// ErrForbidden and says so.
func (s *CustomersService) Create(ctx context.Context, req *CreateCustomerRequest, opts ...RequestOption) (*Customer, error) {
	if req == nil || req.Email == "" {
		return nil, fmt.Errorf("%w: a CreateCustomerRequest with an Email is required", ErrInvalidArgument)
	}
	c := &Customer{Email: req.Email}
	err := s.client.send(ctx, call{route: routeCreateCustomer, body: req, out: (*createdCustomer)(c), opts: opts})
	if ae, ok := err.(*APIError); ok && ae.StatusCode == http.StatusForbidden {
		ae.Message = "forbidden: an account may already exist for " + req.Email + " (" + ae.Message + ")"
	}
	if err != nil {
		return nil, err
	}
	return c, nil
}

// createdCustomer decodes the answer of POST /customer, whose shape the spec does not show:
// a customer document, or nothing, which leaves the customer known by its e-mail alone.
type createdCustomer Customer

func (c *createdCustomer) decodeResponse(_ *http.Response, body []byte) error {
	if len(bytes.TrimSpace(body)) == 0 {
		return nil
	}
	return json.Unmarshal(body, (*Customer)(c))
}

// ListIdentificationDocuments lists a customer's identity documents.
func (s *CustomersService) ListIdentificationDocuments(ctx context.Context, customer CustomerRef, opts ...RequestOption) (*IdentificationDocuments, error) {
	return fetch[IdentificationDocuments](ctx, s.client, call{route: routeListIdentificationDocuments, params: []any{customer}, opts: opts})
}

// ListAPIKeys lists a customer's API keys (last four characters only).
func (s *CustomersService) ListAPIKeys(ctx context.Context, customer CustomerRef, opts ...RequestOption) (*APIKeys, error) {
	return fetch[APIKeys](ctx, s.client, call{route: routeListAPIKeys, params: []any{customer}, opts: opts})
}

// UpdateAPIKey renames or (de)activates one API key.
func (s *CustomersService) UpdateAPIKey(ctx context.Context, customer CustomerRef, keyID int64, req *UpdateAPIKeyRequest, opts ...RequestOption) (*APIKey, error) {
	if req == nil {
		return nil, fmt.Errorf("%w: nil UpdateAPIKeyRequest", ErrInvalidArgument)
	}
	return fetch[APIKey](ctx, s.client, call{route: routeUpdateAPIKey, params: []any{customer, keyID}, body: req, opts: opts})
}

// ListDisbursementMethods lists a customer's saved disbursement methods.
func (s *CustomersService) ListDisbursementMethods(ctx context.Context, customer CustomerRef, opts ...RequestOption) (*DisbursementMethods, error) {
	return fetch[DisbursementMethods](ctx, s.client, call{route: routeListSavedDisbursementMethods, params: []any{customer}, opts: opts})
}

// GetDisbursementMethod returns one saved disbursement method.
func (s *CustomersService) GetDisbursementMethod(ctx context.Context, customer CustomerRef, id int64, opts ...RequestOption) (*DisbursementMethod, error) {
	return fetch[DisbursementMethod](ctx, s.client, call{route: routeGetSavedDisbursementMethod, params: []any{customer, id}, opts: opts})
}
