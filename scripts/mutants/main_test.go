package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const sample = `package p

func f(a, b int, on bool) bool {
	switch {
	case a < b:
		a++
	}
	if on {
		g()
	}
	x := true
	_ = x
	return a == b
}

func g() {}
`

func apply(src []byte, m mutant) string {
	return string(src[:m.start]) + m.repl + string(src[m.end:])
}

// TestRebuildGremlinInASwitchCase: a mutant gremlins reports NOT COVERED in a case
// expression is rebuilt from its line and column into the edit gremlins would make.
func TestRebuildGremlinInASwitchCase(t *testing.T) {
	src := []byte(sample)
	m := mutant{file: "p.go", line: 5, col: 9, kind: "CONDITIONALS_BOUNDARY"}
	if err := rebuildGremlin(&m, src); err != nil {
		t.Fatal(err)
	}
	if got := apply(src, m); !strings.Contains(got, "case a <= b:") {
		t.Errorf("mutated:\n%s", got)
	}
	bad := mutant{file: "p.go", line: 5, col: 9, kind: "INVERT_LOGICAL"}
	if err := rebuildGremlin(&bad, src); err == nil {
		t.Error("INVERT_LOGICAL applied to <")
	}
	gone := mutant{file: "p.go", line: 5, col: 10, kind: "CONDITIONALS_BOUNDARY"}
	if err := rebuildGremlin(&gone, src); err == nil {
		t.Error("a position with no token rebuilt")
	}
}

// TestGenerate lists the mutants of our own operators: removable statements (not
// declarations), true/false swaps and constant returns of a bool function.
func TestGenerate(t *testing.T) {
	path := filepath.Join(t.TempDir(), "p.go")
	if err := os.WriteFile(path, []byte(sample), 0o644); err != nil {
		t.Fatal(err)
	}
	ms, err := generate(path, "stmt,bool,ret")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range ms {
		// kind, replacement, and the first word of what it replaces
		got = append(got, m.kind+" "+m.repl+"@"+strings.Fields(sample[m.start:])[0])
	}
	slices.Sort(got)
	want := []string{
		"BOOL_SWAP false@true", // x := true
		"REMOVE_STATEMENT @a++",
		"REMOVE_STATEMENT @g()",
		"REMOVE_STATEMENT @if",
		"RETURN_FALSE false@a",
		"RETURN_TRUE true@a",
	}
	if !slices.Equal(got, want) {
		t.Errorf("mutants:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if ms, _ := generate(path, "bool"); len(ms) != 1 {
		t.Errorf("-ops bool made %d mutants, want 1", len(ms))
	}
}

// TestGremlinsLog reads the mutants out of gremlins' console output.
func TestGremlinsLog(t *testing.T) {
	rep := fromGremlinsLog([]byte("Starting...\n      KILLED ARITHMETIC_BASE at a.go:3:9\n NOT COVERED INVERT_BITWISE at b/c.go:16:27\nKilled: 1, Lived: 0\n       LIVED CONDITIONALS_NEGATION at a.go:5:2\n"))
	if len(rep.Files) != 2 || rep.Files[0].Filename != "a.go" || len(rep.Files[0].Mutations) != 2 || rep.Files[1].Filename != "b/c.go" {
		t.Fatalf("%+v", rep)
	}
	if m := rep.Files[1].Mutations[0]; m != (gremlinsMutation{Type: "INVERT_BITWISE", Status: "NOT COVERED", Line: 16, Column: 27}) {
		t.Errorf("%+v", m)
	}
}
