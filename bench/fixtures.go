package bench

import (
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
