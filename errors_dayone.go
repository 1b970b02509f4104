package escrow

import (
	"encoding/json"
	"errors"
	"net/http"
	"regexp"
	"strings"
)

// The failures everyone meets in their first days with the API, as sentinels, so that a
// caller matches them with errors.Is rather than by the text of a message. Each is
// recognised on the answers the live API gave (API-NOTES records them) and on the
// emulator's (package escrowtest); the error stays an *APIError (or *ValidationError), so
// errors.As and the status sentinels (ErrForbidden, …) still work.
var (
	// ErrBelowMinimumFee: creating a transaction was refused because the buyer would pay
	// less than the escrow fee, or than the minimum fee (422: "The amount paid by the
	// buyer must be at least the amount of the escrow fee"). Raise the price.
	ErrBelowMinimumFee = errors.New("escrow: below the minimum escrow fee")
	// ErrInvalidCategory: an item's category is not valid for its type (422 at
	// items[N].category: "This is not a valid category for a general_merchandise item").
	// The live API's lists differ from the docs': it refuses business_and_internet on
	// general_merchandise.
	ErrInvalidCategory = errors.New("escrow: category not valid for the item type")
	// ErrPartnerNotApproved: the caller sent As-Customer but is not an approved partner
	// (403: "Partner account not authorized to perform actions on behalf of customers.").
	// The provider approves partner accounts; until then, act with each party's own key.
	ErrPartnerNotApproved = errors.New("escrow: partner account not approved for As-Customer")
	// ErrCustomerExists: creating a customer was refused because the e-mail address
	// already has an account (403, spec part 4). The account's details can no longer be
	// supplied through the API; name the customer by e-mail address in a transaction.
	ErrCustomerExists = errors.New("escrow: customer already exists")
	// ErrActionNotAllowed: an action was refused in the transaction's current state, or
	// for the caller's role in it ("Buyer is unable to agree at this stage in the
	// transaction"; the emulator's 400 "cannot ship: transaction … is awaiting_payment").
	// Transaction.NextSteps says who must do what now.
	ErrActionNotAllowed = errors.New("escrow: action not allowed at this stage")
)

// dayOneRule recognises the answer of one day-one failure.
type dayOneRule struct {
	err     error
	matches func(e *APIError, a answerText) bool
}

// dayOneRules are the day-one sentinels with how each answer is recognised. The texts are
// matched without case and anywhere in the message or the field messages, since the live
// API's exact wording is known from single samples.
var dayOneRules = []dayOneRule{
	{ErrBelowMinimumFee, func(e *APIError, a answerText) bool {
		return a.says(belowMinimumFee)
	}},
	{ErrInvalidCategory, func(e *APIError, a answerText) bool {
		return a.says(invalidCategory) || a.atField("category")
	}},
	{ErrPartnerNotApproved, func(e *APIError, a answerText) bool {
		return a.says(partnerNotApproved)
	}},
	{ErrCustomerExists, func(e *APIError, a answerText) bool {
		// Spec part 4: creating a customer answers 403 only when the address has an
		// account; the other 403s of that route name As-Customer or the partner.
		createsCustomer := e.Method == http.MethodPost && strings.HasSuffix("/"+strings.Trim(e.Path, "/"), "/customer")
		return a.says(customerExists) ||
			(createsCustomer && e.StatusCode == http.StatusForbidden && !a.says(delegation))
	}},
	{ErrActionNotAllowed, func(e *APIError, a answerText) bool {
		return a.says(actionNotAllowed) || e.Code == "invalid_state"
	}},
}

var (
	belowMinimumFee    = regexp.MustCompile(`(?i)at least the (amount of the )?escrow fee|minimum (escrow )?fee`)
	invalidCategory    = regexp.MustCompile(`(?i)not a valid category`)
	partnerNotApproved = regexp.MustCompile(`(?i)partner account not (authori[sz]ed|approved)`)
	customerExists     = regexp.MustCompile(`(?i)(account|customer|e-?mail)\b.*\balready (exists|has an account|registered)|already has an account`)
	delegation         = regexp.MustCompile(`(?i)as-customer|partner`)
	// actionNotAllowed is the live API's "Buyer is unable to agree at this stage in the
	// transaction", read as a pattern for the other roles and actions, and the
	// emulator's "cannot ship: transaction 7 is awaiting_payment".
	actionNotAllowed = regexp.MustCompile(`(?i)\bis unable to \w+ at this stage\b|^cannot \w+: (transaction|item) \d+ is `)
)

// isDayOne reports whether the answer is the day-one failure target names.
func (e *APIError) isDayOne(target error) bool {
	if e.StatusCode < 400 || e.StatusCode >= 500 {
		return false
	}
	for _, r := range dayOneRules {
		if r.err == target {
			return r.matches(e, readAnswer(e))
		}
	}
	return false
}

// answerText is what an answer says: its message and its field errors.
type answerText struct {
	message string
	fields  []FieldError
}

// readAnswer reads the message and the field errors of an answer's body.
func readAnswer(e *APIError) answerText {
	a := answerText{message: e.Message}
	var doc struct {
		Errors json.RawMessage `json:"errors"`
	}
	if json.Unmarshal(e.Body, &doc) == nil && len(doc.Errors) > 0 {
		a.fields = flattenErrors(doc.Errors)
	}
	return a
}

// says reports whether the message or a field message matches re.
func (a answerText) says(re *regexp.Regexp) bool {
	if re.MatchString(a.message) {
		return true
	}
	for _, f := range a.fields {
		for _, m := range f.Messages {
			if re.MatchString(m) {
				return true
			}
		}
	}
	return false
}

// atField reports whether a field error is at a field of this name ("items[0].category").
func (a answerText) atField(name string) bool {
	for _, f := range a.fields {
		if f.Path == name || strings.HasSuffix(f.Path, "."+name) {
			return true
		}
	}
	return false
}

// explanation is what Error says after the status: the server's message, and for a 401,
// that the credentials were refused. The client always sends credentials (NewClient
// requires them), so a 401 means they were refused, whatever the server's text says of
// authentication being required.
func (e *APIError) explanation() string {
	if e.StatusCode == http.StatusUnauthorized && !strings.Contains(strings.ToLower(e.Message), "refused") {
		return "credentials refused (the e-mail address and API key were sent; check both, and that they belong to this environment): " + e.Message
	}
	return e.Message
}
