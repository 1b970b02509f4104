package escrowtest

// The emulator's own JSON shapes for everything it sends (spec part 2). They are written
// from the spec independently of the SDK, so that a wrong JSON tag on either side shows up
// as a failing test. Amounts are strings with two decimals, except payment and
// disbursement totals, which are JSON numbers, as on the live API.

type wireTransaction struct {
	ID           int64       `json:"id"`
	Currency     string      `json:"currency"`
	Description  string      `json:"description"`
	Reference    string      `json:"reference,omitempty"`
	CreationDate string      `json:"creation_date"`
	CloseDate    *string     `json:"close_date"`
	IsCancelled  bool        `json:"is_cancelled"`
	IsDraft      bool        `json:"is_draft"`
	Parties      []wireParty `json:"parties"`
	Items        []wireItem  `json:"items"`
}

type wireParty struct {
	ID                         int64           `json:"id"`
	Role                       string          `json:"role"`
	Customer                   string          `json:"customer"`
	Agreed                     bool            `json:"agreed"`
	Initiator                  bool            `json:"initiator"`
	DisbursementMethodSelected bool            `json:"disbursement_method_selected"`
	Visibility                 *wireVisibility `json:"visibility,omitempty"`
}

type wireVisibility struct {
	HiddenFrom []string `json:"hidden_from"`
}

type wireItem struct {
	ID               int64           `json:"id"`
	Title            string          `json:"title"`
	Description      string          `json:"description"`
	Type             string          `json:"type"`
	Category         string          `json:"category,omitempty"`
	InspectionPeriod int64           `json:"inspection_period"`
	Quantity         int64           `json:"quantity"`
	Schedule         []wireSchedule  `json:"schedule"`
	Fees             []wireFee       `json:"fees"`
	ExtraAttributes  wireExtra       `json:"extra_attributes"`
	Status           wireItemStatus  `json:"status"`
	Visibility       *wireVisibility `json:"visibility,omitempty"`
}

type wireSchedule struct {
	Amount              string             `json:"amount"`
	PayerCustomer       string             `json:"payer_customer"`
	BeneficiaryCustomer string             `json:"beneficiary_customer"`
	DueDate             string             `json:"due_date,omitempty"`
	Status              wireScheduleStatus `json:"status"`
}

type wireScheduleStatus struct {
	Secured                bool `json:"secured"`
	DisbursedToBeneficiary bool `json:"disbursed_to_beneficiary"`
}

type wireFee struct {
	Type               string `json:"type"`
	PayerCustomer      string `json:"payer_customer"`
	Split              string `json:"split,omitempty"`
	Amount             string `json:"amount"`
	AmountWithoutTaxes string `json:"amount_without_taxes"`
}

type wireExtra struct {
	WithContent      bool   `json:"with_content"`
	Concierge        bool   `json:"concierge"`
	VIN              string `json:"vin,omitempty"`
	Odometer         string `json:"odometer,omitempty"`
	Year             int64  `json:"year,omitempty"`
	Make             string `json:"make,omitempty"`
	Model            string `json:"model,omitempty"`
	TitleCollection  *bool  `json:"title_collection,omitempty"`
	LienHolderPayoff *bool  `json:"lien_holder_payoff,omitempty"`
}

type wireItemStatus struct {
	Shipped          bool `json:"shipped"`
	Received         bool `json:"received"`
	Accepted         bool `json:"accepted"`
	Rejected         bool `json:"rejected"`
	ShippedReturned  bool `json:"shipped_returned"`
	ReceivedReturned bool `json:"received_returned"`
	AcceptedReturned bool `json:"accepted_returned"`
	RejectedReturned bool `json:"rejected_returned"`
	Canceled         bool `json:"canceled"`
	InDispute        bool `json:"in_dispute"`
}

type wireTransactionPage struct {
	Page         int               `json:"page"`
	PageCount    int               `json:"page_count"`
	PerPage      int               `json:"per_page"`
	Transactions []wireTransaction `json:"transactions"`
}

// wireCursor is what a cursored listing echoes of its query, and where it goes on.
type wireCursor struct {
	SortBy        string `json:"sort_by"`
	SortDirection string `json:"sort_direction"`
	NextCursor    *int64 `json:"next_cursor"`
	Limit         *int   `json:"limit"`
}

type wireTransactionCursor struct {
	wireCursor
	Transactions []wireTransaction `json:"transactions"`
	TaskID       string            `json:"task_id,omitempty"` // set when answering POST /partner/reports
}

type wireCustomerCursor struct {
	wireCursor
	Customers []wireCustomer `json:"customers"`
}

