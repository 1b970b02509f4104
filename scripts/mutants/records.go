package main

// The mutation records: what each run found, kept in the repository so that a reviewer reads
// figures a script wrote rather than prose someone typed.
//
//   - records.tsv: one row per mutant of a recorded run: file, position, kind, class (tool or
//     hand), status, the commit and date of the run, and a verdict with a note that a person
//     adds to a survivor (equivalent, not-pinned, or killed-since with the test's name). A
//     run replaces its files' rows; a survivor found again at the same position keeps its
//     verdict.
//   - earlier.tsv: per file and class, the figures of runs made before per-mutant rows were
//     kept. Their timeouts were counted as detections at the time, on a loaded machine; the
//     table shows them apart, as unconfirmed.
//
// -scores prints TESTING.md's table from both: a file's recorded rows when it has any, its
// earlier figures otherwise.

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"time"
)

// recordHeader names records.tsv's columns.
var recordHeader = []string{"file", "pos", "kind", "class", "status", "commit", "date", "verdict", "note"}

// record is one row of records.tsv.
type record struct {
	File, Pos, Kind, Class, Status, Commit, Date, Verdict, Note string
}

// Verdicts a person gives a survivor.
const (
	verdictEquivalent  = "equivalent"   // no caller can tell the mutant from the code
	verdictNotPinned   = "not-pinned"   // a caller could tell; the note says why no test pins it
	verdictKilledSince = "killed-since" // a test written since fails with it; the note names it
)

func (r record) key() string { return r.File + "\t" + r.Pos + "\t" + r.Kind }

func (r record) fields() []string {
	return []string{r.File, r.Pos, r.Kind, r.Class, r.Status, r.Commit, r.Date, r.Verdict, r.Note}
}

// classOf is "hand" for the hand classes of hand.go and "tool" for every other mutant.
func classOf(kind string) string {
	if handKinds[kind] {
		return "hand"
	}
	return "tool"
}

// readTSV reads a tab-separated file whose first line is header; a missing file is empty.
func readTSV(path string, header []string) ([][]string, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	defer f.Close()
	r := csv.NewReader(f)
	r.Comma, r.Comment, r.LazyQuotes, r.FieldsPerRecord = '\t', '#', true, len(header)
	rows, err := r.ReadAll()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(rows) == 0 || strings.Join(rows[0], "\t") != strings.Join(header, "\t") {
		return nil, fmt.Errorf("%s: the first line must be the header %q", path, strings.Join(header, "\t"))
	}
	return rows[1:], nil
}

// readRecords reads records.tsv.
func readRecords(path string) ([]record, error) {
	rows, err := readTSV(path, recordHeader)
	if err != nil {
		return nil, err
	}
	out := make([]record, len(rows))
	for i, f := range rows {
		out[i] = record{f[0], f[1], f[2], f[3], f[4], f[5], f[6], f[7], f[8]}
	}
	return out, nil
}

// writeRecords writes records.tsv, sorted by file, line and column, so that a run's diff
// shows what changed.
func writeRecords(path string, recs []record) error {
	sort.SliceStable(recs, func(i, j int) bool {
		if recs[i].File != recs[j].File {
			return recs[i].File < recs[j].File
		}
		li, ci := splitPos(recs[i].Pos)
		lj, cj := splitPos(recs[j].Pos)
		if li != lj {
			return li < lj
		}
		if ci != cj {
			return ci < cj
		}
		return recs[i].Kind < recs[j].Kind
	})
	var b bytes.Buffer
	b.WriteString(strings.Join(recordHeader, "\t") + "\n")
	for _, r := range recs {
		for i, f := range r.fields() {
			if i > 0 {
				b.WriteByte('\t')
			}
			b.WriteString(strings.NewReplacer("\t", " ", "\n", " ").Replace(f))
		}
		b.WriteByte('\n')
	}
	return os.WriteFile(path, b.Bytes(), 0o644)
}

func splitPos(pos string) (line, col int) {
	l, c, _ := strings.Cut(pos, ":")
	line, _ = strconv.Atoi(l)
	col, _ = strconv.Atoi(c)
	return line, col
}

