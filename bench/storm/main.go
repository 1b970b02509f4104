// Command storm sends a webhook.Handler (at its default options) -deliveries copies of one
// real delivery, or with -unique as many invented event names, from -senders goroutines,
// creates an unrelated transaction while the storm lasts, and prints one line of
// key=value pairs: the confirming fetches the storm cost, the unrelated event's latency
// and the heap's growth.
package main

import "github.com/escrowkit/escrow-go/bench"

func main() { bench.Main("storm") }
