package escrow_test

import (
	"context"
	"errors"
	"fmt"
	"log"

	escrow "github.com/escrowkit/escrow-go"
)

// lampSale is a sale of one lamp at price, in a category.
func lampSale(price string, category escrow.Category) *escrow.CreateTransactionRequest {
	return &escrow.CreateTransactionRequest{
		Currency: escrow.USD, Description: "A lamp",
		Parties: []escrow.PartyInput{
			{Role: escrow.RoleBuyer, Customer: "buyer@example.com"},
			{Role: escrow.RoleSeller, Customer: "seller@example.com"},
		},
		Items: []escrow.ItemInput{{
			Title: "Lamp", Type: escrow.ItemGeneralMerchandise, Category: category,
			InspectionPeriod: escrow.Days(3), Quantity: 1,
			Schedule: []escrow.ScheduleInput{{Amount: escrow.MustAmount(price),
				PayerCustomer: "buyer@example.com", BeneficiaryCustomer: "seller@example.com"}},
		}},
	}
}

// A sale too small to pay its escrow fee is refused at creation.
func ExampleAPIError_Is_belowMinimumFee() {
	srv := exampleEmulator()
	defer srv.Close()
	buyer := connectAs(srv, srv.AddCustomer("buyer@example.com"))

	_, err := buyer.Transactions.Create(context.Background(), lampSale("15.00", ""))
	var apiErr *escrow.APIError
	if errors.Is(err, escrow.ErrBelowMinimumFee) && errors.As(err, &apiErr) {
		fmt.Println("raise the price:", apiErr.StatusCode)
	}
	// Output: raise the price: 422
}

// The live API checks a category against the item type, with lists of its own: it refuses
// business_and_internet on general merchandise.
func ExampleAPIError_Is_invalidCategory() {
	srv := exampleEmulator()
	defer srv.Close()
	buyer := connectAs(srv, srv.AddCustomer("buyer@example.com"))

	_, err := buyer.Transactions.Create(context.Background(), lampSale("300.00", escrow.CategoryBusinessAndInternet))
	var ve *escrow.ValidationError
	if errors.Is(err, escrow.ErrInvalidCategory) && errors.As(err, &ve) {
		for _, f := range ve.Fields() {
			fmt.Println(f.Path, f.Messages)
		}
	}
	// Output: items[0].category [This is not a valid category for a general_merchandise item]
}

// As-Customer is for partner accounts the provider has approved.
func ExampleAPIError_Is_partnerNotApproved() {
	srv := exampleEmulator()
	defer srv.Close()
	market := connectAs(srv, srv.AddCustomer("market@example.com")) // not an approved partner
	ctx := context.Background()

	tx, err := market.Transactions.Create(ctx, lampSale("300.00", ""))
	if err != nil {
		log.Fatal(err)
	}
	_, err = market.Transactions.Agree(ctx, tx.ID, escrow.AsCustomer("buyer@example.com"))
	fmt.Println(errors.Is(err, escrow.ErrPartnerNotApproved), errors.Is(err, escrow.ErrForbidden))
	// Output: true true
}

// An e-mail address that has an account cannot be created again; name it in a
// transaction instead.
func ExampleAPIError_Is_customerExists() {
	srv := exampleEmulator()
	defer srv.Close()
	market := connectAs(srv, srv.AddPartner("market@example.com"))
	srv.AddCustomer("buyer@example.com")

	_, err := market.Customers.Create(context.Background(), &escrow.CreateCustomerRequest{Email: "buyer@example.com"})
	if errors.Is(err, escrow.ErrCustomerExists) {
		fmt.Println("buyer@example.com has an account already")
	}
	// Output: buyer@example.com has an account already
}

// An action the transaction's state does not allow yet: the seller ships once the buyer
// has paid. NextSteps says what the transaction waits for.
func ExampleAPIError_Is_actionNotAllowed() {
	srv := exampleEmulator()
	defer srv.Close()
	buyer := connectAs(srv, srv.AddCustomer("buyer@example.com"))
	seller := connectAs(srv, srv.AddCustomer("seller@example.com"))
	ctx := context.Background()

	tx, err := buyer.Transactions.Create(ctx, lampSale("300.00", ""))
	if err != nil {
		log.Fatal(err)
	}
	if _, err := seller.Transactions.Agree(ctx, tx.ID); err != nil {
		log.Fatal(err)
	}
	_, err = seller.Transactions.Ship(ctx, tx.ID, nil)
	if errors.Is(err, escrow.ErrActionNotAllowed) {
		tx, _ := seller.Transactions.Get(ctx, tx.ID)
		fmt.Println("not yet:", tx.NextSteps())
	}
	// Output: not yet: buyer@example.com pays
}
