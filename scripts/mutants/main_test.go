package main

import (
	"fmt"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
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

// TestShowPrintsEachEdit: -dry -show prints under each mutant the code it replaces and its
// replacement, so that a survivor can be judged without rebuilding it by hand.
func TestShowPrintsEachEdit(t *testing.T) {
	path := filepath.Join(t.TempDir(), "p.go")
	if err := os.WriteFile(path, []byte(sample), 0o644); err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	if err := showEdits(&out, "ret", []string{path}); err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("%[1]s:13:9 RETURN_TRUE\n\t- a == b\n\t+ true\n%[1]s:13:9 RETURN_FALSE\n\t- a == b\n\t+ false\n", path)
	if out.String() != want {
		t.Errorf("got:\n%s\nwant:\n%s", out.String(), want)
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

const handSample = `package p

import "slices"

const lease = 30 * second

const (
	second = 1000
	first  = iota
)

var roles = map[string]bool{"buyer": true, "seller": false}

type method struct{ iban, bic string }

func same(a, b method) bool {
	return a.iban == b.iban && a.bic == b.bic
}

func allowed(role string, owner, caller int) bool {
	if roles[role] && owner == caller || role == "admin" {
		return true
	}
	return false
}

func pages(n, maxPages int) int {
	seen := 0
	for i := 0; i < n; i++ {
		if i >= maxPages {
			break
		}
		seen++
	}
	return seen
}

func newest(ids []int) int {
	for _, id := range ids {
		return id
	}
	for _, id := range slices.Backward(ids) {
		return id
	}
	return 0
}
`

// TestHandClasses lists the mutants of the hand classes: each comparison of an equality
// chain (and only those) is a dropped field, other operands of && and || are dropped checks,
// a map literal's entries are removable, a named bound moves by one both ways, a numeric
// constant (not iota) doubles and halves, and loops are turned around. Every mutant still
// parses.
func TestHandClasses(t *testing.T) {
	path := filepath.Join(t.TempDir(), "p.go")
	if err := os.WriteFile(path, []byte(handSample), 0o644); err != nil {
		t.Fatal(err)
	}
	ms, err := generate(path, "hand")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range ms {
		if !handKinds[m.kind] {
			t.Errorf("-ops hand made a %s", m.kind)
		}
		edited := apply([]byte(handSample), m) + m.extra
		if _, err := parser.ParseFile(token.NewFileSet(), "p.go", edited, 0); err != nil {
			t.Errorf("%s at %d:%d does not parse: %v\n%s", m.kind, m.line, m.col, err, edited)
		}
		got = append(got, fmt.Sprintf("%d %s %q", m.line, m.kind, strings.ReplaceAll(m.repl, "\t", " ")))
	}
	slices.Sort(got)
	want := []string{
		`12 TABLE_ENTRY_REMOVED ""`, // "buyer": true,
		`12 TABLE_ENTRY_REMOVED ""`, // , "seller": false
		`17 FIELD_DROPPED "true"`,   // a.iban == b.iban
		`17 FIELD_DROPPED "true"`,   // a.bic == b.bic
		`21 CHECK_DROPPED "false"`,  // role == "admin"
		`21 CHECK_DROPPED "false"`,  // roles[role] && owner == caller, from the ||
		`21 CHECK_DROPPED "true"`,   // roles[role]
		`21 FIELD_DROPPED "true"`,   // owner == caller
		`29 SCAN_REVERSED "i := (n) - 1; i >= 0; i--"`,
		`30 BOUND_MINUS_ONE "(maxPages - 1)"`,
		`30 BOUND_PLUS_ONE "(maxPages + 1)"`,
		`39 SCAN_REVERSED "mutantsBackward(ids)"`,
		`42 SCAN_REVERSED "All"`,
		`5 CONSTANT_DOUBLED "(30 * second) * 2"`,
		`5 CONSTANT_HALVED "(30 * second) / 2"`,
		`8 CONSTANT_DOUBLED "(1000) * 2"`,
		`8 CONSTANT_HALVED "(1000) / 2"`,
	}
	if !slices.Equal(got, want) {
		t.Errorf("mutants:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// A removed entry takes its comma with it: the map keeps one entry, still well formed.
	for _, m := range ms {
		if m.kind == "TABLE_ENTRY_REMOVED" {
			if e := apply([]byte(handSample), m); strings.Count(e[strings.Index(e, "var roles"):strings.Index(e, "type method")], ":") != 1 {
				t.Errorf("entry removal left:\n%s", e)
			}
		}
	}
	// The hand classes are counted apart from the tool mutants, and rebuilt by a recheck.
	if ms, _ := generate(path, allOps); len(ms) <= len(got) {
		t.Errorf("%s made %d mutants, no more than the hand classes alone", allOps, len(ms))
	}
}

// TestTableOfAProgressLog: the [i/n] lines of a run cut short table as a results file
// would, tool mutants and hand classes apart; other lines are skipped. A hang counts as
// detected, a timeout not confirmed on an idle machine does not.
func TestTableOfAProgressLog(t *testing.T) {
	path := filepath.Join(t.TempDir(), "run.log")
	log := "=== replayed NOT COVERED mutants and our own (hand)\n" +
		"[1/4] a.go:3:9\tCONSTANT_DOUBLED\tKILLED\n" +
		"[2/4 3.1s 5] a.go:5:2\tSCAN_REVERSED\tLIVED\n" + // the progress line as it is printed now
		"[3/4] a.go:7:1\tREMOVE_STATEMENT\tTIMED OUT\n" +
		"[4/4] a.go:9:1\tREMOVE_STATEMENT\tHUNG\n" +
		"a.go:8:1\tBOOL_SWAP\tNOT VIABLE\n"
	if err := os.WriteFile(path, []byte(log), 0o644); err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	if err := printResults(&out, path); err != nil {
		t.Fatal(err)
	}
	got := strings.Fields(out.String())
	tool, hand := slices.Index(got, "tool"), slices.Index(got, "hand-class")
	if tool < 0 || hand < tool {
		t.Fatalf("want the tool table, then the hand-class table:\n%s", out.String())
	}
	// file killed hung survived not-covered timed-out not-viable score, per table
	if row := strings.Join(got[slices.Index(got, "a.go"):][:8], " "); row != "a.go 0 1 0 0 1 1 50%" {
		t.Errorf("tool row %q", row)
	}
	if row := strings.Join(got[hand+slices.Index(got[hand:], "a.go"):][:8], " "); row != "a.go 1 0 1 0 0 0 50%" {
		t.Errorf("hand row %q", row)
	}
	if err := printResults(&out, filepath.Join(t.TempDir(), "none")); err == nil {
		t.Error("a missing file tabled")
	}
}

// TestSelectTests: a mutant runs the tests that executed the innermost covered block holding
// its position (those of every such block on a shared boundary); a position in no block, in
// blocks no test executed, or reached by a test that fails alone on the code, runs the whole
// suite (nil), as does a selection of every test.
func TestSelectTests(t *testing.T) {
	profiles := map[string]string{
		"TestA": "mode: set\nm/p/a.go:3.10,5.2 1 1\nm/p/a.go:4.20,4.40 1 1\nm/p/a.go:7.1,9.2 1 0\nm/p/b.go:3.10,5.2 1 0\n",
		"TestB": "mode: set\nm/p/a.go:3.10,5.2 1 1\nm/p/a.go:4.20,4.40 1 0\nm/p/a.go:7.1,9.2 1 1\nm/p/b.go:3.10,5.2 1 0\n",
		"TestC": "mode: set\nm/p/a.go:3.10,5.2 1 0\nm/p/a.go:4.20,4.40 1 0\nm/p/a.go:7.1,9.2 1 0\nm/p/a.go:9.2,11.2 1 1\nm/p/b.go:3.10,5.2 1 0\n",
		"TestD": "mode: set\nm/p/a.go:12.1,13.2 1 1\n",
	}
	blocks := map[blockPos][]string{}
	dir := t.TempDir()
	for _, name := range []string{"TestA", "TestB", "TestC", "TestD"} {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(profiles[name]), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := readProfile(path, name, blocks); err != nil {
			t.Fatal(err)
		}
	}
	tm := &testMap{tests: []string{"TestA", "TestB", "TestC", "TestD"}, failing: map[string]bool{"TestD": true}}
	for b, ts := range blocks {
		tm.blocks = append(tm.blocks, coverBlock{b, ts})
	}
	for _, c := range []struct {
		file      string
		line, col int
		want      []string
	}{
		{"p/a.go", 3, 10, []string{"TestA", "TestB"}}, // a block's first character
		{"p/a.go", 4, 2, []string{"TestA", "TestB"}},
		{"p/a.go", 4, 30, []string{"TestA"}}, // inside a literal's body: the body's block
		{"p/a.go", 5, 2, []string{"TestA", "TestB"}},
		{"p/a.go", 9, 2, []string{"TestB", "TestC"}}, // on two blocks' boundary: both
		{"p/a.go", 10, 1, []string{"TestC"}},
		{"p/a.go", 1, 1, nil},                // a declaration: no block
		{"p/a.go", 5, 3, nil},                // just after a block
		{"p/b.go", 4, 1, nil},                // a block no test executed
		{"p/c.go", 4, 1, nil},                // another file's position is not a.go's
		{"p/a.go", 12, 5, nil},               // a test that fails alone
		{"q/a.go", 4, 30, []string{"TestA"}}, // blocks are keyed by base name: one package
	} {
		if got := tm.selectTests(c.file, c.line, c.col); !slices.Equal(got, c.want) {
			t.Errorf("%s:%d:%d: %v, want %v", c.file, c.line, c.col, got, c.want)
		}
	}
	// A selection of every test is the whole suite.
	tm.tests = tm.tests[:2]
	if got := tm.selectTests("p/a.go", 4, 2); got != nil {
		t.Errorf("every test selected: %v, want the whole suite (nil)", got)
	}
	var none *testMap
	if got := none.selectTests("p/a.go", 4, 2); got != nil {
		t.Errorf("no map: %v", got)
	}
}

// TestRunPattern: the pattern runs exactly the tests named, not others they prefix.
func TestRunPattern(t *testing.T) {
	re := regexp.MustCompile(runPattern([]string{"TestA", "ExampleB_c"}))
	for name, want := range map[string]bool{"TestA": true, "ExampleB_c": true, "TestAB": false, "XTestA": false, "ExampleB": false} {
		if re.MatchString(name) != want {
			t.Errorf("%s matched: %v, want %v", name, !want, want)
		}
	}
}

// TestStagesRunQuickTestsFirst: a selection runs its quick tests (alone, within a second of
// the quickest run: the binary's start) before its slow ones, and in one run when all are
// alike.
func TestStagesRunQuickTestsFirst(t *testing.T) {
	tm := &testMap{took: map[string]time.Duration{
		"TestQuick": 2 * time.Second, "TestAlsoQuick": 2500 * time.Millisecond,
		"TestSlow": 7 * time.Second, "TestSlower": 9 * time.Second,
	}}
	for _, c := range []struct {
		tests []string
		want  [][]string
	}{
		{[]string{"TestAlsoQuick", "TestQuick", "TestSlow"}, [][]string{{"TestAlsoQuick", "TestQuick"}, {"TestSlow"}}},
		{[]string{"TestQuick", "TestAlsoQuick"}, [][]string{{"TestQuick", "TestAlsoQuick"}}},
		{[]string{"TestSlow", "TestSlower"}, [][]string{{"TestSlow", "TestSlower"}}},
		{nil, nil},
	} {
		if got := tm.stages(c.tests); !slices.EqualFunc(got, c.want, slices.Equal) {
			t.Errorf("stages(%v) = %v, want %v", c.tests, got, c.want)
		}
	}
	// A stage is given its tests' time five times over (the binary's start, the quickest
	// run, once) and a margin, within the run's bound.
	if got, want := tm.timeout([]string{"TestQuick", "TestSlow"}, 2*time.Minute), stageTimeout+5*7*time.Second; got != want {
		t.Errorf("timeout %v, want %v", got, want)
	}
	if got := tm.timeout([]string{"TestSlow", "TestSlower"}, time.Minute); got != time.Minute {
		t.Errorf("timeout %v, want the bound, 1m", got)
	}
}
