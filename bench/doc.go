// Package bench measures escrow-go beside the code a user would write without it.
//
//	go test -run '^$' -bench . -benchmem ./bench/   the SDK against hand-written net/http
//	go run ./bench/pacing                           goodput under a rate limit
//	go run ./bench/chaos                            duplicates and losses under faults
//	go run ./bench/emulator                         the emulator's throughput
//
// Results and the machine they ran on are in BENCHMARKS.md at the repository root.
package bench
