// Command mutants is the half of scripts/mutate that gremlins cannot do. It
//
//   - makes the mutants gremlins lacks: removal of a statement, true swapped for false (and the
//     reverse), and a function returning bool made to return a constant;
//   - replays the mutants gremlins reported NOT COVERED, because gremlins trusts Go's coverage
//     profile and that profile has no block for the expression of a switch case, so every
//     mutant there is skipped unseen;
//   - prints one table per file that adds gremlins' counts to its own.
//
// Each mutant is one edit of one file, written to a temporary copy and given to
// `go test -overlay`, so the working tree is never touched and an interrupted run leaves nothing
// behind. The mutated file's own package is tested, as gremlins does, and with -also the
// packages named there too: an internal package is mostly tested through the packages that
// use it (internal/redact through the SDK's redaction tests), and its own tests alone would
// count as survivors mutants that those tests kill. Of its own package, a mutant runs only
// the tests that execute the code it edits (select.go), unless -select=false.
//
// Usage (from the module root; scripts/mutate is the usual way in):
//
//	go run ./scripts/mutants [-gremlins report.json] [-ops stmt,bool,ret,hand] [-timeout 2m] \
//	    [-also ./pkg,...] [-select=false] [-survivors out.txt] [-dry] file.go...
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/scanner"
	"go/token"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"
)

// allOps is every operator of this program: the default, and what a recheck rebuilds from.
const allOps = "stmt,bool,ret,hand"

// Outcome of one mutant, in the words of gremlins' report where it has one.
const (
	killed   = "KILLED"
	lived    = "LIVED"
	timedOut = "TIMED OUT" // a timeout not seen again on an idle machine: no detection
	// hung is a mutant whose tests timed out twice, the second time run alone on an idle
	// machine: a hang, which counts as detected. A first timeout alone may be the load.
	hung       = "HUNG"
	notViable  = "NOT VIABLE"
	notCovered = "NOT COVERED"
)

// mutant is one edit: bytes [start,end) of file become repl.
type mutant struct {
	file       string // relative to the module root
	line, col  int
	kind       string
	start, end int
	repl       string
	extra      string // appended to the file (a helper the edit calls)
	status     string
}

// String is the line of a results file: position, kind and status, separated by tabs so that
// -recheck can read it back.
func (m mutant) String() string {
	return fmt.Sprintf("%s:%d:%d\t%s\t%s", m.file, m.line, m.col, m.kind, m.status)
}

