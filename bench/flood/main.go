// Command flood sends a webhook.Handler (at its default options) -forged deliveries
// naming distinct made-up transactions from -senders goroutines, with -secret through a
// handler that requires a delivery secret the forger does not know. With the flood in
// flight, a real event of a known transaction and a new transaction's creation are made.
// It prints one line of key=value pairs: how long the real events took to be handed
// over, real deliveries not answered 2xx, the fetches spent on forgeries in the first
// -window and their share of the endpoint's limit, and the most goroutines held.
package main

import (
	"context"
	"flag"
	"fmt"

	"github.com/escrowkit/escrow-go/bench"
)

func main() {
	cfg := bench.DefaultFlood
	flag.IntVar(&cfg.Forged, "forged", cfg.Forged, "forged deliveries, each of another made-up id")
	flag.IntVar(&cfg.Senders, "senders", cfg.Senders, "goroutines sending them")
	flag.BoolVar(&cfg.Secret, "secret", false, "the handler requires a delivery secret; the forger guesses")
	flag.DurationVar(&cfg.Window, "window", cfg.Window, "count the fetches spent on forgeries this long from the flood's start")
	flag.DurationVar(&cfg.MaxWait, "max-wait", cfg.MaxWait, "give up waiting for the real events after this long")
	flag.Parse()

	bench.Command("flood", func(ctx context.Context) error {
		res, err := bench.RunFlood(ctx, cfg)
		if err != nil {
			return err
		}
		fmt.Println(res)
		return nil
	})
}
