package escrowotel_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"testing"

	escrow "github.com/escrowkit/escrow-go"
	"github.com/escrowkit/escrow-go/escrowotel"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// oneTransaction answers every request with a small transaction, in memory, so that the
// benchmark measures the client and its observer rather than a network.
type oneTransaction struct{}

func (oneTransaction) RoundTrip(req *http.Request) (*http.Response, error) {
	doc := `{"id": 29292, "currency": "usd", "parties": [{"role": "buyer", "customer": "me", "agreed": true}], "items": []}`
	return &http.Response{
		StatusCode: http.StatusOK, Header: http.Header{"Content-Type": {"application/json"}, "Ratelimit-Remaining": {"1000"}},
		Body: io.NopCloser(bytes.NewReader([]byte(doc))), ContentLength: int64(len(doc)), Request: req,
	}, nil
}

// BenchmarkObserverCost is one Get without an observer, and with escrowotel recording a
// span (sampled, exported in batches to nowhere) and the duration histogram: the observer's cost per call.
func BenchmarkObserverCost(b *testing.B) {
	run := func(b *testing.B, opts ...escrow.Option) {
		b.ReportAllocs()
		c, err := escrow.NewClient("partner@example.com", "4171_benchmarkkey", append([]escrow.Option{
			escrow.WithBaseURL("https://api.example.test/2017-09-01/"), escrow.WithHTTPClient(&http.Client{Transport: oneTransaction{}}),
		}, opts...)...)
		if err != nil {
			b.Fatal(err)
		}
		ctx := context.Background()
		for b.Loop() {
			if _, err := c.Transactions.Get(ctx, 29292); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.Run("none", func(b *testing.B) { run(b) })
	b.Run("escrowotel", func(b *testing.B) {
		tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(discard{}))
		defer tp.Shutdown(context.Background())
		mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
		run(b, escrow.WithObserver(escrowotel.New(escrowotel.WithTracerProvider(tp), escrowotel.WithMeterProvider(mp))))
	})
}

// discard is an exporter that drops what it is given, as a fast backend would take it.
type discard struct{}

func (discard) ExportSpans(context.Context, []sdktrace.ReadOnlySpan) error { return nil }
func (discard) Shutdown(context.Context) error                             { return nil }
