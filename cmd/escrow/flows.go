package main

import (
	"context"
	"fmt"
	"time"

	escrow "github.com/escrowkit/escrow-go"
)

// flow is one kind of escrow the demo walks through: what it creates, how the buyer pays,
// and how the goods change hands.
type flow struct {
	name    string // in the reference and the banner: "sale", "milestone", "domain"
	title   string
	payment escrow.PaymentMethodType
	// request builds the creation body. The partner is the broker ("me") and takes a
	// commission, so the demo needs no fourth account.
	request func(buyer, seller, reference string, now time.Time) *escrow.CreateTransactionRequest
	// deliver ships, receives and accepts the goods, printing a row per step.
	deliver func(ctx context.Context, d *demo, tx *escrow.Transaction) (*escrow.Transaction, error)
}

// flowFor returns the flow the flags ask for.
func flowFor(milestone, domain bool) flow {
	switch {
	case milestone:
		return flow{name: "milestone", title: "a milestone contract", payment: escrow.PaymentWireTransfer, request: milestoneRequest, deliver: deliverMilestones}
	case domain:
		return flow{name: "domain", title: "a domain name sale", payment: escrow.PaymentPaypal, request: domainRequest,
			deliver: deliverWhole(&escrow.ShippingInformation{AuthorizationType: escrow.AuthorizationPush}, "handed over by a registrar push")}
	}
	return flow{name: "sale", title: "a sale of goods", payment: escrow.PaymentCreditCard, request: saleRequest,
		deliver: deliverWhole(&escrow.ShippingInformation{TrackingInformation: &escrow.TrackingInformation{
			Carrier: "UPS", TrackingID: "1Z999AA10123456784", CarrierContact: "+1 800 742 5877",
		}}, "tracking: UPS 1Z999AA10123456784")}
}

// saleRequest is a guitar sold through a marketplace that brokers it for a 5 % commission
// paid by the buyer; buyer and seller share the escrow fee.
func saleRequest(buyer, seller, reference string, _ time.Time) *escrow.CreateTransactionRequest {
	shared := []escrow.FeeInput{
		{Type: escrow.FeeEscrow, PayerCustomer: buyer, Split: escrow.SplitHalf},
		{Type: escrow.FeeEscrow, PayerCustomer: seller, Split: escrow.SplitHalf},
	}
	return &escrow.CreateTransactionRequest{
		Currency:    escrow.USD,
		Description: "1962 Fender Stratocaster, sunburst",
		Reference:   reference,
		Parties:     parties(buyer, seller),
		Items: []escrow.ItemInput{
			{
				Title: "Fender Stratocaster (1962)", Type: escrow.ItemGeneralMerchandise,
				Category: escrow.CategoryCollectibles, InspectionPeriod: escrow.Days(3), Quantity: 1,
				Schedule: []escrow.ScheduleInput{{Amount: escrow.MustAmount("2500.00"), PayerCustomer: buyer, BeneficiaryCustomer: seller}},
				Fees:     shared,
			},
			brokerFee("125.00", buyer),
		},
	}
}

// milestoneRequest is a web site built in three paid stages; the seller pays the commission.
func milestoneRequest(buyer, seller, reference string, now time.Time) *escrow.CreateTransactionRequest {
	milestone := func(title, amount string, dueInDays int) escrow.ItemInput {
		return escrow.ItemInput{
			Title: title, Type: escrow.ItemMilestone, Category: escrow.CategoryBusinessAndInternet,
			InspectionPeriod: escrow.Days(3), Quantity: 1,
			Schedule: []escrow.ScheduleInput{{
				Amount: escrow.MustAmount(amount), PayerCustomer: buyer, BeneficiaryCustomer: seller,
				DueDate: escrow.Timestamp{Time: now.AddDate(0, 0, dueInDays)},
			}},
		}
	}
	return &escrow.CreateTransactionRequest{
		Currency:    escrow.USD,
		Description: "Shop web site: design, build and launch",
		Reference:   reference,
		Parties:     parties(buyer, seller),
		Items: []escrow.ItemInput{
			milestone("Design", "1500.00", 14),
			milestone("Build", "3000.00", 30),
			milestone("Launch", "500.00", 45),
			brokerFee("250.00", seller),
		},
	}
}

// domainRequest is a domain name handed over by a registrar push.
func domainRequest(buyer, seller, reference string, _ time.Time) *escrow.CreateTransactionRequest {
	return &escrow.CreateTransactionRequest{
		Currency:    escrow.USD,
		Description: "The domain name example.org",
		Reference:   reference,
		Parties:     parties(buyer, seller),
		Items: []escrow.ItemInput{
			{
				Title: "example.org", Type: escrow.ItemDomainName, InspectionPeriod: escrow.Days(1), Quantity: 1,
				Schedule: []escrow.ScheduleInput{{Amount: escrow.MustAmount("1000.00"), PayerCustomer: buyer, BeneficiaryCustomer: seller}},
			},
			brokerFee("50.00", buyer),
		},
	}
}

