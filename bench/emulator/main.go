// Command emulator measures the emulator's throughput for GET /transaction/{id} with
// -stored transactions in its store and for POST /transaction, each beside a bare TLS
// handler that answers the same bytes. It prints one line of key=value pairs per
// operation, with the ratio of the two rates.
package main

import (
	"context"
	"flag"
	"fmt"

	"github.com/escrowkit/escrow-go/bench"
)

func main() {
	cfg := bench.DefaultEmulatorLoad
	flag.IntVar(&cfg.Stored, "stored", cfg.Stored, "transactions stored before reads are measured")
	flag.IntVar(&cfg.Workers, "workers", cfg.Workers, "concurrent client goroutines")
	flag.DurationVar(&cfg.Duration, "duration", cfg.Duration, "length of each measurement")
	flag.Parse()

	bench.Command("emulator", func(ctx context.Context) error {
		results, err := bench.RunEmulatorLoad(ctx, cfg)
		if err != nil {
			return err
		}
		for _, r := range results {
			fmt.Println(r)
		}
		return nil
	})
}