type wireCustomer struct {
	ID                  int64                     `json:"id"`
	Email               string                    `json:"email"`
	FirstName           string                    `json:"first_name,omitempty"`
	MiddleName          string                    `json:"middle_name,omitempty"`
	LastName            string                    `json:"last_name,omitempty"`
	Username            string                    `json:"username"`
	DisplayName         string                    `json:"display_name"`
	PhoneNumber         string                    `json:"phone_number,omitempty"`
	DateOfBirth         string                    `json:"date_of_birth,omitempty"`
	DisbursementMethods []*wireDisbursementMethod `json:"disbursement_methods,omitempty"`
	Webhooks            []wireWebhook             `json:"webhooks,omitempty"`
	TaxNumbers          []wireTaxNumber           `json:"tax_numbers"`
	// The live API returns these even when empty ({}), so they are never left out.
	Address                   wireAddress                   `json:"address"`
	ShippingAddress           wireAddress                   `json:"shipping_address"`
	Company                   wireCompany                   `json:"company"`
	ElectronicVerification    wireElectronicVerification    `json:"electronic_verification"`
	CustomerEmailVerification wireCustomerEmailVerification `json:"customer_email_verification"`
	Verification              wireVerification              `json:"verification"`
}

type wireCompany struct {
	Address     wireAddress `json:"address"`
	CompanyName string      `json:"company_name"`
}

type wireElectronicVerification struct {
	Available          bool     `json:"available"`
	DocumentsSupported []string `json:"documents_supported"`
}

type wireCustomerEmailVerification struct {
	Verified bool `json:"verified"`
}

type wireAddress struct {
	Line1    string `json:"line1,omitempty"`
	Line2    string `json:"line2,omitempty"`
	City     string `json:"city,omitempty"`
	State    string `json:"state,omitempty"`
	Country  string `json:"country,omitempty"`
	PostCode string `json:"post_code,omitempty"`
}

type wireTaxNumber struct {
	ID     int64  `json:"id"`
	Type   string `json:"type"`
	Number string `json:"number"`
}

type wireVerification struct {
	Personal wireVerificationState `json:"personal"`
	Company  wireVerificationState `json:"company"`
	Extended wireVerificationState `json:"extended"`
}

type wireVerificationState struct {
	Status string `json:"status"`
}

type wireIdentificationDocument struct {
	Type           string `json:"type,omitempty"`
	Field          string `json:"field,omitempty"`
	Value          string `json:"value,omitempty"`
	Country        string `json:"country,omitempty"`
	DateRemovedUTC string `json:"date_removed_utc,omitempty"`
}

type wireIdentificationDocuments struct {
	IdentificationDocuments []wireIdentificationDocument `json:"identification_documents"`
}

// wireDisbursementMethod is a saved disbursement method. Saved methods never change, so
// the store keeps them in this shape.
type wireDisbursementMethod struct {
	ID                       int64                  `json:"id"`
	Type                     string                 `json:"type"`
	Currency                 string                 `json:"currency"`
	AccountName              string                 `json:"account_name,omitempty"`
	AccountType              string                 `json:"account_type,omitempty"`
	BankABARoutingNumber     string                 `json:"bank_aba_routing_number,omitempty"`
	BankAccountNumber        string                 `json:"bank_account_number,omitempty"`
	BankBranchNumber         string                 `json:"bank_branch_number,omitempty"`
	BankIBAN                 string                 `json:"bank_iban,omitempty"`
	BankName                 string                 `json:"bank_name,omitempty"`
	BankSwiftCode            string                 `json:"bank_swift_code,omitempty"`
	BankSortCode             string                 `json:"bank_sort_code,omitempty"`
	InternationalRoutingCode string                 `json:"international_routing_code,omitempty"`
	BankAddress              *wireAddress           `json:"bank_address,omitempty"`
	BeneficiaryAddress       *wireAddress           `json:"beneficiary_address,omitempty"`
	IntermediaryBank         *wireIntermediaryBank  `json:"intermediary_bank,omitempty"`
	IntermediaryBanks        []wireIntermediaryBank `json:"intermediary_banks,omitempty"`
	AdditionalInformation    string                 `json:"additional_information,omitempty"`
	ClearingSystemCode       string                 `json:"clearing_system_code,omitempty"`
	MemberID                 string                 `json:"member_id,omitempty"`
}

type wireIntermediaryBank struct {
	ClearingSystemCode   string       `json:"clearing_system_code,omitempty"`
	BankAddress          *wireAddress `json:"bank_address,omitempty"`
	BankName             string       `json:"bank_name,omitempty"`
	BankAccountNumber    string       `json:"bank_account_number,omitempty"`
	BankSwiftCode        string       `json:"bank_swift_code,omitempty"`
	MemberID             string       `json:"member_id,omitempty"`
	BankABARoutingNumber string       `json:"bank_aba_routing_number,omitempty"`
}