func main() {
	var (
		gremlinsReport = flag.String("gremlins", "", "gremlins JSON `report` (or its console output, for a run cut short): its counts join the table and its NOT COVERED mutants are replayed")
		ops            = flag.String("ops", allOps, "own mutation `operators`: stmt (remove a statement), bool (swap true/false), ret (return a constant bool), and the hand classes eq, cond, table, bound, const, scan (hand: all six; see hand.go); empty for none")
		timeout        = flag.Duration("timeout", 2*time.Minute, "time allowed to one package's tests under one mutant")
		survivors      = flag.String("survivors", "", "write every mutant that lived or was not covered to this `file`")
		results        = flag.String("results", "", "write every mutant and its status to this `file`")
		recheck        = flag.String("recheck", "", "instead of making mutants, read a -results `file` and run again only its survivors")
		also           = flag.String("also", "", "comma-separated `packages` whose tests also run against each mutant, after its own package's: a mutant any of them catches is killed")
		dry            = flag.Bool("dry", false, "list the mutants without running them")
		show           = flag.Bool("show", false, "with -dry, print each mutant's edit under its line: the code it replaces and what it puts there, to judge a survivor")
		table          = flag.String("table", "", "instead of running mutants, print the tables of a -results `file`, or of the [i/n] progress lines of a run cut short")
		overlay        = flag.String("overlay", "", "instead of running mutants, write the mutant `file:line:col:KIND` (a results line's position and kind) to the -overlay-dir and print the go test -overlay file that applies it, to see a new test fail with it")
		overlayDir     = flag.String("overlay-dir", os.TempDir(), "where -overlay writes")
		records        = flag.String("records", "", "merge this run's outcome into the records `file` (scripts/mutants/records.tsv): one row per mutant")
		scores         = flag.String("scores", "", "instead of running mutants, print TESTING.md's score table from the records `file` and -earlier")
		earlierFile    = flag.String("earlier", "scripts/mutants/earlier.tsv", "with -scores, the `file` of figures from runs made before per-mutant records were kept")
		idleWait       = flag.Duration("idle-wait", 15*time.Minute, "how long a timed-out mutant waits for an idle machine to be run again alone; if it never comes, the timeout stays unconfirmed")
		sel            = flag.Bool("select", true, "run against each mutant only its package's tests that execute the mutated code (mapped once per package from each test's coverage run alone); false runs the whole suite every time")
	)
	flag.Parse()
	if *scores != "" {
		if err := printScores(os.Stdout, *scores, *earlierFile); err != nil {
			fmt.Fprintln(os.Stderr, "mutants:", err)
			os.Exit(1)
		}
		return
	}
	if *table != "" {
		if err := printResults(os.Stdout, *table); err != nil {
			fmt.Fprintln(os.Stderr, "mutants:", err)
			os.Exit(1)
		}
		return
	}
	if *overlay != "" {
		path, err := writeOverlay(*overlay, *overlayDir)
		if err != nil {
			fmt.Fprintln(os.Stderr, "mutants:", err)
			os.Exit(1)
		}
		fmt.Println(path)
		return
	}
	// An interrupted run stops its go test and still removes its temporary files.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	var alsoPkgs []string
	for _, p := range strings.Split(*also, ",") {
		if p = strings.TrimSpace(p); p != "" {
			alsoPkgs = append(alsoPkgs, p)
		}
	}
	if *dry && *show {
		if err := showEdits(os.Stdout, *ops, flag.Args()); err != nil {
			fmt.Fprintln(os.Stderr, "mutants:", err)
			os.Exit(1)
		}
		return
	}
	out := outputs{survivors: *survivors, results: *results, records: *records}
	if err := run(ctx, *gremlinsReport, *recheck, *ops, *timeout, *idleWait, alsoPkgs, out, *dry, *sel, flag.Args()); err != nil {
		stop()
		fmt.Fprintln(os.Stderr, "mutants:", err)
		os.Exit(1)
	}
}

// outputs are the files a run writes: survivors and results for the run, records for the
// repository's record of every run.
type outputs struct{ survivors, results, records string }

