// Package pgtest runs a throwaway PostgreSQL server for tests: initdb and pg_ctl in a
// temporary directory, on a free loopback port, with its unix socket in that directory.
// When the tests run as root (initdb refuses root) the server runs as the "postgres"
// system user, through runuser.
//
// A missing server is a skip on a developer's machine and a failure where
// ESCROW_REQUIRE_SERVERS=1 (CI sets it).
//
// The package links no SQL driver: it talks to the server through database/sql's "pgx"
// driver, which the test binary registers by importing github.com/jackc/pgx/v5/stdlib. So
// it can stay in the root module, whose go.mod requires no database library, and serve the
// nested modules (webhook/sqlstore, cmd/escrow) that do.
package pgtest

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// BinDir is where Debian's PostgreSQL 15 puts its programs; ESCROW_PG_BIN overrides it.
const BinDir = "/usr/lib/postgresql/15/bin"

// ErrUnavailable is returned by Start when no server can be run here.
var ErrUnavailable = errors.New("pgtest: PostgreSQL is not available")

// Server is a running PostgreSQL. Stop it when done.
type Server struct {
	dir, data, bin string
	port           int
	asUser         []string // command prefix to run as the postgres user, or nil
	dbs            atomic.Int64
}

// Start initializes and starts a server. Its error matches ErrUnavailable when the
// binaries are missing or cannot run here.
func Start() (*Server, error) {
	bin := os.Getenv("ESCROW_PG_BIN")
	if bin == "" {
		bin = BinDir
	}
	for _, p := range []string{"initdb", "pg_ctl", "postgres"} {
		if _, err := os.Stat(filepath.Join(bin, p)); err != nil {
			return nil, fmt.Errorf("%w: %s not found (install postgresql-15, or set ESCROW_PG_BIN)", ErrUnavailable, filepath.Join(bin, p))
		}
	}
	reapOrphans(bin)
	dir, err := os.MkdirTemp("", "escrow-pgtest-")
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, ownerFile), []byte(strconv.Itoa(os.Getpid())), 0o644); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	s := &Server{dir: dir, data: filepath.Join(dir, "data"), bin: bin}
	if err := s.start(); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	return s, nil
}

// ownerFile names, in a server's directory, the pid of the process that started it.
const ownerFile = "owner.pid"

// reapOrphans stops the servers whose starting process is gone and removes their
// directories. A test binary killed on a timeout (go test's, or a mutation run's) never
// runs its Stop, and its server would otherwise run until the machine restarts. Linux
// only: elsewhere a process's liveness is not read this way, and nothing is reaped.
func reapOrphans(bin string) {
	if runtime.GOOS != "linux" {
		return
	}
	owners, _ := filepath.Glob(filepath.Join(os.TempDir(), "escrow-pgtest-*", ownerFile))
	for _, f := range owners {
		if ownerGone(f) {
			reap(bin, filepath.Dir(f))
		}
	}
}

// ownerGone reports whether the process an owner file names has ended. An unreadable file
// says nothing, and a running owner is a test binary of another package: both are left.
func ownerGone(ownerPath string) bool {
	b, err := os.ReadFile(ownerPath)
	if err != nil {
		return false
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 0 {
		return false
	}
	_, err = os.Stat(fmt.Sprintf("/proc/%d", pid))
	return err != nil
}

// reap stops the server in dir, if it runs, and removes the directory.
func reap(bin, dir string) {
	o := &Server{dir: dir, data: filepath.Join(dir, "data"), bin: bin}
	if os.Geteuid() == 0 && o.runAsPostgres() != nil {
		return
	}
	o.run("pg_ctl", "-D", o.data, "-m", "immediate", "-w", "-t", "30", "stop") // fails when it is not running
	os.RemoveAll(dir)
}

// start initializes the cluster in s.dir and starts the server; the caller removes the
// directory when it fails.
func (s *Server) start() error {
	if os.Geteuid() == 0 {
		if err := s.runAsPostgres(); err != nil {
			return err
		}
	}
	if err := s.run("initdb", "-D", s.data, "-U", "postgres", "-A", "trust", "-E", "UTF8", "--no-sync", "--no-instructions"); err != nil {
		return err
	}
	// A free port can be taken between Listen and the server's start: try a few.
	for try := 0; ; try++ {
		port, err := freePort()
		if err != nil {
			return err
		}
		s.port = port
		opts := fmt.Sprintf("-p %d -k %s -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200", s.port, s.dir)
		err = s.run("pg_ctl", "-D", s.data, "-o", opts, "-l", filepath.Join(s.dir, "log"), "-w", "-t", "60", "start")
		if err == nil {
			return nil
		}
		if try == 2 {
			log, _ := os.ReadFile(filepath.Join(s.dir, "log"))
			return fmt.Errorf("%w\n%s", err, log)
		}
	}
}

// runAsPostgres makes the server run as the postgres user (initdb refuses root), through
// runuser, in a directory that user owns.
func (s *Server) runAsPostgres() error {
	u, err := user.Lookup("postgres")
	if err != nil {
		return fmt.Errorf("%w: running as root and there is no postgres user to run the server as", ErrUnavailable)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	if err := os.Chown(s.dir, uid, gid); err != nil {
		return err
	}
	runuser, err := exec.LookPath("runuser")
	if err != nil {
		return fmt.Errorf("%w: running as root and runuser is missing", ErrUnavailable)
	}
	s.asUser = []string{runuser, "-u", "postgres", "--"}
	return nil
}

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// run runs one of the server's programs, as the postgres user when root.
func (s *Server) run(prog string, args ...string) error {
	argv := append(append(append([]string{}, s.asUser...), filepath.Join(s.bin, prog)), args...)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = s.dir
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("pgtest: %s: %v\n%s", prog, err, out.Bytes())
	}
	return nil
}

// Stop stops the server at once and removes its directory.
func (s *Server) Stop() error {
	err := s.run("pg_ctl", "-D", s.data, "-m", "immediate", "-w", "-t", "30", "stop")
	return errors.Join(err, os.RemoveAll(s.dir))
}

// DSN returns the URL of a database on the server.
func (s *Server) DSN(db string) string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/%s?sslmode=disable", s.port, db)
}

