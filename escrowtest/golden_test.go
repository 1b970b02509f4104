package escrowtest

import (
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/ and the package comment's table of actions")

// golden compares got with testdata/name, which -update rewrites: a change to what the file
// holds shows as its diff in review, rather than as a hand-written copy to keep in step.
func golden(t *testing.T, name string, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("golden %s: %v (go test -run %s -update writes it)", path, err, t.Name())
	}
	if got != string(want) {
		t.Errorf("%s differs from what the test renders (go test -run %s -update rewrites it; review the diff):\ngot:\n%s\nwant:\n%s", path, t.Name(), got, want)
	}
}
