// Command flood sends a webhook.Handler (at its default options) -forged deliveries
// naming distinct made-up transactions from -senders goroutines, with -secret through a
// handler that requires a delivery secret the forger does not know. With the flood in
// flight, a real event of a known transaction and a new transaction's creation are made.
// It prints one line of key=value pairs: how long the real events took to be handed
// over, real deliveries not answered 2xx, the fetches spent on forgeries in the first
// -window and their share of the endpoint's limit, and the most goroutines held.
package main

import "github.com/escrowkit/escrow-go/bench"

func main() { bench.Main("flood") }