// parties are the buyer, the seller, and the creator as broker.
func parties(buyer, seller string) []escrow.PartyInput {
	return []escrow.PartyInput{
		{Role: escrow.RoleBuyer, Customer: buyer},
		{Role: escrow.RoleSeller, Customer: seller},
		{Role: escrow.RoleBroker, Customer: escrow.Me},
	}
}

// brokerFee is the commission item: only type and schedule (spec part 2).
func brokerFee(amount, payer string) escrow.ItemInput {
	return escrow.ItemInput{
		Type:     escrow.ItemBrokerFee,
		Schedule: []escrow.ScheduleInput{{Amount: escrow.MustAmount(amount), PayerCustomer: payer, BeneficiaryCustomer: escrow.Me}},
	}
}

// deliverWhole acts on the whole transaction: the seller ships (through As-Customer), the
// buyer receives (likewise) and accepts with their own key, since the API refuses accept
// through As-Customer.
func deliverWhole(info *escrow.ShippingInformation, shipped string) func(context.Context, *demo, *escrow.Transaction) (*escrow.Transaction, error) {
	return func(ctx context.Context, d *demo, tx *escrow.Transaction) (*escrow.Transaction, error) {
		tx, err := d.partner.Transactions.Ship(ctx, tx.ID, info, escrow.AsCustomer(d.sellerEmail))
		if err := d.row(ctx, "ship", actorSellerAs, tx, err, shipped); err != nil {
			return nil, err
		}
		tx, err = d.partner.Transactions.Receive(ctx, tx.ID, escrow.AsCustomer(d.buyerEmail))
		if err := d.row(ctx, "receive", actorBuyerAs, tx, err, "the inspection period starts"); err != nil {
			return nil, err
		}
		d.note("the API refuses accept through As-Customer: the buyer accepts with their own key")
		tx, err = d.buyer.Transactions.Accept(ctx, tx.ID)
		return tx, d.row(ctx, "accept", actorBuyer, tx, err)
	}
}

// deliverMilestones takes each milestone through ship, receive and accept on its own item
// path. The buyer leaves the last one alone: when its inspection period ends the API
// accepts it, which the demo shows by moving the emulator's clock instead of waiting.
func deliverMilestones(ctx context.Context, d *demo, tx *escrow.Transaction) (*escrow.Transaction, error) {
	var milestones []escrow.Item
	for _, it := range tx.Items {
		if it.Type == escrow.ItemMilestone {
			milestones = append(milestones, it)
		}
	}
	d.note("the API refuses accept through As-Customer: the buyer accepts with their own key")
	for i, m := range milestones {
		var err error
		if tx, err = shipAndReceive(ctx, d, tx, m); err != nil {
			return nil, err
		}
		if i < len(milestones)-1 {
			tx, err = d.buyer.Transactions.ActOnItem(ctx, tx.ID, m.ID, &escrow.ActionRequest{Action: escrow.ActionAccept})
			err = d.row(ctx, "accept "+m.Title, actorBuyer, tx, err)
		} else {
			tx, err = inspectionEnds(ctx, d, tx, m)
		}
		if err != nil {
			return nil, err
		}
	}
	return tx, nil
}

// shipAndReceive has the seller ship a milestone and the buyer receive it, through
// As-Customer.
func shipAndReceive(ctx context.Context, d *demo, tx *escrow.Transaction, m escrow.Item) (*escrow.Transaction, error) {
	tx, err := d.partner.Transactions.ActOnItem(ctx, tx.ID, m.ID, &escrow.ActionRequest{Action: escrow.ActionShip}, escrow.AsCustomer(d.sellerEmail))
	if err := d.row(ctx, "ship "+m.Title, actorSellerAs, tx, err); err != nil {
		return nil, err
	}
	tx, err = d.partner.Transactions.ActOnItem(ctx, tx.ID, m.ID, &escrow.ActionRequest{Action: escrow.ActionReceive}, escrow.AsCustomer(d.buyerEmail))
	if err := d.row(ctx, "receive "+m.Title, actorBuyerAs, tx, err); err != nil {
		return nil, err
	}
	return tx, nil
}

// inspectionEnds moves the emulator's clock past a milestone's inspection period, at the
// end of which the API accepts it.
func inspectionEnds(ctx context.Context, d *demo, tx *escrow.Transaction, m escrow.Item) (*escrow.Transaction, error) {
	period := m.InspectionPeriod.Duration()
	d.emu.Advance(period)
	tx, err := d.partner.Transactions.Get(ctx, tx.ID)
	step := fmt.Sprintf("%s: %s", m.Title, plural(int(period/(24*time.Hour)), "day passes", "days pass"))
	return tx, d.row(ctx, step, actorClock, tx, err)
}
