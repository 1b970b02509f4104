// Package bench measures escrow-go beside the code a user would write without it, and
// checks its reliability against the emulator.
//
//	go test -run '^$' -bench . ./bench/   the SDK against hand-written net/http (TLS loopback and in memory)
//	go run ./bench/pacing                 goodput under a rate limit, SDK beside go-retryablehttp
//	                                      (-replicas N -redis URL: N clients of one account sharing Redis)
//	go run ./bench/chaos                  duplicates, losses and untyped errors under injected faults
//	go run ./bench/emulator               the emulator's throughput beside a bare TLS handler
//	go run ./bench/storm                  what a replay storm of webhook deliveries costs a webhook.Handler
//	go run ./bench/flood                  16,000 forged deliveries of made-up ids against a webhook.Handler
//	                                      (-secret: with a delivery secret the forger does not know)
//	go run ./bench/receive                receiving over 1, 2, 4 replicas and one store: facts/s, fetches
//	                                      and commits per fact, handover latency, rows after pruning
//
// Each command prints lines of key=value pairs. The work is done by RunPacing, RunChaos,
// RunEmulatorLoad, RunStorm, RunReceive and RunFlood, which the package's tests run briefly
// so that they keep working; the tests assert counts, never timings, which vary too much
// on a shared machine.
//
// The commands share one main, Main: a command's directory holds only
// `func main() { bench.Main("NAME") }`, and its flags and output live beside its harness
// (chaosProgram in chaos.go, and so on), in the table of programs.
//
// Results and the machine they ran on are in BENCHMARKS.md at the repository root.
package bench
