package escrow

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

func TestCustomerGetMeAndID(t *testing.T) {
	c, mt := setup(t)
	var rec recorder
	mt.RegisterResponder("GET", testBase+"customer/me", rec.then(respond(200, readTestdata(t, "customer.json"))))
	mt.RegisterResponder("GET", testBase+"customer/8", rec.then(respond(200, readTestdata(t, "customer.json"))))
	ctx := context.Background()
	for _, ref := range []CustomerRef{Me, CustomerID(8)} {
		cu, err := c.Customers.Get(ctx, ref)
		if err != nil {
			t.Fatalf("Get(%v): %v", ref, err)
		}
		if cu.ID != 8 || cu.Email != "keanu.reaves@test.escrow.com" || cu.DisplayName != "Keanu R." {
			t.Errorf("customer = %+v", cu)
		}
		if !cu.DateOfBirth.Equal(time.Date(1982, 3, 10, 0, 0, 0, 0, time.UTC)) {
			t.Errorf("date_of_birth without an offset = %v", cu.DateOfBirth)
		}
		if cu.Address.Country != "US" || cu.Address.PostCode != "10203" || cu.ShippingAddress.City != "Oakland" {
			t.Errorf("addresses = %+v %+v", cu.Address, cu.ShippingAddress)
		}
		if cu.Verification.Personal.Status != VerificationVerified || cu.Verification.Extended.Status != VerificationPending {
			t.Errorf("verification = %+v", cu.Verification)
		}
		if cu.Company.CompanyName != "Reaves Motors" || cu.TaxNumbers[0].Type != "ssn" || cu.Webhooks[0].ID != 5 ||
			cu.DisbursementMethods[0].Type != DisbursementACH || !cu.CustomerEmailVerification.Verified ||
			!cu.ElectronicVerification.Available || strings.Join(cu.ElectronicVerification.DocumentsSupported, ",") != "passport,drivers_license" {
			t.Errorf("customer = %+v", cu)
		}
	}
	if got := rec.all(); got[0].EscapedPath != "/2017-09-01/customer/me" || got[1].EscapedPath != "/2017-09-01/customer/8" {
		t.Errorf("paths %s, %s", got[0].EscapedPath, got[1].EscapedPath)
	}
}

func TestCustomerCreateOnAnExistingEmailIsForbidden(t *testing.T) {
	c, mt := setup(t)
	mt.RegisterResponder("POST", testBase+"customer", respond(403, `{"error": "Forbidden"}`))
	_, err := c.Customers.Create(context.Background(), &CreateCustomerRequest{Email: "taken@example.com"})
	if !errors.Is(err, ErrForbidden) || !strings.Contains(err.Error(), "may already exist for taken@example.com") {
		t.Errorf("err = %v", err)
	}
}

func TestCustomerCreateWithAnEmptyAnswer(t *testing.T) {
	c, mt := setup(t)
	mt.RegisterResponder("POST", testBase+"customer", respond(201, ``))
	cu, err := c.Customers.Create(context.Background(), &CreateCustomerRequest{Email: "new@example.com"})
	if err != nil || cu.Email != "new@example.com" {
		t.Fatalf("Create = %+v, %v", cu, err)
	}
}

func TestCustomersCreateOnAnExistingEmail(t *testing.T) {
	for _, body := range []string{`{"error": "Forbidden"}`, `{"message": "Customer already exists"}`, ``} {
		c, mt := setup(t)
		var rec recorder
		mt.RegisterResponder("POST", testBase+"customer", rec.then(respond(403, body)))
		_, err := c.Customers.Create(context.Background(), &CreateCustomerRequest{Email: "dana@studio.example", FirstName: "Dana"})
		if !errors.Is(err, ErrForbidden) {
			t.Fatalf("body %q: err = %v, want ErrForbidden", body, err)
		}
		var apiErr *APIError
		if !errors.As(err, &apiErr) || apiErr.StatusCode != 403 || !strings.Contains(apiErr.Message, "dana@studio.example") ||
			!strings.Contains(err.Error(), "may already exist for dana@studio.example") {
			t.Errorf("body %q: error %q does not name the e-mail", body, err)
		}
		if rec.count() != 1 {
			t.Errorf("%d requests", rec.count())
		}
	}
	c, _ := setup(t)
	for _, req := range []*CreateCustomerRequest{nil, {FirstName: "No e-mail"}} {
		if _, err := c.Customers.Create(context.Background(), req); !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("Create(%+v) = %v", req, err)
		}
	}
}

func TestCustomersCreateOtherErrorsAreNotRewritten(t *testing.T) {
	c, mt := setup(t)
	mt.RegisterResponder("POST", testBase+"customer", respond(422, `{"errors": {"email": ["not an e-mail address"]}}`))
	_, err := c.Customers.Create(context.Background(), &CreateCustomerRequest{Email: "nope"})
	var ve *ValidationError
	if !errors.As(err, &ve) || ve.Field("email")[0] != "not an e-mail address" || strings.Contains(err.Error(), "already exists") {
		t.Errorf("err = %v", err)
	}
}

func TestUpdateAPIKeySendsOnlyTheFieldsSet(t *testing.T) {
	for _, tt := range []struct {
		name string
		req  UpdateAPIKeyRequest
		want string
	}{
		{"name only", UpdateAPIKeyRequest{Name: ptr("renamed")}, `{"name":"renamed"}`},
		{"deactivate only", UpdateAPIKeyRequest{IsActive: ptr(false)}, `{"is_active":false}`},
		{"activate only", UpdateAPIKeyRequest{IsActive: ptr(true)}, `{"is_active":true}`},
		{"both", UpdateAPIKeyRequest{Name: ptr("ci"), IsActive: ptr(true)}, `{"name":"ci","is_active":true}`},
		{"empty name is still sent", UpdateAPIKeyRequest{Name: ptr("")}, `{"name":""}`},
		{"nothing", UpdateAPIKeyRequest{}, `{}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c, mt := setup(t)
			var rec recorder
			mt.RegisterResponder("PATCH", testBase+"customer/me/api_key/2", rec.then(respond(200, `{"id": 2, "name": "ci", "is_active": true}`)))
			if _, err := c.Customers.UpdateAPIKey(context.Background(), Me, 2, &tt.req); err != nil {
				t.Fatal(err)
			}
			if got := string(rec.all()[0].Body); got != tt.want {
				t.Errorf("body = %s, want %s", got, tt.want)
			}
		})
	}
	c, _ := setup(t)
	if _, err := c.Customers.UpdateAPIKey(context.Background(), Me, 2, nil); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("nil request: %v", err)
	}
}
