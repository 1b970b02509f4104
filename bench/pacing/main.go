// Command pacing measures goodput under a rate limit: the SDK and a go-retryablehttp
// client at its defaults, each against its own emulator that allows one account -limit
// requests per -window to GET /transaction/{id}. Each client runs as -replicas separate
// clients of that account with -workers goroutines each, for -duration. With -redis, the
// SDK runs twice: its replicas pacing each on its own memory (client=sdk), then sharing it
// in that Redis (client=sdk-redis). It prints one line of key=value pairs per client.
//
//	go run ./bench/pacing -replicas 8 -workers 2 -redis redis://127.0.0.1:6379/0
package main

import "github.com/escrowkit/escrow-go/bench"

func main() { bench.Main("pacing") }