// NewDatabase creates an empty database for one test and returns its URL. The test
// binary must have registered the "pgx" driver.
func (s *Server) NewDatabase(t testing.TB) string {
	t.Helper()
	name := fmt.Sprintf("test_%d", s.dbs.Add(1))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	db, err := sql.Open("pgx", s.DSN("postgres"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.ExecContext(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatalf("pgtest: creating a database: %v", err)
	}
	return s.DSN(name)
}

// Required reports whether a missing server must fail the tests (ESCROW_REQUIRE_SERVERS=1).
func Required() bool { return os.Getenv("ESCROW_REQUIRE_SERVERS") == "1" }

// Need skips t, or fails it when servers are required, if s is nil for startErr.
func Need(t testing.TB, s *Server, startErr error) *Server {
	t.Helper()
	if s != nil {
		return s
	}
	if Required() || !errors.Is(startErr, ErrUnavailable) {
		t.Fatalf("PostgreSQL is required here (ESCROW_REQUIRE_SERVERS=1) or failed to start: %v", startErr)
	}
	t.Skipf("skipping: %v (set ESCROW_REQUIRE_SERVERS=1 to make this a failure)", startErr)
	return nil
}

// CPU returns the processor time the server has used so far: its postmaster's and every
// backend's, live or exited, as Linux's /proc tells (user and system, at 100 ticks a
// second). Elsewhere it fails.
func (s *Server) CPU() (time.Duration, error) {
	b, err := os.ReadFile(filepath.Join(s.data, "postmaster.pid"))
	if err != nil {
		return 0, err
	}
	pid, _, _ := strings.Cut(string(b), "\n")
	ticks, _, err := procTicks(pid)
	if err != nil {
		return 0, err
	}
	ds, err := os.ReadDir("/proc")
	if err != nil {
		return 0, err
	}
	for _, d := range ds {
		t, parent, err := procTicks(d.Name())
		if err == nil && parent == pid {
			ticks += t
		}
	}
	return time.Duration(ticks) * 10 * time.Millisecond, nil
}

// procTicks reads a process's CPU ticks and its parent's pid from /proc/PID/stat.
func procTicks(pid string) (ticks int64, ppid string, err error) {
	b, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		return 0, "", err
	}
	return parseStat(string(b))
}

// parseStat reads the CPU ticks (user and system, the process's own and its reaped
// children's) and the parent's pid from a /proc/PID/stat line.
func parseStat(s string) (ticks int64, ppid string, err error) {
	bad := errors.New("pgtest: unreadable /proc stat line")
	end := strings.LastIndexByte(s, ')') // the command name may hold spaces and parentheses
	if end < 0 || end+2 > len(s) {
		return 0, "", bad
	}
	f := strings.Fields(s[end+2:]) // from the state on: utime is the line's 14th field
	if len(f) < 15 {
		return 0, "", bad
	}
	for _, v := range f[11:15] { // utime, stime, cutime, cstime
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return 0, "", bad
		}
		ticks += n
	}
	return ticks, f[1], nil
}
