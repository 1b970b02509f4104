// Command burst makes -n new transactions, then posts their first (create) deliveries at
// once from -senders goroutines to one webhook.Handler at its default options, with no
// reconciler: for an approved partner (-partner, the default) or an account that is not
// one. It prints one line of key=value pairs: how long until every creation was handed
// over, the receiver's fetches and listings and their sum per transaction, the never-seen
// ids dropped and the deliveries answered outside 2xx.
package main

import "github.com/escrowkit/escrow-go/bench"

func main() { bench.Main("burst") }
