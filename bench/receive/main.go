// Command receive measures webhook receiving at scale: -replicas webhook.Handlers over one
// store (-store memory, sqlite, or a postgres:// URL of a server where it may create and
// drop databases; "pgtest" starts a throwaway PostgreSQL 15), each delivery sent to one
// of them in turn, while -lifecycles sales are taken to completion by -workers goroutines
// on the emulator; then the recorded deliveries are replayed as fast as possible to fresh
// replicas over a fresh store. It prints one line of key=value pairs per replica count
// (-replicas takes a list: 1,2,4): facts per second, fetches and PostgreSQL commits per
// fact, handover latency, duplicates, losses, and the store's rows before and after
// pruning.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/escrowkit/escrow-go/bench"
	"github.com/escrowkit/escrow-go/internal/pgtest"
)

func main() {
	cfg := bench.ReceiveConfig{Lifecycles: 200, Workers: 8}
	replicas := flag.String("replicas", "1,2,4", "replica counts to measure, comma-separated")
	flag.StringVar(&cfg.Store, "store", "sqlite", "memory, sqlite, pgtest, or a postgres:// URL")
	flag.IntVar(&cfg.Lifecycles, "lifecycles", cfg.Lifecycles, "sales taken to completion (8 facts each)")
	flag.IntVar(&cfg.Workers, "workers", cfg.Workers, "goroutines making sales at once")
	flag.Parse()

	bench.Command("receive", func(ctx context.Context) error {
		dir, err := os.MkdirTemp("", "escrow-receive-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		cfg.Dir = dir
		if cfg.Store == "pgtest" {
			pg, err := pgtest.Start()
			if err != nil {
				return err
			}
			defer pg.Stop()
			cfg.Store = pg.DSN("postgres")
		}
		for _, r := range strings.Split(*replicas, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(r))
			if err != nil {
				return fmt.Errorf("-replicas: %w", err)
			}
			cfg.Replicas = n
			res, err := bench.RunReceive(ctx, cfg)
			if err != nil {
				return err
			}
			fmt.Println(res)
		}
		return nil
	})
}
