// Command chaos drives transactions through their lifecycle with the SDK against the
// emulator while it injects every kind of fault, then checks the emulator's state against
// what the SDK answered. It prints one line of key=value pairs; untyped errors, if any,
// are listed on stderr.
package main

import "github.com/escrowkit/escrow-go/bench"

func main() { bench.Main("chaos") }
