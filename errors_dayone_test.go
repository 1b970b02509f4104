package escrow

import (
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/escrowkit/escrow-go/escrowtest"
)

var dayOneSentinels = []error{ErrBelowMinimumFee, ErrInvalidCategory, ErrPartnerNotApproved, ErrCustomerExists, ErrActionNotAllowed}

// answerError builds the error the client returns for an answer.
func answerError(status int, method, path, body string) error {
	apiErr, fields, _ := parseErrorBody(method, path, &http.Response{StatusCode: status, Header: http.Header{}}, []byte(body))
	if len(fields) > 0 {
		return &ValidationError{APIError: apiErr, fields: fields}
	}
	return apiErr
}

// onlySentinel fails the test unless err matches want and no other day-one sentinel, and
// still unwraps to an *APIError of the status.
func onlySentinel(t *testing.T, what string, err, want error, status int) {
	t.Helper()
	for _, s := range dayOneSentinels {
		if got := errors.Is(err, s); got != (s == want) {
			t.Errorf("%s: errors.Is(err, %v) = %v (%v)", what, s, got, err)
		}
	}
	var ae *APIError
	if !errors.As(err, &ae) || ae.StatusCode != status {
		t.Errorf("%s: %v does not unwrap to an *APIError %d", what, err, status)
	}
}

// TestDayOneSentinelsMatchTheLiveAnswers: the answers the live API gave (API-NOTES, "What
// the live API answered", and the spec) match their sentinel and no other, in the shapes a
// client may meet them; answers that are not day-one failures match none.
func TestDayOneSentinelsMatchTheLiveAnswers(t *testing.T) {
	tests := []struct {
		name               string
		status             int
		method, path, body string
		want               error
	}{
		{"fee as a message", 422, "POST", "/2017-09-01/transaction",
			`{"message": "The amount paid by the buyer must be at least the amount of the escrow fee."}`, ErrBelowMinimumFee},
		{"fee as a field", 422, "POST", "/2017-09-01/transaction",
			`{"errors": {"items": {"all": ["The amount paid by the buyer must be at least the amount of the escrow fee"]}}}`, ErrBelowMinimumFee},
		{"category", 422, "POST", "/2017-09-01/transaction",
			`{"errors": {"items": {"0": {"category": ["This is not a valid category for a general_merchandise item"]}}}}`, ErrInvalidCategory},
		{"partner on an action", 403, "PATCH", "/2017-09-01/transaction/29",
			`{"message": "Partner account not authorized to perform actions on behalf of customers."}`, ErrPartnerNotApproved},
		{"partner on a web link", 403, "GET", "/2017-09-01/transaction/29/web_link/agree",
			`{"error": "Partner account not authorized to perform actions on behalf of customers."}`, ErrPartnerNotApproved},
		{"customer exists, no body", 403, "POST", "/2017-09-01/customer", ``, ErrCustomerExists},
		{"customer exists, a message", 403, "POST", "/2017-09-01/customer",
			`{"message": "A customer with this email address already exists."}`, ErrCustomerExists},
		{"buyer cannot agree", 400, "GET", "/2017-09-01/transaction/29/web_link/agree",
			`{"message": "Buyer is unable to agree at this stage in the transaction"}`, ErrActionNotAllowed},
		{"seller cannot ship, 403", 403, "PATCH", "/2017-09-01/transaction/29",
			`{"error": "Seller is unable to ship at this stage in the transaction"}`, ErrActionNotAllowed},
		{"cannot ship, as text", 422, "PATCH", "/2017-09-01/transaction/29",
			"Seller is unable to ship at this stage in the transaction\n", ErrActionNotAllowed},

		{"another 403", 403, "PATCH", "/2017-09-01/transaction/29", `{"message": "Forbidden"}`, nil},
		{"another 422", 422, "POST", "/2017-09-01/transaction", `{"errors": {"currency": ["Not a valid choice."]}}`, nil},
		{"a 500 that names the fee", 500, "POST", "/2017-09-01/transaction",
			`{"message": "must be at least the amount of the escrow fee"}`, nil},
	}
	for _, tc := range tests {
		onlySentinel(t, tc.name, answerError(tc.status, tc.method, tc.path, tc.body), tc.want, tc.status)
	}
}

