// Command emulator measures the emulator's throughput for GET /transaction/{id} with
// -stored transactions in its store and for POST /transaction, each beside a bare TLS
// handler that answers the same bytes. It prints one line of key=value pairs per
// operation, with the ratio of the two rates.
package main

import "github.com/escrowkit/escrow-go/bench"

func main() { bench.Main("emulator") }
