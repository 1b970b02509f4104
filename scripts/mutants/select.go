package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Test selection: a mutant can change the outcome only of tests whose run reaches the code it
// edits, so each mutant runs only those. Once per package (per run), the unmutated tests are
// built with coverage of that package alone, each top-level test is run by itself, and every
// block of code its run executed is noted with its name. A mutant whose position lies in
// covered blocks then runs the tests of the innermost of them (a block inside a function
// literal lies within the block of the statement that holds the literal: the literal's own
// body is what must run). A mutant in no block (a package-level declaration, a switch case's
// expression, which Go's coverage has no block for), in blocks no test executed, or in the
// blocks of a test that fails alone on the code, runs the whole suite.

// coverBlock is one block of a coverage profile, in one file of the package, with the tests
// whose run executed it.
type coverBlock struct {
	blockPos
	tests []string
}

// blockPos is where a block lies: in which file of the package (its base name: the profile
// names the package's files by import path), from line0:col0 to line1:col1.
type blockPos struct {
	file                     string
	line0, col0, line1, col1 int
}

// contains reports whether line:col lies within the block, both ends included: a position
// on a boundary is taken by both blocks, which only runs more tests.
func (b blockPos) contains(line, col int) bool {
	if line < b.line0 || line == b.line0 && col < b.col0 {
		return false
	}
	return line < b.line1 || line == b.line1 && col <= b.col1
}

// within reports whether b lies within o, both ends included.
func (b blockPos) within(o blockPos) bool {
	return o.contains(b.line0, b.col0) && o.contains(b.line1, b.col1)
}

// testMap is what selection knows of one package's tests.
type testMap struct {
	tests   []string                 // every top-level test, example and fuzz target
	blocks  []coverBlock             // every block of the package, executed or not
	failing map[string]bool          // tests that fail when run alone on the unmutated code
	took    map[string]time.Duration // each test's run alone, its binary's start included
}

// timeout is the time a stage's run is given: stageTimeout more than five times what its
// tests took alone on the code, at most max. A test's run alone includes the binary's start
// (base: the quickest run), which one run of the stage makes once. A mutant that makes a
// test hang is then found in seconds, not in the minutes a whole suite's timeout allows.
func (tm *testMap) timeout(stage []string, max time.Duration) time.Duration {
	base := tm.base()
	sum := base
	for _, t := range stage {
		sum += tm.took[t] - base
	}
	return min(max, stageTimeout+5*sum)
}

// stageTimeout is the margin every stage's run is given: the machine is shared, and its
// load varies.
const stageTimeout = 30 * time.Second

// base is the quickest of the tests' runs alone: the binary's start, TestMain's work.
func (tm *testMap) base() time.Duration {
	base := time.Duration(-1)
	for _, d := range tm.took {
		if base < 0 || d < base {
			base = d
		}
	}
	return max(base, 0)
}

// quickTest is how much longer than the quickest a test's run alone may take and still
// count as quick: see stages.
const quickTest = time.Second

// stages splits a selection of tests into the quick ones and the slow ones, to be run in that
// order: a mutant a quick test kills is then not kept waiting for the slow tests, which may
// come first in source order (a webhook flood test runs 5 s). A test's time is its run alone
// less the quickest such run, which is the binary's start (a PostgreSQL server's, say). One
// stage if all are quick or all slow; nil (the whole suite) for nil.
func (tm *testMap) stages(tests []string) [][]string {
	if tests == nil {
		return nil
	}
	base := tm.base()
	var quick, slow []string
	for _, t := range tests {
		if tm.took[t]-base < quickTest {
			quick = append(quick, t)
		} else {
			slow = append(slow, t)
		}
	}
	if len(quick) == 0 || len(slow) == 0 {
		return [][]string{tests}
	}
	return [][]string{quick, slow}
}

// selectTests returns the tests to run against a mutant at file:line:col, sorted, or nil for
// the whole suite.
func (tm *testMap) selectTests(file string, line, col int) []string {
	if tm == nil {
		return nil
	}
	base := filepath.Base(file)
	var in []coverBlock
	for _, b := range tm.blocks {
		if b.file == base && b.contains(line, col) {
			in = append(in, b)
		}
	}
	set := map[string]bool{}
	for i, b := range in {
		inner := true
		for j, o := range in {
			if j != i && o.within(b.blockPos) && !b.within(o.blockPos) {
				inner = false // o lies inside b and holds the position too
				break
			}
		}
		if !inner {
			continue
		}
		for _, t := range b.tests {
			set[t] = true
		}
	}
	if len(set) == 0 || len(set) >= len(tm.tests) {
		return nil
	}
	var out []string
	for t := range set {
		if tm.failing[t] {
			return nil // its failure would read as the mutant's
		}
		out = append(out, t)
	}
	sort.Strings(out)
	return out
}

// runPattern is the -test.run pattern that runs exactly the named top-level tests.
func runPattern(tests []string) string {
	quoted := make([]string, len(tests))
	for i, t := range tests {
		quoted[i] = regexp.QuoteMeta(t)
	}
	return "^(" + strings.Join(quoted, "|") + ")$"
}

// profileLine is one block of a coverage profile: "path/file.go:12.3,15.4 2 1".
var profileLine = regexp.MustCompile(`^(.+):(\d+)\.(\d+),(\d+)\.(\d+) \d+ (\d+)$`)

