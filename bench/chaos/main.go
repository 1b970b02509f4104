// Command chaos drives transactions through their lifecycle with the SDK against the
// emulator while it injects every kind of fault, then checks the emulator's state against
// what the SDK answered. It prints one line of key=value pairs; untyped errors, if any,
// are listed on stderr.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"

	"github.com/escrowkit/escrow-go/bench"
)

func main() {
	cfg := bench.DefaultChaos
	flag.IntVar(&cfg.Ops, "ops", cfg.Ops, "SDK calls to make")
	flag.Float64Var(&cfg.FaultRate, "fault-rate", cfg.FaultRate, "fraction of requests that meet a fault, in [0, 1)")
	flag.IntVar(&cfg.Workers, "workers", cfg.Workers, "concurrent goroutines")
	flag.DurationVar(&cfg.Timeout, "timeout", cfg.Timeout, "the http.Client timeout of each attempt")
	flag.Int64Var(&cfg.Seed, "seed", cfg.Seed, "seed of the emulator's fault injection")
	flag.IntVar(&cfg.RateLimit, "limit", cfg.RateLimit, "the emulator's rate limit per endpoint per second; 0 turns it off, and injected 429s then carry no rate-limit headers")
	flag.Parse()

	bench.Command("chaos", func(ctx context.Context) error {
		res, err := bench.RunChaos(ctx, cfg)
		if err != nil {
			return err
		}
		fmt.Println(res)
		for _, u := range res.Untyped {
			fmt.Fprintln(os.Stderr, "untyped error:", u)
		}
		return nil
	})
}
