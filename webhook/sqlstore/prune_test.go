package sqlstore_test

import (
	"context"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	escrow "github.com/escrowkit/escrow-go"
	"github.com/escrowkit/escrow-go/escrowtest"
	"github.com/escrowkit/escrow-go/webhook"
	"github.com/escrowkit/escrow-go/webhook/sqlstore"
)

// TestRowsStayFlatUnderSteadyLoad: a receiver with a short retention, reconciling (and so
// pruning) as it runs, takes eight rounds of sales through the store; the rows of facts and
// leases stay as many as a retention's worth of sales, not growing with the rounds, while
// each finished sale leaves one tombstone row.
func TestRowsStayFlatUnderSteadyLoad(t *testing.T) {
	for name, mk := range engines(t) {
		t.Run(name, func(t *testing.T) {
			s := open(t, mk(t))
			srv := escrowtest.NewServer(escrowtest.WithRateLimit(0, time.Minute))
			defer srv.Close()
			p, b, se := srv.AddPartner("market@example.com"), srv.AddCustomer("buyer@example.com"), srv.AddCustomer("seller@example.com")
			partner := apiClient(t, srv, p)
			var handed atomic.Int64
			h := webhook.NewHandler(partner, func(context.Context, webhook.ConfirmedEvent) error { handed.Add(1); return nil },
				webhook.Options{Store: s, Workers: 1, Retention: 300 * time.Millisecond})
			hook := httptest.NewServer(h)
			defer hook.Close()
			if _, err := partner.Webhooks.Create(t.Context(), escrow.Me, hook.URL+"/escrow"); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(t.Context())
			done := make(chan struct{})
			go func() { defer close(done); h.RunReconciler(ctx, 20*time.Millisecond) }()
			defer func() {
				cancel()
				<-done
				sctx, scancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer scancel()
				h.Shutdown(sctx)
			}()
			const rounds, sales = 8, 10
			var factRows []int
			for range rounds {
				for range sales {
					tx, err := partner.Transactions.Create(t.Context(), &escrow.CreateTransactionRequest{Currency: escrow.USD, Description: "Lamp",
						Parties: []escrow.PartyInput{{Role: escrow.RoleBuyer, Customer: b.Email}, {Role: escrow.RoleSeller, Customer: se.Email}},
						Items: []escrow.ItemInput{{Title: "Lamp", Type: escrow.ItemGeneralMerchandise, Schedule: []escrow.ScheduleInput{
							{Amount: escrow.MustAmount("40"), PayerCustomer: b.Email, BeneficiaryCustomer: se.Email}}}}})
					if err != nil {
						t.Fatal(err)
					}
					if _, err := partner.Transactions.Cancel(t.Context(), tx.ID, "out of stock"); err != nil {
						t.Fatal(err)
					}
				}
				if err := srv.FlushWebhooks(t.Context()); err != nil {
					t.Fatal(err)
				}
				if err := h.Flush(t.Context()); err != nil {
					t.Fatal(err)
				}
				time.Sleep(400 * time.Millisecond) // longer than the retention: the next prune takes this round
				factRows = append(factRows, count(t, s, `SELECT count(*) FROM escrow_webhook_facts`)+count(t, s, `SELECT count(*) FROM escrow_webhook_leases`))
			}
			tombstones := count(t, s, `SELECT count(*) FROM escrow_webhook_transactions WHERE finished = 2`)
			t.Logf("fact and lease rows after each round: %v; %d tombstones; %d events handed over", factRows, tombstones, handed.Load())
			for i, n := range factRows {
				if n > 3*2*sales {
					t.Errorf("round %d: %d rows of facts and leases, more than three rounds' worth: the store grows", i, n)
				}
			}
			if tombstones < (rounds-3)*sales || handed.Load() != rounds*sales*2 {
				t.Errorf("%d tombstones, %d events handed over; want a tombstone per pruned sale and every event once", tombstones, handed.Load())
			}
		})
	}
}

func count(t *testing.T, s *sqlstore.Store, q string) int {
	t.Helper()
	var n int
	if err := s.DB().QueryRowContext(t.Context(), q).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}