// readProfile adds the blocks of a coverage profile to blocks (keyed by position), noting
// test against every block executed.
func readProfile(path, test string, blocks map[blockPos][]string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		m := profileLine.FindStringSubmatch(s.Text())
		if m == nil {
			continue // the "mode:" line
		}
		var n [5]int
		for i := range n {
			n[i], _ = strconv.Atoi(m[i+2])
		}
		k := blockPos{file: filepath.Base(m[1]), line0: n[0], col0: n[1], line1: n[2], col1: n[3]}
		ts, seen := blocks[k]
		if !seen {
			blocks[k] = nil
		}
		if n[4] > 0 && (len(ts) == 0 || ts[len(ts)-1] != test) {
			blocks[k] = append(ts, test)
		}
	}
	return s.Err()
}

// testName is a line of -test.list's output that names something -test.run can run
// (benchmarks need -test.bench, and other lines are the program's own output).
var testName = regexp.MustCompile(`^(Test|Example|Fuzz)\w*$`)

// buildTestMap maps pkg's tests to the blocks of pkg they execute. A package without tests, or
// whose coverage build fails, gets nil: its mutants run the whole suite.
func buildTestMap(ctx context.Context, tmp, pkg string, timeout time.Duration) (*testMap, error) {
	start := time.Now()
	ip, err := exec.CommandContext(ctx, "go", "list", "-f", "{{.ImportPath}}", pkg).Output()
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		fmt.Fprintf(os.Stderr, "select: go list %s: %v; its mutants run the whole suite\n", pkg, err)
		return nil, nil
	}
	bin := filepath.Join(tmp, "cover.test")
	_ = os.Remove(bin)
	build := exec.CommandContext(ctx, "go", "test", "-c", "-o", bin, "-vet=off", "-cover", "-covermode=set",
		"-coverpkg="+strings.TrimSpace(string(ip)), pkg)
	if out, err := runGroup(build); ctx.Err() != nil {
		return nil, ctx.Err()
	} else if err != nil {
		fmt.Fprintf(os.Stderr, "select: coverage build of %s failed; its mutants run the whole suite\n%s", pkg, out)
		return nil, nil
	}
	if _, err := os.Stat(bin); err != nil {
		return nil, nil // no tests
	}
	list := exec.CommandContext(ctx, bin, "-test.list", ".")
	list.Dir = filepath.FromSlash(pkg)
	out, err := runGroup(list)
	if ctx.Err() != nil {
		return nil, ctx.Err()
	} else if err != nil {
		fmt.Fprintf(os.Stderr, "select: listing %s's tests failed; its mutants run the whole suite\n%s", pkg, out)
		return nil, nil
	}
	tm := &testMap{failing: map[string]bool{}, took: map[string]time.Duration{}}
	for _, l := range strings.Split(out, "\n") {
		if l = strings.TrimSpace(l); testName.MatchString(l) {
			tm.tests = append(tm.tests, l)
		}
	}
	blocks := map[blockPos][]string{}
	profile := filepath.Join(tmp, "cover.out")
	for _, t := range tm.tests {
		_ = os.Remove(profile)
		tctx, cancel := context.WithTimeout(ctx, timeout+30*time.Second)
		run := exec.CommandContext(tctx, bin, "-test.count=1", "-test.run", runPattern([]string{t}),
			"-test.timeout="+timeout.String(), "-test.coverprofile="+profile)
		run.Dir = filepath.FromSlash(pkg)
		began := time.Now()
		_, err := runGroup(run)
		tm.took[t] = time.Since(began)
		cancel()
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if err != nil {
			tm.failing[t] = true
			fmt.Fprintf(os.Stderr, "select: %s fails alone on the code: mutants it reaches run the whole suite\n", t)
		}
		if err := readProfile(profile, t, blocks); err != nil {
			tm.failing[t] = true
			fmt.Fprintf(os.Stderr, "select: %s wrote no coverage profile (%v): mutants it reaches run the whole suite\n", t, err)
		}
	}
	for b, ts := range blocks {
		tm.blocks = append(tm.blocks, coverBlock{b, ts})
	}
	sort.Slice(tm.blocks, func(i, j int) bool {
		a, b := tm.blocks[i], tm.blocks[j]
		if a.file != b.file {
			return a.file < b.file
		}
		if a.line0 != b.line0 {
			return a.line0 < b.line0
		}
		return a.col0 < b.col0
	})
	fmt.Fprintf(os.Stderr, "select: %s: %d tests mapped to %d blocks in %s\n", pkg, len(tm.tests), len(tm.blocks), time.Since(start).Round(time.Second))
	return tm, nil
}

// writeTestMap writes tm in a readable form: one block a line, with the tests that ran it.
func writeTestMap(path string, tm *testMap) error {
	var b strings.Builder
	for _, t := range tm.tests {
		state := "ok"
		if tm.failing[t] {
			state = "FAILS ALONE"
		}
		fmt.Fprintf(&b, "# %s %s %.1fs\n", t, state, tm.took[t].Seconds())
	}
	for _, k := range tm.blocks {
		fmt.Fprintf(&b, "%s:%d.%d,%d.%d\t%s\n", k.file, k.line0, k.col0, k.line1, k.col1, strings.Join(k.tests, " "))
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}
