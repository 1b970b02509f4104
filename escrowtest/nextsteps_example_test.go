package escrowtest_test

import (
	"context"
	"fmt"
	"time"

	escrow "github.com/escrowkit/escrow-go"
	"github.com/escrowkit/escrow-go/escrowtest"
)

// A sale whose seller never chose how to be paid out stops after the inspection period,
// accepted and paid out 0.00; NextSteps says why, so that a test can fail with the reason.
func ExampleEmulator_NextSteps() {
	ctx := context.Background()
	srv := escrowtest.NewServer()
	defer srv.Close()
	buyer, seller := srv.AddCustomer("buyer@example.com"), srv.AddCustomer("seller@example.com")
	asBuyer, _ := escrow.NewClient(buyer.Email, buyer.APIKey, escrow.WithEmulator(srv))
	asSeller, _ := escrow.NewClient(seller.Email, seller.APIKey, escrow.WithEmulator(srv))

	tx, err := asBuyer.Transactions.Create(ctx, &escrow.CreateTransactionRequest{
		Currency: escrow.USD, Description: "A road bike",
		Parties: []escrow.PartyInput{{Role: escrow.RoleBuyer, Customer: escrow.Me}, {Role: escrow.RoleSeller, Customer: seller.Email}},
		Items: []escrow.ItemInput{{Title: "Road bike", Type: escrow.ItemGeneralMerchandise, InspectionPeriod: escrow.Days(3),
			Schedule: []escrow.ScheduleInput{{Amount: escrow.MustAmount("1500.00"), PayerCustomer: escrow.Me, BeneficiaryCustomer: seller.Email}}}},
	})
	if err != nil {
		panic(err)
	}
	asSeller.Transactions.Agree(ctx, tx.ID)
	srv.ApprovePayment(tx.ID)
	asSeller.Transactions.Ship(ctx, tx.ID, nil)
	asBuyer.Transactions.Receive(ctx, tx.ID)
	srv.Advance(72 * time.Hour) // the inspection period ends: the bike is accepted

	p, _ := srv.NextSteps(tx.ID)
	for _, s := range p.Steps {
		fmt.Println("next:", s)
	}
	for _, u := range p.Unpaid {
		fmt.Printf("unpaid: %s to %s: %s\n", u.Amount, u.Customer, u.Reason)
	}

	// The SDK reads the same from the transaction, as any party sees it.
	tx, _ = asBuyer.Transactions.Get(ctx, tx.ID)
	fmt.Println(tx.State(), tx.NextSteps())
	// Output:
	// next: seller@example.com selects a disbursement method
	// unpaid: 1500.00 to seller@example.com: no disbursement method selected
	// accepted [seller@example.com selects a disbursement method]
}