func run(ctx context.Context, report, recheck, ops string, timeout, idleWait time.Duration, also []string, out outputs, dry, sel bool, files []string) error {
	survivorsFile, resultsFile := out.survivors, out.results
	var all []mutant // finished, from gremlins or from here
	var todo []mutant
	if recheck != "" {
		done, again, err := fromResults(recheck)
		if err != nil {
			return err
		}
		all = append(all, done...)
		todo = append(todo, again...)
		files = nil
	}
	if report != "" {
		done, replay, err := fromGremlins(report)
		if err != nil {
			return err
		}
		all = append(all, done...)
		todo = append(todo, replay...)
	}
	for _, f := range files {
		ms, err := generate(f, ops)
		if err != nil {
			return err
		}
		todo = append(todo, ms...)
	}
	if dry {
		for _, m := range todo {
			fmt.Printf("%s:%d:%d %s\n", m.file, m.line, m.col, m.kind)
		}
		return nil
	}

	tmp, err := os.MkdirTemp("", "mutants-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	maps := map[string]*testMap{} // per package, built at its first mutant
	for i := range todo {
		m := &todo[i]
		var runTests []string
		if sel {
			pkg := pkgOf(m.file)
			tm, ok := maps[pkg]
			if !ok {
				if tm, err = buildTestMap(ctx, tmp, pkg, timeout); err != nil {
					return err
				}
				maps[pkg] = tm
				if tm != nil && resultsFile != "" {
					name := "testmap-" + strings.NewReplacer("/", "_", ".", "_").Replace(strings.TrimPrefix(pkg, "./")) + ".txt"
					if err := writeTestMap(filepath.Join(filepath.Dir(resultsFile), name), tm); err != nil {
						return err
					}
				}
			}
			runTests = tm.selectTests(m.file, m.line, m.col)
		}
		start := time.Now()
		var built time.Duration
		m.status, built, err = test(ctx, tmp, *m, timeout, also, maps[pkgOf(m.file)], runTests)
		if err != nil {
			return err
		}
		if m.status == timedOut {
			if m.status, err = confirmTimeout(ctx, idleWait, machineIdle, func() (string, error) {
				status, _, err := test(ctx, tmp, *m, 2*timeout, also, maps[pkgOf(m.file)], runTests)
				return status, err
			}); err != nil {
				return err
			}
		}
		// One line per mutant as it finishes, so a long run shows progress: the time its
		// builds and its test runs took, and how many tests of its package it selected
		// ("all": the whole suite).
		ran := "all"
		if runTests != nil {
			ran = strconv.Itoa(len(runTests))
		}
		took := time.Since(start)
		fmt.Fprintf(os.Stderr, "[%d/%d build %.1fs run %.1fs tests %s] %s\n", i+1, len(todo), built.Seconds(), (took - built).Seconds(), ran, m)
	}
	all = append(all, todo...)

	printTables(os.Stdout, all)
	var surv, res bytes.Buffer
	for _, m := range all {
		fmt.Fprintln(&res, m)
		if m.status == lived || m.status == notCovered {
			fmt.Fprintln(&surv, m)
		}
	}
	if survivorsFile != "" {
		if err := os.WriteFile(survivorsFile, surv.Bytes(), 0o644); err != nil {
			return err
		}
	}
	if resultsFile != "" {
		if err := os.WriteFile(resultsFile, res.Bytes(), 0o644); err != nil {
			return err
		}
	}
	return recordRun(out.records, all)
}

// writeOverlay writes the mutant named by spec ("file:line:col:KIND") and an overlay file
// that applies it to dir, and returns the overlay file's path.
func writeOverlay(spec, dir string) (string, error) {
	parts := strings.Split(spec, ":")
	if len(parts) != 4 {
		return "", fmt.Errorf("-overlay %q: want file:line:col:KIND", spec)
	}
	var line, col int
	if _, err := fmt.Sscan(parts[1]+" "+parts[2], &line, &col); err != nil {
		return "", fmt.Errorf("-overlay %q: %v", spec, err)
	}
	m := mutant{file: parts[0], line: line, col: col, kind: parts[3]}
	src, err := os.ReadFile(m.file)
	if err != nil {
		return "", err
	}
	if _, ok := gremlinsEdits[m.kind]; ok {
		err = rebuildGremlin(&m, src)
	} else {
		var ms []mutant
		if ms, err = generate(m.file, allOps); err == nil {
			found := false
			for _, o := range ms {
				if o.line == line && o.col == col && o.kind == m.kind {
					m, found = o, true
					break
				}
			}
			if !found {
				err = fmt.Errorf("%s: no such mutant", spec)
			}
		}
	}
	if err != nil {
		return "", err
	}
	abs, err := filepath.Abs(m.file)
	if err != nil {
		return "", err
	}
	mfile := filepath.Join(dir, fmt.Sprintf("mutant-%s-%d-%d-%s.go", filepath.Base(m.file), line, col, m.kind))
	if err := os.WriteFile(mfile, append([]byte(string(src[:m.start])+m.repl+string(src[m.end:])), m.extra...), 0o644); err != nil {
		return "", err
	}
	overlay, err := json.Marshal(map[string]any{"Replace": map[string]string{abs: mfile}})
	if err != nil {
		return "", err
	}
	ofile := strings.TrimSuffix(mfile, ".go") + ".json"
	return ofile, os.WriteFile(ofile, overlay, 0o644)
}

// showEdits lists the mutants of files as -dry does, each followed by its edit: the
// source it replaces and the replacement, on one line each, whitespace folded.
func showEdits(w io.Writer, ops string, files []string) error {
	fold := func(s string) string {
		s = strings.Join(strings.Fields(s), " ")
		if len(s) > 160 {
			s = s[:157] + "..."
		}
		return s
	}
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		ms, err := generate(f, ops)
		if err != nil {
			return err
		}
		for _, m := range ms {
			fmt.Fprintf(w, "%s:%d:%d %s\n\t- %s\n\t+ %s\n", m.file, m.line, m.col, m.kind, fold(string(src[m.start:m.end])), fold(m.repl))
			if m.extra != "" {
				fmt.Fprintf(w, "\t+ (appended) %s\n", fold(m.extra))
			}
		}
	}
	return nil
}

