package bench

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
)

// program is one of the commands below bench/: flags registers its flags on fs and
// returns its work, which runs once they are parsed and prints its result lines on stdout.
type program func(fs *flag.FlagSet) (run func(ctx context.Context, stdout, stderr io.Writer) error)

// programs are the commands below bench/, by name; each lives beside its harness.
func programs() map[string]program {
	return map[string]program{
		"burst":    burstProgram,
		"chaos":    chaosProgram,
		"emulator": emulatorProgram,
		"flood":    floodProgram,
		"pacing":   pacingProgram,
		"receive":  receiveProgram,
		"storm":    stormProgram,
	}
}

// Main is the main function of every command below bench/, which differ only in their
// flags and in what they print: it parses the flags of the program called name and runs
// it through Command.
func Main(name string) {
	p, ok := programs()[name]
	if !ok {
		fmt.Fprintf(os.Stderr, "bench: no program %q\n", name)
		os.Exit(2)
	}
	fs := flag.NewFlagSet(name, flag.ExitOnError)
	run := p(fs)
	fs.Parse(os.Args[1:]) // ExitOnError: a bad flag ends the process with its usage
	Command(name, func(ctx context.Context) error { return run(ctx, os.Stdout, os.Stderr) })
}

// Command runs the work of a command: the work gets a context that an interrupt cancels,
// and an error it returns is printed after the command's name, ending the process with
// status 1.
func Command(name string, run func(ctx context.Context) error) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	err := run(ctx)
	stop()
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", name, err)
		os.Exit(1)
	}
}