// TestDayOneSentinelsMatchTheEmulator: the emulator's answers to the same mistakes match
// the same sentinels through the SDK.
func TestDayOneSentinelsMatchTheEmulator(t *testing.T) {
	srv := escrowtest.NewServer()
	defer srv.Close()
	connect := func(a escrowtest.Account) *Client {
		c, err := NewClient(a.Email, a.APIKey, WithEmulator(srv))
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	buyer, unapproved := connect(srv.AddCustomer("buyer@example.com")), connect(srv.AddCustomer("market@example.com"))
	seller := connect(srv.AddCustomer("seller@example.com"))
	ctx := t.Context()
	sale := func(amount string, category Category) *CreateTransactionRequest {
		return &CreateTransactionRequest{
			Currency: USD, Description: "A lamp",
			Parties: []PartyInput{{Role: RoleBuyer, Customer: "buyer@example.com"}, {Role: RoleSeller, Customer: "seller@example.com"}},
			Items: []ItemInput{{Title: "Lamp", Type: ItemGeneralMerchandise, Category: category, InspectionPeriod: Days(3), Quantity: 1,
				Schedule: []ScheduleInput{{Amount: MustAmount(amount), PayerCustomer: "buyer@example.com", BeneficiaryCustomer: "seller@example.com"}}}},
		}
	}

	_, err := buyer.Transactions.Create(ctx, sale("15.00", ""))
	onlySentinel(t, "a 15.00 sale", err, ErrBelowMinimumFee, 422)
	_, err = buyer.Transactions.Create(ctx, sale("300.00", CategoryBusinessAndInternet))
	onlySentinel(t, "business_and_internet merchandise", err, ErrInvalidCategory, 422)

	tx, err := unapproved.Transactions.Create(ctx, sale("300.00", ""))
	if err != nil {
		t.Fatal(err)
	}
	_, err = unapproved.Transactions.Agree(ctx, tx.ID, AsCustomer("buyer@example.com"))
	onlySentinel(t, "As-Customer from an unapproved partner", err, ErrPartnerNotApproved, 403)
	_, err = buyer.Customers.Create(ctx, &CreateCustomerRequest{Email: "seller@example.com"})
	onlySentinel(t, "creating an existing customer", err, ErrCustomerExists, 403)
	_, err = seller.Transactions.Ship(ctx, tx.ID, nil)
	onlySentinel(t, "shipping before payment", err, ErrActionNotAllowed, 400)
	_, err = unapproved.Transactions.GetWebLink(ctx, tx.ID, "agree")
	onlySentinel(t, "the agree page of a creator that is no buyer", err, ErrActionNotAllowed, 400)
	if err != nil && !strings.Contains(err.Error(), "Buyer is unable to agree at this stage in the transaction") {
		t.Errorf("the agree page of a creator that is no buyer: %v, want the live API's message", err)
	}
}

// TestRefusedCredentialsSaySo: a wrong key, or one the emulator forgot, is reported as
// refused (ErrUnauthorized), never as credentials being required; so is a live 401 whose
// body says nothing of it.
func TestRefusedCredentialsSaySo(t *testing.T) {
	srv := escrowtest.NewServer()
	defer srv.Close()
	acct := srv.AddCustomer("buyer@example.com")
	c, err := NewClient(acct.Email, acct.APIKey+"x", WithEmulator(srv))
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Customers.Get(t.Context(), Me)
	if !errors.Is(err, ErrUnauthorized) || !strings.Contains(err.Error(), "refused") || strings.Contains(err.Error(), "required") {
		t.Errorf("a wrong key: %v, want it said refused, not required", err)
	}
	if strings.Contains(err.Error(), acct.APIKey) {
		t.Errorf("a wrong key: the error %q holds the key", err)
	}
	err = answerError(401, "GET", "/2017-09-01/customer/me", `{"message": "Unauthorized"}`)
	if !strings.Contains(err.Error(), "credentials refused") || !errors.Is(err, ErrUnauthorized) {
		t.Errorf("a live 401: %v, want it said refused", err)
	}
}