// fromResults reads a -results file back: the mutants it records as detected or not viable
// stay as they were (tests are only ever added between a run and its recheck), and the ones
// that lived are rebuilt to be run again. A file edited since then will not rebuild: run it
// afresh instead.
func fromResults(path string) (done, again []mutant, err error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, err
	}
	own := map[string][]mutant{} // per file, every mutant of our own operators
	for _, l := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
		fields := strings.Split(l, "\t")
		if len(fields) != 3 {
			return nil, nil, fmt.Errorf("%s: not a results line: %q", path, l)
		}
		var m mutant
		pos := strings.Split(fields[0], ":")
		if len(pos) != 3 {
			return nil, nil, fmt.Errorf("%s: bad position in %q", path, l)
		}
		m.file, m.kind, m.status = pos[0], fields[1], fields[2]
		if _, err := fmt.Sscan(pos[1]+" "+pos[2], &m.line, &m.col); err != nil {
			return nil, nil, fmt.Errorf("%s: bad position in %q", path, l)
		}
		if m.status != lived && m.status != notCovered {
			done = append(done, m)
			continue
		}
		if _, ok := gremlinsEdits[m.kind]; ok {
			src, err := os.ReadFile(m.file)
			if err != nil {
				return nil, nil, err
			}
			if err := rebuildGremlin(&m, src); err != nil {
				return nil, nil, err
			}
			again = append(again, m)
			continue
		}
		if own[m.file] == nil {
			if own[m.file], err = generate(m.file, allOps); err != nil {
				return nil, nil, err
			}
		}
		found := false
		for _, o := range own[m.file] {
			if o.line == m.line && o.col == m.col && o.kind == m.kind {
				again, found = append(again, o), true
				break
			}
		}
		if !found {
			return nil, nil, fmt.Errorf("%s:%d:%d: no %s mutant there any more; run the file afresh", m.file, m.line, m.col, m.kind)
		}
	}
	return done, again, nil
}

// gremlinsJSON is the part of gremlins' -o report read here.
type gremlinsJSON struct {
	Files []gremlinsFile `json:"files"`
}

type gremlinsFile struct {
	Filename  string             `json:"file_name"`
	Mutations []gremlinsMutation `json:"mutations"`
}

type gremlinsMutation struct {
	Type   string `json:"type"`
	Status string `json:"status"`
	Line   int    `json:"line"`
	Column int    `json:"column"`
}

// fromGremlins splits a gremlins report into mutants already decided and NOT COVERED mutants
// rebuilt as edits to be run here.
func fromGremlins(path string) (done, replay []mutant, err error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, err
	}
	var rep gremlinsJSON
	if bytes.HasPrefix(bytes.TrimSpace(raw), []byte("{")) {
		if err := json.Unmarshal(raw, &rep); err != nil {
			return nil, nil, fmt.Errorf("%s: %w", path, err)
		}
	} else {
		rep = fromGremlinsLog(raw)
	}
	for _, f := range rep.Files {
		var src []byte
		for _, g := range f.Mutations {
			m := mutant{file: f.Filename, line: g.Line, col: g.Column, kind: g.Type, status: g.Status}
			if g.Status != notCovered {
				done = append(done, m)
				continue
			}
			if src == nil {
				if src, err = os.ReadFile(f.Filename); err != nil {
					return nil, nil, err
				}
			}
			if err := rebuildGremlin(&m, src); err != nil {
				return nil, nil, err
			}
			replay = append(replay, m)
		}
	}
	return done, replay, nil
}

// gremlinsLine is one mutant in gremlins' console output: "      KILLED ARITHMETIC_BASE at
// file.go:12:5".
var gremlinsLine = regexp.MustCompile(`^\s*(KILLED|LIVED|NOT COVERED|TIMED OUT|NOT VIABLE|SKIPPED|RUNNABLE) ([A-Z_]+) at (\S+):(\d+):(\d+)\s*$`)

// fromGremlinsLog reads the mutants out of gremlins' console output, for a run stopped
// before it wrote its report: on a busy machine a large file can take longer than one has.
func fromGremlinsLog(raw []byte) gremlinsJSON {
	var rep gremlinsJSON
	index := map[string]int{}
	for _, l := range strings.Split(string(raw), "\n") {
		m := gremlinsLine.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		i, ok := index[m[3]]
		if !ok {
			i = len(rep.Files)
			index[m[3]] = i
			rep.Files = append(rep.Files, gremlinsFile{Filename: m[3]})
		}
		line, _ := strconv.Atoi(m[4])
		col, _ := strconv.Atoi(m[5])
		rep.Files[i].Mutations = append(rep.Files[i].Mutations, gremlinsMutation{Type: m[2], Status: m[1], Line: line, Column: col})
	}
	return rep
}

