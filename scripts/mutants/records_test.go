package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestTimeoutIsAHangOnlyWhenItRepeatsOnAnIdleMachine: a timed-out mutant run again alone
// on an idle machine is a hang if it times out again, and takes the second outcome
// otherwise; on a machine that stays busy its timeout stays unconfirmed, never run again.
func TestTimeoutIsAHangOnlyWhenItRepeatsOnAnIdleMachine(t *testing.T) {
	ctx := context.Background()
	idle := func() bool { return true }
	busy := func() bool { return false }
	for _, c := range []struct {
		name  string
		idle  func() bool
		again string
		want  string
		runs  int
	}{
		{"times out again when idle", idle, timedOut, hung, 1},
		{"killed when idle", idle, killed, killed, 1},
		{"lives when idle", idle, lived, lived, 1},
		{"busy throughout", busy, timedOut, timedOut, 0},
	} {
		runs := 0
		got, err := confirmTimeout(ctx, 0, c.idle, func() (string, error) { runs++; return c.again, nil })
		if err != nil || got != c.want || runs != c.runs {
			t.Errorf("%s: got %q, %v after %d runs; want %q after %d", c.name, got, err, runs, c.want, c.runs)
		}
	}
}

// TestRecordsKeepAVerdictWhileItsMutantSurvives: a run replaces the rows of the files it
// ran and leaves the others; a person's verdict on a survivor stays while the same mutant
// survives, and goes when a test now kills it.
func TestRecordsKeepAVerdictWhileItsMutantSurvives(t *testing.T) {
	path := filepath.Join(t.TempDir(), "records.tsv")
	old := []record{
		{File: "a.go", Pos: "3:9", Kind: "BOOL_SWAP", Class: "tool", Status: lived, Commit: "c1", Date: "d1", Verdict: verdictEquivalent, Note: "a set"},
		{File: "a.go", Pos: "5:2", Kind: "SCAN_REVERSED", Class: "hand", Status: lived, Commit: "c1", Date: "d1", Verdict: verdictNotPinned, Note: "why"},
		{File: "a.go", Pos: "7:1", Kind: "REMOVE_STATEMENT", Class: "tool", Status: killed, Commit: "c1", Date: "d1"},
		{File: "b.go", Pos: "1:1", Kind: "BOOL_SWAP", Class: "tool", Status: lived, Commit: "c0", Date: "d0", Verdict: verdictEquivalent, Note: "b"},
	}
	run := []mutant{
		{file: "a.go", line: 3, col: 9, kind: "BOOL_SWAP", status: lived},
		{file: "a.go", line: 5, col: 2, kind: "SCAN_REVERSED", status: killed},
	}
	if err := writeRecords(path, mergeRecords(old, run, "c2", "d2")); err != nil {
		t.Fatal(err)
	}
	got, err := readRecords(path)
	if err != nil {
		t.Fatal(err)
	}
	var rows []string
	for _, r := range got {
		rows = append(rows, strings.Join(r.fields(), "|"))
	}
	want := []string{
		"a.go|3:9|BOOL_SWAP|tool|LIVED|c2|d2|equivalent|a set",
		"a.go|5:2|SCAN_REVERSED|hand|KILLED|c2|d2||",
		"b.go|1:1|BOOL_SWAP|tool|LIVED|c0|d0|equivalent|b",
	}
	if strings.Join(rows, "\n") != strings.Join(want, "\n") {
		t.Errorf("records:\n%s\nwant:\n%s", strings.Join(rows, "\n"), strings.Join(want, "\n"))
	}
}

// TestScoresCountOnlyConfirmedDetections: the score table counts killed mutants and hangs
// as detected, shows unconfirmed timeouts apart (an earlier run's too, which counted them),
// and prefers a file's recorded rows to its earlier figures.
func TestScoresCountOnlyConfirmedDetections(t *testing.T) {
	dir := t.TempDir()
	recs := []record{
		{File: "a.go", Pos: "1:1", Kind: "BOOL_SWAP", Class: "tool", Status: killed, Commit: "c2", Date: "d2"},
		{File: "a.go", Pos: "2:1", Kind: "BOOL_SWAP", Class: "tool", Status: hung, Commit: "c2", Date: "d2"},
		{File: "a.go", Pos: "3:1", Kind: "BOOL_SWAP", Class: "tool", Status: timedOut, Commit: "c2", Date: "d2"},
		{File: "a.go", Pos: "4:1", Kind: "BOOL_SWAP", Class: "tool", Status: lived, Commit: "c2", Date: "d2", Verdict: verdictEquivalent},
		{File: "a.go", Pos: "5:1", Kind: "BOOL_SWAP", Class: "tool", Status: notViable, Commit: "c2", Date: "d2"},
	}
	if err := writeRecords(filepath.Join(dir, "records.tsv"), recs); err != nil {
		t.Fatal(err)
	}
	earlier := strings.Join(earlierHeader, "\t") + "\n" +
		"a.go\ttool\tc0\td0\t9\t0\t9\t0\t0\t0\t0\treplaced by the records\n" +
		"b.go\ttool\tc1\td1\t67\t18\t85\t4\t8\t0\t0\tnote\n"
	if err := writeFile(filepath.Join(dir, "earlier.tsv"), earlier); err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	if err := printScores(&out, filepath.Join(dir, "records.tsv"), filepath.Join(dir, "earlier.tsv")); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"| a.go | 2 of 4 (50%); 1 timed out, unconfirmed, 1 equivalent | not run | c2, d2 |",
		"| b.go | 49 of 85 (58%); 18 timed out, unconfirmed, 8 killed since | not run | c1, d1 |",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("no row %q in\n%s", want, out.String())
		}
	}
}

func writeFile(path, s string) error { return os.WriteFile(path, []byte(s), 0o644) }
