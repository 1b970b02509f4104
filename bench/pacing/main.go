// Command pacing measures goodput under a rate limit: the SDK and a go-retryablehttp
// client at its defaults, each against its own emulator that allows one account -limit
// requests per -window to GET /transaction/{id}. Each client runs as -replicas separate
// clients of that account with -workers goroutines each, for -duration. With -redis, the
// SDK runs twice: its replicas pacing each on its own memory (client=sdk), then sharing it
// in that Redis (client=sdk-redis). It prints one line of key=value pairs per client.
//
//	go run ./bench/pacing -replicas 8 -workers 2 -redis redis://127.0.0.1:6379/0
package main

import (
	"context"
	"flag"
	"fmt"

	"github.com/escrowkit/escrow-go/bench"
)

func main() {
	cfg := bench.DefaultPacing
	flag.IntVar(&cfg.Limit, "limit", cfg.Limit, "requests the emulator allows per window and endpoint")
	flag.DurationVar(&cfg.Window, "window", cfg.Window, "the emulator's rate-limit window")
	flag.IntVar(&cfg.Replicas, "replicas", cfg.Replicas, "separate clients of the one account")
	flag.IntVar(&cfg.Workers, "workers", cfg.Workers, "concurrent goroutines per replica")
	flag.StringVar(&cfg.RedisURL, "redis", "", "a Redis URL (redis://host:port/db): also run the SDK's replicas sharing their rate-limit memory there")
	flag.DurationVar(&cfg.Duration, "duration", cfg.Duration, "how long each client runs")
	flag.Parse()

	clients := []string{bench.ClientSDK, bench.ClientRetryableHTTP}
	if cfg.RedisURL != "" {
		clients = []string{bench.ClientSDK, bench.ClientSDKRedis, bench.ClientRetryableHTTP}
	}
	bench.Command("pacing", func(ctx context.Context) error {
		for _, client := range clients {
			res, err := bench.RunPacing(ctx, cfg, client)
			if err != nil {
				return err
			}
			fmt.Println(res)
		}
		return nil
	})
}