// gremlinsEdits is gremlins v0.6.0's table of token replacements (internal/engine/mappings.go),
// needed to rebuild a mutant from the type, line and column its report gives.
var gremlinsEdits = map[string]map[token.Token]token.Token{
	"ARITHMETIC_BASE":       {token.ADD: token.SUB, token.MUL: token.QUO, token.QUO: token.MUL, token.REM: token.MUL, token.SUB: token.ADD},
	"CONDITIONALS_BOUNDARY": {token.GEQ: token.GTR, token.GTR: token.GEQ, token.LEQ: token.LSS, token.LSS: token.LEQ},
	"CONDITIONALS_NEGATION": {token.EQL: token.NEQ, token.GEQ: token.LSS, token.GTR: token.LEQ, token.LEQ: token.GTR, token.LSS: token.GEQ, token.NEQ: token.EQL},
	"INCREMENT_DECREMENT":   {token.DEC: token.INC, token.INC: token.DEC},
	"INVERT_ASSIGNMENTS":    {token.ADD_ASSIGN: token.SUB_ASSIGN, token.MUL_ASSIGN: token.QUO_ASSIGN, token.QUO_ASSIGN: token.MUL_ASSIGN, token.REM_ASSIGN: token.REM_ASSIGN, token.SUB_ASSIGN: token.ADD_ASSIGN},
	"INVERT_BITWISE":        {token.AND: token.OR, token.OR: token.AND, token.XOR: token.AND, token.AND_NOT: token.AND, token.SHL: token.SHR, token.SHR: token.SHL},
	"INVERT_BWASSIGN":       {token.AND_ASSIGN: token.OR_ASSIGN, token.OR_ASSIGN: token.AND_ASSIGN, token.XOR_ASSIGN: token.AND_ASSIGN, token.AND_NOT_ASSIGN: token.AND_ASSIGN, token.SHL_ASSIGN: token.SHR_ASSIGN, token.SHR_ASSIGN: token.SHL_ASSIGN},
	"INVERT_LOGICAL":        {token.LAND: token.LOR, token.LOR: token.LAND},
	"INVERT_LOOPCTRL":       {token.BREAK: token.CONTINUE, token.CONTINUE: token.BREAK},
	"INVERT_NEGATIVES":      {token.SUB: token.ADD},
	"REMOVE_SELF_ASSIGNMENTS": {token.ADD_ASSIGN: token.ASSIGN, token.AND_ASSIGN: token.ASSIGN, token.AND_NOT_ASSIGN: token.ASSIGN,
		token.MUL_ASSIGN: token.ASSIGN, token.OR_ASSIGN: token.ASSIGN, token.QUO_ASSIGN: token.ASSIGN, token.REM_ASSIGN: token.ASSIGN,
		token.SHL_ASSIGN: token.ASSIGN, token.SHR_ASSIGN: token.ASSIGN, token.SUB_ASSIGN: token.ASSIGN, token.XOR_ASSIGN: token.ASSIGN},
}

// rebuildGremlin finds the token at m's line and column and sets the edit gremlins would make.
func rebuildGremlin(m *mutant, src []byte) error {
	edits, ok := gremlinsEdits[m.kind]
	if !ok {
		return fmt.Errorf("%s:%d:%d: unknown gremlins mutant type %s", m.file, m.line, m.col, m.kind)
	}
	fset := token.NewFileSet()
	file := fset.AddFile(m.file, -1, len(src))
	var s scanner.Scanner
	s.Init(file, src, nil, 0)
	for {
		pos, tok, lit := s.Scan()
		if tok == token.EOF {
			break
		}
		p := fset.Position(pos)
		if p.Line != m.line || p.Column != m.col {
			continue
		}
		to, ok := edits[tok]
		if !ok {
			return fmt.Errorf("%s:%d:%d: %s cannot apply to %q", m.file, m.line, m.col, m.kind, lit+tok.String())
		}
		m.start, m.end, m.repl = p.Offset, p.Offset+len(tok.String()), to.String()
		return nil
	}
	return fmt.Errorf("%s:%d:%d: no token there; has the file changed since gremlins ran?", m.file, m.line, m.col)
}

