// Command receive measures webhook receiving at scale: -replicas webhook.Handlers over one
// store (-store memory, sqlite, or a postgres:// URL of a server where it may create and
// drop databases; "pgtest" starts a throwaway PostgreSQL 15), each delivery sent to one
// of them in turn, while -lifecycles sales are taken to completion by -workers goroutines
// on the emulator (-gap apart: an idle receiver; 0: bursts); then the recorded deliveries
// are replayed as fast as possible to fresh replicas over a fresh store (-api-latency
// delays each of the replicas' API calls, as a network to the live API does). It prints one
// line of key=value pairs per replica count (-replicas takes a list: 1,2,4): facts per
// second, fetches and PostgreSQL commits per fact, handover latency, duplicates, losses,
// and the store's rows before and after pruning.
package main

import "github.com/escrowkit/escrow-go/bench"

func main() { bench.Main("receive") }
