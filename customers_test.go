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