// generate makes this program's own mutants of one file.
func generate(path, ops string) ([]mutant, error) {
	on := map[string]bool{}
	for _, op := range strings.Split(ops, ",") {
		on[strings.TrimSpace(op)] = true
	}
	if on["hand"] {
		for _, op := range handOps {
			on[op] = true
		}
	}
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, src, 0)
	if err != nil {
		return nil, err
	}
	var out []mutant
	add := func(n ast.Node, kind, repl string) {
		p := fset.Position(n.Pos())
		out = append(out, mutant{file: path, line: p.Line, col: p.Column, kind: kind,
			start: p.Offset, end: fset.Position(n.End()).Offset, repl: repl})
	}
	addSpan := func(start, end, at token.Pos, kind, repl, extra string) {
		p := fset.Position(at)
		out = append(out, mutant{file: path, line: p.Line, col: p.Column, kind: kind,
			start: fset.Position(start).Offset, end: fset.Position(end).Offset, repl: repl, extra: extra})
	}
	for _, op := range handOps {
		if on[op] {
			hand(fset, f, src, on, add, addSpan)
			break
		}
	}
	var boolResult []bool // stack: does the enclosing function return exactly one bool?
	var visit func(n ast.Node) bool
	visit = func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncDecl:
			boolResult = append(boolResult, returnsBool(n.Type))
			if n.Body != nil {
				ast.Inspect(n.Body, visit)
			}
			boolResult = boolResult[:len(boolResult)-1]
			return false
		case *ast.FuncLit:
			boolResult = append(boolResult, returnsBool(n.Type))
			ast.Inspect(n.Body, visit)
			boolResult = boolResult[:len(boolResult)-1]
			return false
		case *ast.BlockStmt:
			if on["stmt"] {
				removable(n.List, add)
			}
		case *ast.CaseClause:
			if on["stmt"] {
				removable(n.Body, add)
			}
		case *ast.CommClause:
			if on["stmt"] {
				removable(n.Body, add)
			}
		case *ast.Ident:
			// Only the predeclared constants: a local named true is nobody's business here.
			if on["bool"] && n.Obj == nil && (n.Name == "true" || n.Name == "false") {
				add(n, "BOOL_SWAP", map[string]string{"true": "false", "false": "true"}[n.Name])
			}
		case *ast.ReturnStmt:
			if on["ret"] && len(boolResult) > 0 && boolResult[len(boolResult)-1] && len(n.Results) == 1 {
				r := n.Results[0]
				// A literal true or false is already the bool swap's.
				if id, ok := r.(*ast.Ident); !ok || (id.Name != "true" && id.Name != "false") {
					add(r, "RETURN_TRUE", "true")
					add(r, "RETURN_FALSE", "false")
				}
			}
		}
		return true
	}
	ast.Inspect(f, visit)
	return out, nil
}

func returnsBool(t *ast.FuncType) bool {
	if t.Results == nil || len(t.Results.List) != 1 || len(t.Results.List[0].Names) > 1 {
		return false
	}
	id, ok := t.Results.List[0].Type.(*ast.Ident)
	return ok && id.Name == "bool"
}

// removable offers for removal the statements whose absence can still compile and whose
// effect a test should see: calls, assignments to what already exists, ++ and --, sends,
// defers, go statements and whole if statements (a guard, a branch of policy). Declarations
// and returns are left alone: removing them almost never compiles.
func removable(list []ast.Stmt, add func(ast.Node, string, string)) {
	for _, s := range list {
		switch s := s.(type) {
		case *ast.ExprStmt, *ast.IncDecStmt, *ast.SendStmt, *ast.DeferStmt, *ast.GoStmt, *ast.IfStmt:
			add(s, "REMOVE_STATEMENT", "")
		case *ast.AssignStmt:
			if s.Tok != token.DEFINE && !allBlank(s.Lhs) {
				add(s, "REMOVE_STATEMENT", "")
			}
		}
	}
}

func allBlank(es []ast.Expr) bool {
	for _, e := range es {
		if id, ok := e.(*ast.Ident); !ok || id.Name != "_" {
			return false
		}
	}
	return true
}