type wireDisbursementMethods struct {
	AvailableDisbursementMethods []wireAvailableMethod     `json:"available_disbursement_methods"`
	SavedDisbursementMethods     []*wireDisbursementMethod `json:"saved_disbursement_methods"`
	SelectedDisbursementMethod   *wireDisbursementMethod   `json:"selected_disbursement_method"`
	AvailableCurrencies          []string                  `json:"available_currencies"`
}

type wireAvailableMethod struct {
	Type     string `json:"type"`
	Total    number `json:"total"`
	Currency string `json:"currency,omitempty"`
}

type wireConditionalMethod struct {
	Type       string   `json:"type"`
	Total      number   `json:"total"`
	Conditions []string `json:"conditions"`
}

type wirePaymentMethods struct {
	AvailablePaymentMethods              []wireAvailableMethod   `json:"available_payment_methods"`
	ConditionallyAvailablePaymentMethods []wireConditionalMethod `json:"conditionally_available_payment_methods"`
	TotalWithoutPaymentFee               string                  `json:"total_without_payment_fee"`
}

type wireLandingPage struct {
	LandingPage string `json:"landing_page"`
}

type wireWireDetails struct {
	BankName               string      `json:"bank_name"`
	BankAddress            string      `json:"bank_address"`
	StructuredBankAddress  wireAddress `json:"structured_bank_address"`
	RoutingNumber          string      `json:"routing_number"`
	SwiftCode              string      `json:"swift_code"`
	CreditAccountName      string      `json:"credit_account_name"`
	CreditAccountNumber    string      `json:"credit_account_number"`
	AdditionalInstructions string      `json:"additional_instructions"`
}

type wireAPIKey struct {
	ID                 int64  `json:"id"`
	Name               string `json:"name"`
	Key                string `json:"key,omitempty"` // only in the answer that creates the key
	DateCreated        string `json:"date_created"`
	IsActive           bool   `json:"is_active"`
	LastFourCharacters string `json:"last_four_characters"`
}

type wireAPIKeys struct {
	APIKeys []wireAPIKey `json:"api_keys"`
}

type wireWebhook struct {
	ID  int64  `json:"id"`
	URL string `json:"url"`
}

type wireWebhooks struct {
	Webhooks []wireWebhook `json:"webhooks"`
}

type wireTimeline struct {
	TimelineEntries []wireTimelineEntry `json:"timeline_entries"`
}

type wireTimelineEntry struct {
	ID        int64  `json:"id"`
	Event     string `json:"event"`
	EventType string `json:"event_type"`
	Date      string `json:"date"`
	ItemID    int64  `json:"item_id,omitempty"`
	Customer  string `json:"customer,omitempty"`
	Message   string `json:"message"`
}

type wireStatistics struct {
	Queries    wireStatisticsQueries `json:"queries"`
	TimeData   []wireTimeData        `json:"time_data"`
	Aggregates wireAggregates        `json:"aggregates"`
}

type wireStatisticsQueries struct {
	StartDate string `json:"start_date"`
	EndDate   string `json:"end_date"`
	Interval  string `json:"interval"`
}

type wireTimeData struct {
	Value int64  `json:"value"`
	Label string `json:"label"`
}

type wireAggregates struct {
	Total int64 `json:"total"`
}

type wirePayments struct {
	Payments []wireCardPayment `json:"payments"`
}

type wireCardPayment struct {
	LastFour        string `json:"last_four"`
	ExpirationMonth int    `json:"expiration_month"`
	ExpirationYear  int    `json:"expiration_year"`
	Brand           string `json:"brand"`
	CustomerID      int64  `json:"customer_id"`
	TransactionID   int64  `json:"transaction_id"`
	Amount          string `json:"amount"`
	Date            string `json:"date"`
}

type wireReport struct {
	TaskID      string `json:"task_id"`
	Status      string `json:"status"`
	CreatedAt   string `json:"created_at"`
	CompletedAt string `json:"completed_at"`
}

type wireReports struct {
	Reports []wireReport `json:"reports"`
}

type wireCount struct {
	Count int `json:"count"`
}

type wireDownload struct {
	URL string `json:"url"`
}

// wireError is the body of every error but validation errors: the emulator's choice,
// since the spec does not show one. Action, State and ItemID name what refused an action.
type wireError struct {
	Error   string `json:"error"`
	Message string `json:"message"`
	Action  string `json:"action,omitempty"`
	State   string `json:"state,omitempty"`
	ItemID  int64  `json:"item_id,omitempty"`
}

// wireValidation is the spec's validation body (part 7).
type wireValidation struct {
	Errors fieldErrors `json:"errors"`
}
