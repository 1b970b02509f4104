package pgtest

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"
	"time"
)

func TestParseStatSumsOwnAndReapedChildrenTicks(t *testing.T) {
	// utime 7, stime 3, cutime 20, cstime 5; a command name with a space and a parenthesis.
	line := "4242 (postgres: x) y) S 4200 4242 4242 0 -1 4194560 900 0 0 0 7 3 20 5 20 0 1 0 100 1000 50"
	ticks, ppid, err := parseStat(line)
	if err != nil || ticks != 35 || ppid != "4200" {
		t.Fatalf("parseStat = %d, %q, %v; want 35, \"4200\", nil", ticks, ppid, err)
	}
	for _, bad := range []string{"", "4242 (postgres", "4242 (postgres) S 1 2 3", "4242 (p) S 1 2 3 4 5 6 7 8 9 10 x 3 20 5 1"} {
		if _, _, err := parseStat(bad); err == nil {
			t.Errorf("parseStat(%q) took it", bad)
		}
	}
}

func TestCPUCountsTheServersWork(t *testing.T) {
	srv, err := Start()
	srv = Need(t, srv, err)
	t.Cleanup(func() { srv.Stop() })
	before, err := srv.CPU()
	if err != nil {
		t.Fatal(err)
	}
	// Each database created is a backend that does the work and exits: its time must
	// still count, through the postmaster's reaped children.
	port := strconv.Itoa(srv.port)
	for i := range 8 {
		if err := srv.run("createdb", "-h", "127.0.0.1", "-p", port, "-U", "postgres", "cpu"+strconv.Itoa(i)); err != nil {
			t.Fatal(err)
		}
	}
	after, err := srv.CPU()
	if err != nil {
		t.Fatal(err)
	}
	if after <= before {
		t.Errorf("CPU = %v before creating 8 databases, %v after; want it grown", before, after)
	}
}

// TestStartReapsAServerWhoseStarterIsGone: a server left running by a test binary that was
// killed (its Stop never ran) is stopped, and its directory removed, by the next Start; a
// server whose starter still runs is left alone.
func TestStartReapsAServerWhoseStarterIsGone(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("orphans are found through /proc")
	}
	orphan, err := Start()
	orphan = Need(t, orphan, err)
	live, err := Start()
	live = Need(t, live, err)
	t.Cleanup(func() { live.Stop() })
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(orphan.dir, ownerFile), []byte(strconv.Itoa(gone.Process.Pid)), 0o644); err != nil {
		t.Fatal(err)
	}
	next, err := Start()
	next = Need(t, next, err)
	t.Cleanup(func() { next.Stop() })
	if _, err := os.Stat(orphan.dir); !os.IsNotExist(err) {
		t.Errorf("the orphan's directory: %v, want it removed", err)
		orphan.Stop()
	}
	if c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", orphan.port), time.Second); err == nil {
		c.Close()
		t.Error("the orphan still listens")
	}
	if c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", live.port), time.Second); err != nil {
		t.Errorf("the live server was stopped: %v", err)
	} else {
		c.Close()
	}
}