// test runs the tests of m's package with m applied through an overlay, then those of the
// packages in also (module-relative, as "./dir"), stopping at the first that catches it.
//
// runTests, when not nil, names the only tests of m's own package to run (those that execute
// the mutated code), run as tm says (quick ones first, each run within a timeout of its
// tests' own times). The packages in also run whole. built is the time spent building test
// binaries.
func test(ctx context.Context, tmp string, m mutant, timeout time.Duration, also []string, tm *testMap, runTests []string) (status string, built time.Duration, err error) {
	abs, err := filepath.Abs(m.file)
	if err != nil {
		return "", built, err
	}
	src, err := os.ReadFile(abs)
	if err != nil {
		return "", built, err
	}
	mutated := make([]byte, 0, len(src)+len(m.repl))
	mutated = append(append(append(append(mutated, src[:m.start]...), m.repl...), src[m.end:]...), m.extra...)
	mfile := filepath.Join(tmp, "mutant.go")
	if err := os.WriteFile(mfile, mutated, 0o644); err != nil {
		return "", built, err
	}
	overlay, err := json.Marshal(map[string]any{"Replace": map[string]string{abs: mfile}})
	if err != nil {
		return "", built, err
	}
	ofile := filepath.Join(tmp, "overlay.json")
	if err := os.WriteFile(ofile, overlay, 0o644); err != nil {
		return "", built, err
	}
	pkgs := append([]string{pkgOf(m.file)}, also...)
	for i, pkg := range pkgs {
		var only []string
		if i == 0 {
			only = runTests
		}
		status, err := testPackage(ctx, tmp, ofile, pkg, timeout, tm, only, &built)
		if err != nil {
			return "", built, err
		}
		// A mutant that compiles in its own package but breaks another's build is caught
		// there: the change is not one a caller could make unnoticed.
		if status == notViable && i > 0 {
			status = killed
		}
		if status != lived {
			return status, built, nil
		}
	}
	return lived, built, nil
}

// pkgOf is the package of a module-relative file, as go test names it.
func pkgOf(file string) string { return "./" + filepath.ToSlash(filepath.Dir(file)) }

// testPackage builds pkg's tests with the overlay in ofile and runs them: all of them, or
// only those named in only, one run per stage of tm (quick tests first) until one catches
// the mutant. The build's time is added to *built.
func testPackage(ctx context.Context, tmp, ofile, pkg string, timeout time.Duration, tm *testMap, only []string, built *time.Duration) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	bin := filepath.Join(tmp, "pkg.test")
	_ = os.Remove(bin)
	// The test binary is built first, bounded by nothing but the run itself: on a busy machine
	// a build can take minutes, and a slow build is no test catching the mutant. -vet=off: a
	// vet complaint about the mutant (an unused result, say) is not a test catching it either.
	build := exec.CommandContext(ctx, "go", "test", "-c", "-o", bin, "-vet=off", "-overlay", ofile, pkg)
	start := time.Now()
	_, err := runGroup(build)
	*built += time.Since(start)
	if ctx.Err() != nil { // interrupted: no verdict
		return "", ctx.Err()
	} else if err != nil {
		return notViable, nil
	}
	if _, err := os.Stat(bin); err != nil {
		return lived, nil // a package without tests: nothing catches the mutant
	}
	// The binary's own -test.timeout makes a hung test panic with a recognisable line; the
	// context is the backstop for a hang after the panic. Tests run in their package's
	// directory, as go test runs them.
	if only == nil {
		return runTestBinary(ctx, bin, pkg, timeout, nil)
	}
	// The quick tests first, by themselves: a mutant they kill is not kept waiting for the
	// slow ones, which would run first in source order.
	for _, stage := range tm.stages(only) {
		if status, err := runTestBinary(ctx, bin, pkg, tm.timeout(stage, timeout), stage); err != nil || status != lived {
			return status, err
		}
	}
	return lived, nil
}

