package webhook_test

// The example runs against the emulator of package escrowtest, which calls the webhook as
// the API would; against the real API, register the handler's public HTTPS address.

import (
	"context"
	"fmt"
	"log"
	"net/http/httptest"
	"time"

	escrow "github.com/escrowkit/escrow-go"
	"github.com/escrowkit/escrow-go/escrowtest"
	"github.com/escrowkit/escrow-go/webhook"
)

// A Handler receives the API's deliveries, confirms each by fetching the transaction, and
// hands the callback each state change once, in order, with the transaction as fetched.
func ExampleNewHandler() {
	srv := escrowtest.NewServer(escrowtest.WithClock(time.Date(2025, 5, 1, 12, 0, 0, 0, time.UTC)))
	defer srv.Close()
	market, buyer := srv.AddPartner("market@example.com"), srv.AddCustomer("buyer@example.com")
	client, err := escrow.NewClient(market.Email, market.APIKey, escrow.WithBaseURL(srv.URL), escrow.WithHTTPClient(srv.Client()))
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()

	events := make(chan string, 16)
	h := webhook.NewHandler(client, func(ctx context.Context, ev webhook.ConfirmedEvent) error {
		// The transaction is the API's, fetched after the delivery: act on its state.
		events <- fmt.Sprintf("%s: transaction %d is %s", ev.Name, ev.Transaction.ID, ev.Transaction.State())
		return nil // an error would make the handler call again later
	}, webhook.Options{})
	receiver := httptest.NewServer(h)
	defer receiver.Close()
	defer h.Shutdown(ctx) // waits for queued events; leaves no goroutine behind

	if _, err := client.Webhooks.Create(ctx, escrow.Me, receiver.URL+"/escrow/webhook"); err != nil {
		log.Fatal(err)
	}
	tx, err := client.Transactions.Create(ctx, &escrow.CreateTransactionRequest{
		Currency: escrow.USD, Description: "A bicycle",
		Parties: []escrow.PartyInput{{Role: escrow.RoleBuyer, Customer: buyer.Email}, {Role: escrow.RoleSeller, Customer: escrow.Me}},
		Items: []escrow.ItemInput{{Title: "Bicycle", Type: escrow.ItemGeneralMerchandise, InspectionPeriod: escrow.Days(1),
			Schedule: []escrow.ScheduleInput{{Amount: escrow.MustAmount("250.00"), PayerCustomer: buyer.Email, BeneficiaryCustomer: escrow.Me}}}},
	})
	if err != nil {
		log.Fatal(err)
	}
	// settle waits for the emulator's deliveries, then for the handler to process them, so
	// that the example's output does not depend on timing.
	settle := func() {
		if err := srv.FlushWebhooks(ctx); err != nil {
			log.Fatal(err)
		}
		if err := h.Flush(ctx); err != nil {
			log.Fatal(err)
		}
	}
	settle()
	if _, err := client.Transactions.Agree(ctx, tx.ID, escrow.AsCustomer(buyer.Email)); err != nil {
		log.Fatal(err)
	}
	settle()
	close(events)
	for e := range events {
		fmt.Println(e)
	}
	// Output:
	// create: transaction 200001 is awaiting_agreement
	// agree: transaction 200001 is awaiting_payment
}
