// Command storm sends a webhook.Handler (at its default options) -deliveries copies of one
// real delivery, or with -unique as many invented event names, from -senders goroutines,
// creates an unrelated transaction while the storm lasts, and prints one line of
// key=value pairs: the confirming fetches the storm cost, the unrelated event's latency
// and the heap's growth.
package main

import (
	"context"
	"flag"
	"fmt"

	"github.com/escrowkit/escrow-go/bench"
)

func main() {
	cfg := bench.DefaultStorm
	flag.IntVar(&cfg.Deliveries, "deliveries", cfg.Deliveries, "copies to send")
	flag.IntVar(&cfg.Senders, "senders", cfg.Senders, "goroutines sending them")
	flag.BoolVar(&cfg.Unique, "unique", false, "send a different invented event name in each copy")
	flag.Parse()

	bench.Command("storm", func(ctx context.Context) error {
		res, err := bench.RunStorm(ctx, cfg)
		if err != nil {
			return err
		}
		fmt.Println(res)
		return nil
	})
}