// runTestBinary runs a test binary built by testPackage: all its tests, or only those named
// in only.
func runTestBinary(ctx context.Context, bin, pkg string, timeout time.Duration, only []string) (string, error) {
	tctx, cancel := context.WithTimeout(ctx, timeout+30*time.Second)
	defer cancel()
	args := []string{"-test.count=1", "-test.failfast", "-test.timeout=" + timeout.String()}
	if only != nil {
		args = append(args, "-test.run", runPattern(only))
	}
	run := exec.CommandContext(tctx, bin, args...)
	run.Dir = filepath.FromSlash(pkg)
	out, err := runGroup(run)
	var exit *exec.ExitError
	switch {
	case err == nil:
		return lived, nil
	case ctx.Err() != nil:
		return "", ctx.Err()
	case tctx.Err() != nil || strings.Contains(out, "panic: test timed out"):
		return timedOut, nil
	case errors.As(err, &exit):
		return killed, nil
	default:
		return "", fmt.Errorf("%s tests: %w", pkg, err)
	}
}

// runGroup runs cmd in a process group of its own, so that a timeout or an interrupt ends
// the compiler or the test binary it started, not just the command, and returns its output.
func runGroup(cmd *exec.Cmd) (string, error) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.String(), err
}

// printTables writes the table of the tool mutants and, apart, that of the hand classes.
func printTables(w io.Writer, all []mutant) {
	var tool, handMade []mutant
	for _, m := range all {
		if handKinds[m.kind] {
			handMade = append(handMade, m)
		} else {
			tool = append(tool, m)
		}
	}
	if len(tool) > 0 {
		fmt.Fprintln(w, "tool mutants (gremlins, and statement removal, true/false swaps, constant returns):")
		printTable(w, tool)
	}
	if len(handMade) > 0 {
		fmt.Fprintln(w, "hand-class mutants (a field, check or table entry dropped, a bound or constant moved, a scan reversed):")
		printTable(w, handMade)
	}
}

// progressLine is a results line as a run prints it while it goes: "[3/117 4.2s 5] " before
// it (earlier runs printed "[3/117] ").
var progressLine = regexp.MustCompile(`^\[\d+/\d+[^\]]*\] `)

// printResults prints the tables of a results file, or of the progress lines of a run's
// output (other lines are skipped), without running anything.
func printResults(w io.Writer, path string) error {
	raw, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var all []mutant
	for _, l := range strings.Split(string(raw), "\n") {
		l = progressLine.ReplaceAllString(l, "")
		fields := strings.Split(l, "\t")
		pos := strings.Split(fields[0], ":")
		if len(fields) != 3 || len(pos) != 3 {
			continue
		}
		all = append(all, mutant{file: pos[0], kind: fields[1], status: fields[2]})
	}
	if len(all) == 0 {
		return fmt.Errorf("%s: no results lines", path)
	}
	printTables(w, all)
	return nil
}

// printTable writes one row per file. Score is the share of mutants the tests detect (killed,
// or hung: timed out again alone on an idle machine) among those that could be detected: a
// timeout not confirmed counts against the score, and not-viable mutants do not compile and
// are left out, as gremlins leaves them out of its efficacy.
func printTable(w io.Writer, all []mutant) {
	type row struct{ killed, hung, lived, notCovered, timedOut, notViable int }
	rows := map[string]*row{}
	for _, m := range all {
		r := rows[m.file]
		if r == nil {
			r = &row{}
			rows[m.file] = r
		}
		switch m.status {
		case killed:
			r.killed++
		case lived:
			r.lived++
		case notCovered:
			r.notCovered++
		case hung:
			r.hung++
		case timedOut:
			r.timedOut++
		case notViable:
			r.notViable++
		}
	}
	names := make([]string, 0, len(rows))
	for n := range rows {
		names = append(names, n)
	}
	sort.Strings(names)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "file\tkilled\thung\tsurvived\tnot covered\ttimed out (unconfirmed)\tnot viable\tscore\t")
	var total row
	line := func(name string, r row) {
		score := "-"
		if d := r.killed + r.hung + r.timedOut + r.lived + r.notCovered; d > 0 {
			score = fmt.Sprintf("%.0f%%", 100*float64(r.killed+r.hung)/float64(d))
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t%d\t%s\t\n", name, r.killed, r.hung, r.lived, r.notCovered, r.timedOut, r.notViable, score)
	}
	for _, n := range names {
		r := *rows[n]
		line(n, r)
		total.killed += r.killed
		total.hung += r.hung
		total.lived += r.lived
		total.notCovered += r.notCovered
		total.timedOut += r.timedOut
		total.notViable += r.notViable
	}
	line("total", total)
	tw.Flush()
}
