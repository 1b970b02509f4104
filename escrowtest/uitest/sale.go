package uitest

import (
	"context"
	"fmt"

	escrow "github.com/escrowkit/escrow-go"
	"github.com/escrowkit/escrow-go/escrowtest"
)

// The accounts of Market's sales.
const (
	PartnerEmail = "market@example.com"
	BuyerEmail   = "buyer@example.com"
	SellerEmail  = "seller@example.com"
)

// Market is a marketplace on an emulator: an approved partner that sets up sales between
// a buyer and a seller and agrees for both As-Customer, as the README's sale by hand does.
// The parties' own steps (ship, receive, choosing how to be paid) are SDK calls, as a test
// suite makes them; the emulator's steps are left to the page's controls.
type Market struct {
	Partner, Buyer, Seller *escrow.Client
}

// NewMarket makes the accounts on srv. With a webhook URL, the buyer registers it, so that
// the page has webhook calls to show.
func NewMarket(ctx context.Context, srv *escrowtest.Server, webhook string) (*Market, error) {
	var m Market
	for _, a := range []struct {
		c       **escrow.Client
		account escrowtest.Account
	}{{&m.Partner, srv.AddPartner(PartnerEmail)}, {&m.Buyer, srv.AddCustomer(BuyerEmail)}, {&m.Seller, srv.AddCustomer(SellerEmail)}} {
		c, err := escrow.NewClient(a.account.Email, a.account.APIKey, escrow.WithEmulator(srv))
		if err != nil {
			return nil, err
		}
		*a.c = c
	}
	if webhook != "" {
		if _, err := m.Buyer.Webhooks.Create(ctx, escrow.Me, webhook); err != nil {
			return nil, fmt.Errorf("registering the buyer's webhook: %w", err)
		}
	}
	return &m, nil
}

// Sell creates a sale of one item and agrees to it for both parties: it then waits for the
// buyer's payment.
func (m *Market) Sell(ctx context.Context, title, amount string) (int64, error) {
	price, err := escrow.ParseAmount(amount)
	if err != nil {
		return 0, err
	}
	tx, err := m.Partner.Transactions.Create(ctx, &escrow.CreateTransactionRequest{
		Currency: escrow.USD, Description: title,
		Parties: []escrow.PartyInput{{Role: escrow.RoleBuyer, Customer: BuyerEmail}, {Role: escrow.RoleSeller, Customer: SellerEmail}},
		Items: []escrow.ItemInput{{
			Title: title, Type: escrow.ItemGeneralMerchandise, Category: escrow.CategoryCollectibles,
			InspectionPeriod: escrow.Days(3), Quantity: 1,
			Schedule: []escrow.ScheduleInput{{Amount: price, PayerCustomer: BuyerEmail, BeneficiaryCustomer: SellerEmail}},
		}},
	})
	if err != nil {
		return 0, err
	}
	for _, party := range []string{BuyerEmail, SellerEmail} {
		if _, err := m.Partner.Transactions.Agree(ctx, tx.ID, escrow.AsCustomer(party)); err != nil {
			return 0, fmt.Errorf("agreeing for %s: %w", party, err)
		}
	}
	return tx.ID, nil
}

// Deliver has the partner mark the goods shipped for the seller and received for the
// buyer: the buyer's inspection period starts.
func (m *Market) Deliver(ctx context.Context, id int64) error {
	if _, err := m.Partner.Transactions.Ship(ctx, id, &escrow.ShippingInformation{TrackingInformation: &escrow.TrackingInformation{Carrier: "UPS", TrackingID: "1Z999"}}, escrow.AsCustomer(SellerEmail)); err != nil {
		return fmt.Errorf("shipping: %w", err)
	}
	if _, err := m.Partner.Transactions.Receive(ctx, id, escrow.AsCustomer(BuyerEmail)); err != nil {
		return fmt.Errorf("receiving: %w", err)
	}
	return nil
}

// ChoosePayout has the seller select a bank account to be paid out to.
func (m *Market) ChoosePayout(ctx context.Context, id int64) error {
	_, err := m.Seller.Transactions.SelectDisbursementMethod(ctx, id, &escrow.DisbursementMethod{
		Type: escrow.DisbursementACH, AccountName: "Sam Seller", AccountType: "checking",
		BankABARoutingNumber: "121000248", BankAccountNumber: "000123456789", BankName: "First Bank",
	})
	return err
}
