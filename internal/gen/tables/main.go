package main

import (
	"flag"
	"fmt"
	"os"
	"strings"
)

// main rewrites the generated tables under the current directory (the module root, where
// go generate runs it), or with -check only lists the stale files and fails.
func main() {
	check := flag.Bool("check", false, "list the files whose tables are stale and fail, instead of writing them")
	flag.Parse()
	if err := run(".", *check); err != nil {
		fmt.Fprintln(os.Stderr, "routes:", err)
		os.Exit(1)
	}
}

func run(root string, check bool) error {
	files, err := generate(root)
	if err != nil {
		return err
	}
	changed, err := stale(files)
	if err != nil {
		return err
	}
	if check {
		if len(changed) > 0 {
			return fmt.Errorf("stale, run go generate: %s", strings.Join(changed, ", "))
		}
		return nil
	}
	for _, path := range changed {
		if err := os.WriteFile(path, files[path], 0o644); err != nil {
			return err
		}
	}
	return nil
}
