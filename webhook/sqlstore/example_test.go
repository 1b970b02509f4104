package sqlstore_test

// The example receives the emulator's webhooks into a SQLite file. Against the real API,
// register the handler's public HTTPS address; with replicas, open the same PostgreSQL
// database ("postgres://…") from each.

import (
	"context"
	"database/sql"
	"fmt"
	"log"
	"net/http/httptest"
	"os"
	"path/filepath"

	escrow "github.com/escrowkit/escrow-go"
	"github.com/escrowkit/escrow-go/escrowtest"
	"github.com/escrowkit/escrow-go/webhook"
	"github.com/escrowkit/escrow-go/webhook/sqlstore"
)

// A store opened from a DSN keeps what the handler handed over across restarts, and
// TxCallback records each event in the same database transaction as the callback's own
// writes: an order row and the record of its event commit together, or not at all.
func ExampleStore_TxCallback() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "sqlstore-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	store, err := sqlstore.Open(ctx, "sqlite:"+filepath.Join(dir, "webhooks.db"))
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()
	if _, err := store.DB().ExecContext(ctx, `CREATE TABLE orders (tx_id INTEGER, event TEXT, state TEXT)`); err != nil {
		log.Fatal(err)
	}

	srv := escrowtest.NewServer()
	defer srv.Close()
	market, buyer := srv.AddPartner("market@example.com"), srv.AddCustomer("buyer@example.com")
	client, err := escrow.NewClient(market.Email, market.APIKey, escrow.WithEmulator(srv))
	if err != nil {
		log.Fatal(err)
	}
	h := webhook.NewHandler(client, store.TxCallback(func(ctx context.Context, tx *sql.Tx, ev webhook.ConfirmedEvent) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO orders VALUES (?, ?, ?)`, ev.Transaction.ID, string(ev.Name), string(ev.Transaction.State()))
		return err
	}), webhook.Options{Store: store})
	receiver := httptest.NewServer(h)
	defer receiver.Close()
	defer h.Shutdown(ctx)
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
	// settle waits for the emulator's deliveries, then for the handler, so that the output
	// does not depend on timing.
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

	rows, err := store.DB().QueryContext(ctx, `SELECT tx_id, event, state FROM orders ORDER BY rowid`)
	if err != nil {
		log.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		var event, state string
		if err := rows.Scan(&id, &event, &state); err != nil {
			log.Fatal(err)
		}
		fmt.Println(id, event, state)
	}
	// Output:
	// 200001 create awaiting_agreement
	// 200001 agree awaiting_payment
}
