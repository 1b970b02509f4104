package bench

import (
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestEveryProgramIsACommand: each program of the table has a directory below bench/
// whose main calls Main with its name, so `go run ./bench/NAME` runs it, and its flags
// parse.
func TestEveryProgramIsACommand(t *testing.T) {
	for name, p := range programs() {
		src, err := os.ReadFile(filepath.Join(name, "main.go"))
		if err != nil || !strings.Contains(string(src), `bench.Main("`+name+`")`) {
			t.Errorf("%s/main.go does not call bench.Main(%q): %v", name, name, err)
		}
		fs := flag.NewFlagSet(name, flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		if run := p(fs); run == nil || fs.Parse(nil) != nil {
			t.Errorf("%s: its flags do not parse", name)
		}
		if fs.Parse([]string{"-no-such-flag"}) == nil {
			t.Errorf("%s accepts an unknown flag", name)
		}
	}
}
