package bench

import (
	"time"

	escrow "github.com/escrowkit/escrow-go"
)

// merchandise is a one-item general-merchandise transaction between buyer and seller. It
// is the smallest creation the emulator accepts that can go through ship, receive and
// accept without domain-specific details.
func merchandise(buyer, seller, reference string) *escrow.CreateTransactionRequest {
	return &escrow.CreateTransactionRequest{
		Currency:    escrow.USD,
		Description: "Stratocaster, 1962",
		Reference:   reference,
		Parties: []escrow.PartyInput{
			{Role: escrow.RoleBuyer, Customer: buyer},
			{Role: escrow.RoleSeller, Customer: seller},
		},
		Items: []escrow.ItemInput{{
			Title:            "Stratocaster",
			Type:             escrow.ItemGeneralMerchandise,
			Category:         escrow.CategoryMoviesAndMusic,
			InspectionPeriod: escrow.Days(3),
			Quantity:         1,
			Schedule: []escrow.ScheduleInput{{
				Amount:              escrow.MustAmount("9500.00"),
				PayerCustomer:       buyer,
				BeneficiaryCustomer: seller,
			}},
		}},
	}
}

// milestones is a two-milestone service contract: each milestone is shipped, received and
// accepted on its own, through the item endpoint.
func milestones(buyer, seller, reference string) *escrow.CreateTransactionRequest {
	due := escrow.Timestamp{Time: time.Now().AddDate(0, 1, 0).UTC().Truncate(time.Second)}
	req := &escrow.CreateTransactionRequest{
		Currency:    escrow.USD,
		Description: "A website in two stages",
		Reference:   reference,
		Parties: []escrow.PartyInput{
			{Role: escrow.RoleBuyer, Customer: buyer},
			{Role: escrow.RoleSeller, Customer: seller},
		},
	}
	for _, title := range []string{"Design", "Build"} {
		req.Items = append(req.Items, escrow.ItemInput{
			Title: title, Type: escrow.ItemMilestone, Category: escrow.CategoryBusinessAndInternet,
			InspectionPeriod: escrow.Days(3), Quantity: 1,
			Schedule: []escrow.ScheduleInput{{
				Amount: escrow.MustAmount("1500.00"), PayerCustomer: buyer, BeneficiaryCustomer: seller, DueDate: due,
			}},
		})
	}
	return req
}
