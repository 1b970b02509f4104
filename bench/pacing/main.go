// Command pacing measures goodput under a rate limit: the SDK and a go-retryablehttp
// client at its defaults, each against its own emulator that allows -limit requests per
// -window to GET /transaction/{id}, with -workers goroutines for -duration. It prints one
// line of key=value pairs per client.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"

	"github.com/escrowkit/escrow-go/bench"
)

func main() {
	cfg := bench.DefaultPacing
	flag.IntVar(&cfg.Limit, "limit", cfg.Limit, "requests the emulator allows per window and endpoint")
	flag.DurationVar(&cfg.Window, "window", cfg.Window, "the emulator's rate-limit window")
	flag.IntVar(&cfg.Workers, "workers", cfg.Workers, "concurrent goroutines per client")
	flag.DurationVar(&cfg.Duration, "duration", cfg.Duration, "how long each client runs")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	for _, client := range []string{bench.ClientSDK, bench.ClientRetryableHTTP} {
		res, err := bench.RunPacing(ctx, cfg, client)
		if err != nil {
			fmt.Fprintln(os.Stderr, "pacing:", err)
			os.Exit(1)
		}
		fmt.Println(res)
	}
}
