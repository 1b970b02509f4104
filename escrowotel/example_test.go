package escrowotel_test

import (
	"context"
	"fmt"
	"strings"

	escrow "github.com/escrowkit/escrow-go"
	"github.com/escrowkit/escrow-go/escrowotel"
	"github.com/escrowkit/escrow-go/escrowtest"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

// A marketplace's checkout traces its escrow calls: each is a span (kind internal) inside
// the checkout's, named by its route, with a client span inside it for each HTTP request
// the call sent (one here; a retry or a resend would add one). A program exports to its backend instead of keeping spans in memory,
// and may leave out the options to use the global providers.
func Example() {
	srv := escrowtest.NewServer()
	defer srv.Close()
	seller := srv.AddCustomer("seller@example.com")
	srv.AddCustomer("buyer@example.com")

	spans := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(spans))
	obs := escrowotel.New(escrowotel.WithTracerProvider(tp))
	client, err := escrow.NewClient(seller.Email, seller.APIKey, escrow.WithEmulator(srv), escrow.WithObserver(obs))
	if err != nil {
		panic(err)
	}

	ctx, checkout := tp.Tracer("shop").Start(context.Background(), "checkout")
	tx, err := client.Transactions.Create(ctx, &escrow.CreateTransactionRequest{
		Currency: escrow.USD, Description: "A laptop",
		Parties: []escrow.PartyInput{{Role: escrow.RoleBuyer, Customer: "buyer@example.com"}, {Role: escrow.RoleSeller, Customer: escrow.Me}},
		Items: []escrow.ItemInput{{
			Title: "Laptop", Type: escrow.ItemGeneralMerchandise, Category: escrow.CategoryComputerHardwareAndSoftware,
			InspectionPeriod: escrow.Days(1), Quantity: 1,
			Schedule: []escrow.ScheduleInput{{Amount: escrow.MustAmount("1500.00"), PayerCustomer: "buyer@example.com", BeneficiaryCustomer: escrow.Me}},
		}},
	})
	if err != nil {
		panic(err)
	}
	_, _ = client.Transactions.Get(ctx, tx.ID)
	checkout.End()

	printTree(spans.GetSpans(), trace.SpanID{}, "")
	// Output:
	// checkout [internal]
	//   POST /transaction [internal]  http.response.status_code=201
	//     POST /transaction [client]  http.response.status_code=201
	//   GET /transaction/{id} [internal]  http.response.status_code=200
	//     GET /transaction/{id} [client]  http.response.status_code=200
}

// printTree prints the spans under parent, indented, with their kinds and status codes.
func printTree(spans tracetest.SpanStubs, parent trace.SpanID, indent string) {
	for _, s := range spans.Snapshots() {
		if s.Parent().SpanID() != parent {
			continue
		}
		var status []string
		for _, kv := range s.Attributes() {
			if kv.Key == "http.response.status_code" {
				status = append(status, "  http.response.status_code="+kv.Value.String())
			}
		}
		fmt.Println(indent + s.Name() + " [" + s.SpanKind().String() + "]" + strings.Join(status, ""))
		printTree(spans, s.SpanContext().SpanID(), indent+"  ")
	}
}