// mergeRecords replaces the rows of the files run in ms with ms's outcomes, at commit and
// date. A survivor found again where a person judged it keeps the verdict and note; any
// other verdict is dropped with its row, since the code or the tests changed under it.
func mergeRecords(old []record, ms []mutant, commit, date string) []record {
	ran := map[string]bool{}
	for _, m := range ms {
		ran[m.file] = true
	}
	judged := map[string]record{}
	var out []record
	for _, r := range old {
		if ran[r.File] {
			judged[r.key()] = r
			continue
		}
		out = append(out, r)
	}
	for _, m := range ms {
		r := record{File: m.file, Pos: fmt.Sprintf("%d:%d", m.line, m.col), Kind: m.kind,
			Class: classOf(m.kind), Status: m.status, Commit: commit, Date: date}
		if prev, ok := judged[r.key()]; ok && prev.Verdict != "" && survived(m.status) {
			r.Verdict, r.Note = prev.Verdict, prev.Note
		}
		out = append(out, r)
	}
	return out
}

// survived reports whether no test caught a mutant of that status.
func survived(status string) bool { return status == lived || status == notCovered }

// recordRun merges ms into the records file at path, stamped with the repository's commit
// (with "+changes" when the mutated files differ from it) and today's date.
func recordRun(path string, ms []mutant) error {
	if path == "" || len(ms) == 0 {
		return nil
	}
	old, err := readRecords(path)
	if err != nil {
		return err
	}
	commit := "unknown"
	if out, err := exec.Command("git", "rev-parse", "--short", "HEAD").Output(); err == nil {
		commit = strings.TrimSpace(string(out))
	}
	files := map[string]bool{}
	args := []string{"diff", "--quiet", "HEAD", "--"}
	for _, m := range ms {
		if !files[m.file] {
			files[m.file] = true
			args = append(args, m.file)
		}
	}
	if exec.Command("git", args...).Run() != nil {
		commit += "+changes"
	}
	return writeRecords(path, mergeRecords(old, ms, commit, time.Now().UTC().Format("2006-01-02")))
}

// earlierHeader names earlier.tsv's columns: per file and class, a run's figures.
// detected counts killed mutants and timeouts together, as those runs did; timedout says how
// many of them were timeouts; since, equivalent and notpinned are the survivors as judged
// after the run.
var earlierHeader = []string{"file", "class", "commit", "date", "detected", "timedout", "viable", "notviable", "since", "equivalent", "notpinned", "note"}

// earlier is one row of earlier.tsv.
type earlier struct {
	file, class, commit, date                                           string
	detected, timedOut, viable, notViable, since, equivalent, notPinned int
	note                                                                string
}

func readEarlier(path string) ([]earlier, error) {
	rows, err := readTSV(path, earlierHeader)
	if err != nil {
		return nil, err
	}
	out := make([]earlier, 0, len(rows))
	for _, f := range rows {
		e := earlier{file: f[0], class: f[1], commit: f[2], date: f[3], note: f[11]}
		for i, p := range []*int{&e.detected, &e.timedOut, &e.viable, &e.notViable, &e.since, &e.equivalent, &e.notPinned} {
			if *p, err = strconv.Atoi(f[4+i]); err != nil {
				return nil, fmt.Errorf("%s: %s, column %s: %w", path, f[0], earlierHeader[4+i], err)
			}
		}
		out = append(out, e)
	}
	return out, nil
}

// figures are one file's counts in one class, from either source.
type figures struct {
	killed, timedOut, viable, notViable, since, equivalent, notPinned, unjudged int
	commit, date                                                                string
}

// cell renders figures as TESTING.md's table shows them: the confirmed detections of the
// viable mutants, the unconfirmed timeouts apart, then what became of the survivors.
func (f figures) cell() string {
	if f.viable == 0 {
		return "not run"
	}
	s := fmt.Sprintf("%d of %d (%.0f%%)", f.killed, f.viable, 100*float64(f.killed)/float64(f.viable))
	var after []string
	if f.timedOut > 0 {
		after = append(after, fmt.Sprintf("%d timed out, unconfirmed", f.timedOut))
	}
	for _, p := range []struct {
		n    int
		what string
	}{{f.since, "killed since"}, {f.equivalent, "equivalent"}, {f.notPinned, "not pinned"}, {f.unjudged, "not judged"}} {
		if p.n > 0 {
			after = append(after, fmt.Sprintf("%d %s", p.n, p.what))
		}
	}
	if len(after) > 0 {
		s += "; " + strings.Join(after, ", ")
	}
	return s
}

