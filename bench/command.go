package bench

import (
	"context"
	"fmt"
	"os"
	"os/signal"
)

// Command runs the work of one of the commands below bench/, which differ only in their
// flags and in what they print: the work gets a context that an interrupt cancels, and an
// error it returns is printed after the command's name, ending the process with status 1.
func Command(name string, run func(ctx context.Context) error) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	err := run(ctx)
	stop()
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", name, err)
		os.Exit(1)
	}
}