// fromRecords counts one file's recorded rows of one class.
func fromRecords(recs []record) figures {
	var f figures
	for _, r := range recs {
		f.commit, f.date = r.Commit, r.Date
		switch r.Status {
		case notViable:
			f.notViable++
			continue
		case killed, hung:
			f.killed++
		case timedOut:
			f.timedOut++
		}
		f.viable++
		if !survived(r.Status) {
			continue
		}
		switch r.Verdict {
		case verdictKilledSince:
			f.since++
		case verdictEquivalent:
			f.equivalent++
		case verdictNotPinned:
			f.notPinned++
		default:
			f.unjudged++
		}
	}
	return f
}

// fromEarlier is an earlier run's figures, its timeouts taken out of the detections.
func fromEarlier(e earlier) figures {
	return figures{killed: e.detected - e.timedOut, timedOut: e.timedOut, viable: e.viable,
		notViable: e.notViable, since: e.since, equivalent: e.equivalent, notPinned: e.notPinned,
		commit: e.commit, date: e.date}
}

// printScores writes TESTING.md's score table: one row per file, the tool mutants and the
// hand classes apart, each from the file's recorded rows or, without any, its latest
// earlier figures; then the notes of the earlier rows.
func printScores(w io.Writer, recordsPath, earlierPath string) error {
	recs, err := readRecords(recordsPath)
	if err != nil {
		return err
	}
	early, err := readEarlier(earlierPath)
	if err != nil {
		return err
	}
	cells := map[string]map[string]figures{} // file, class
	set := func(file, class string, f figures) {
		if cells[file] == nil {
			cells[file] = map[string]figures{}
		}
		cells[file][class] = f
	}
	for _, e := range early { // later rows of a file replace earlier ones
		set(e.file, e.class, fromEarlier(e))
	}
	byFile := map[string][]record{}
	for _, r := range recs {
		byFile[r.File+"\t"+r.Class] = append(byFile[r.File+"\t"+r.Class], r)
	}
	for k, rs := range byFile {
		file, class, _ := strings.Cut(k, "\t")
		set(file, class, fromRecords(rs))
	}
	names := make([]string, 0, len(cells))
	for n := range cells {
		names = append(names, n)
	}
	sort.Strings(names)
	fmt.Fprintln(w, "| file | tool mutants | hand classes | run at |")
	fmt.Fprintln(w, "|---|---|---|---|")
	for _, n := range names {
		t, h := cells[n]["tool"], cells[n]["hand"]
		fmt.Fprintf(w, "| %s | %s | %s | %s |\n", n, t.cell(), h.cell(), runAt(t, h))
	}
	return nil
}

// runAt names the commits and dates the two cells were measured at.
func runAt(t, h figures) string {
	at := func(f figures) string {
		if f.commit == "" || f.commit == "-" {
			return ""
		}
		return f.commit + ", " + f.date
	}
	a, b := at(t), at(h)
	switch {
	case a == b || b == "":
		return a
	case a == "":
		return "hand " + b
	}
	return "tool " + a + "; hand " + b
}

// confirmTimeout decides a mutant whose tests timed out: a timeout on a busy machine may be
// the load, not a hang. It waits, up to wait, for the machine to be idle (machineIdle, in a
// run), then runs the mutant again alone through again (with
// twice the time): a second timeout is a hang (hung), any other outcome stands. If the
// machine stays busy, the timeout stays unconfirmed (timedOut) and counts as no detection.
func confirmTimeout(ctx context.Context, wait time.Duration, idle func() bool, again func() (string, error)) (string, error) {
	deadline := time.Now().Add(wait)
	for !idle() {
		if time.Now().After(deadline) {
			fmt.Fprintln(os.Stderr, "mutants: the machine stayed busy: a timeout left unconfirmed")
			return timedOut, nil
		}
		select {
		case <-ctx.Done():
			return "", ctx.Err()
		case <-time.After(15 * time.Second):
		}
	}
	status, err := again()
	if status == timedOut {
		status = hung
	}
	return status, err
}

// machineIdle reports whether the one-minute load average is below half the processors.
// Where it cannot be read (not Linux), the machine is taken as idle.
func machineIdle() bool {
	raw, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return true
	}
	f := strings.Fields(string(raw))
	load, err := strconv.ParseFloat(f[0], 64)
	return err != nil || load < float64(runtime.NumCPU())/2
}
