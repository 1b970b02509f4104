// Package redisserver runs a throwaway redis-server for tests: on a free loopback port, in a
// temporary directory, persisting nothing, stopped when the test ends.
//
// Tests that need it skip when redis-server is not installed, with a message saying so,
// unless ESCROW_REQUIRE_SERVERS=1 (as CI sets), which makes a missing server a failure.
package redisserver

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// RequireEnv is the environment variable that turns a missing server from a skip into a
// failure.
const RequireEnv = "ESCROW_REQUIRE_SERVERS"

// Server is one redis-server process, which can be stopped and started again on its port.
type Server struct {
	t    testing.TB
	path string
	dir  string
	port int

	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{} // closed when cmd has exited
}

// Start runs redis-server on a free port and stops it when the test ends. It skips the test
// when redis-server is not installed, or fails it when RequireEnv is "1".
func Start(t testing.TB) *Server {
	t.Helper()
	path, err := exec.LookPath("redis-server")
	if err != nil {
		if os.Getenv(RequireEnv) == "1" {
			t.Fatalf("redis-server is not installed, and %s=1 requires it: %v", RequireEnv, err)
		}
		t.Skipf("redis-server is not installed (apt-get install redis-server); skipping. Set %s=1 to make this a failure.", RequireEnv)
	}
	s := &Server{t: t, path: path, dir: t.TempDir()}
	t.Cleanup(s.Stop)
	var last error
	for range 5 { // a free port can be taken between finding it and binding it
		if s.port, err = freePort(); err != nil {
			t.Fatalf("redisserver: finding a free port: %v", err)
		}
		if last = s.start(); last == nil {
			return s
		}
	}
	t.Fatalf("redisserver: %v", last)
	return nil
}

// Addr is the server's host:port.
func (s *Server) Addr() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(s.port)) }

// URL is the server's address as a redis:// URL.
func (s *Server) URL() string { return "redis://" + s.Addr() + "/0" }

// Stop stops the server and waits for it to exit. Stopping a stopped server does nothing.
func (s *Server) Stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil {
		return
	}
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.done:
	case <-time.After(10 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.done
	}
	s.cmd = nil
}

// Restart starts a stopped server again on the same port, empty: nothing was saved.
func (s *Server) Restart() {
	s.t.Helper()
	if err := s.start(); err != nil {
		s.t.Fatalf("redisserver: restarting: %v", err)
	}
}

func (s *Server) start() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd != nil {
		return errors.New("already running")
	}
	logFile := filepath.Join(s.dir, "redis.log")
	cmd := exec.Command(s.path,
		"--port", strconv.Itoa(s.port), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no", "--dir", s.dir, "--logfile", logFile)
	cmd.SysProcAttr = procAttr()
	if err := cmd.Start(); err != nil {
		return err
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if err := ping(s.Addr()); err == nil {
			s.cmd, s.done = cmd, done
			return nil
		}
		select {
		case <-done:
			return fmt.Errorf("redis-server exited at start on port %d: %s", s.port, tail(logFile))
		case <-time.After(10 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			<-done
			return fmt.Errorf("redis-server did not answer on port %d within 10s: %s", s.port, tail(logFile))
		}
	}
}

// ping sends PING and expects PONG.
func ping(addr string) error {
	conn, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return err
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(time.Second))
	if _, err := conn.Write([]byte("*1\r\n$4\r\nPING\r\n")); err != nil {
		return err
	}
	line, err := bufio.NewReader(conn).ReadString('\n')
	if err != nil {
		return err
	}
	if strings.TrimSpace(line) != "+PONG" {
		return fmt.Errorf("PING answered %q", line)
	}
	return nil
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// tail is the end of the server's log, for a failure message.
func tail(path string) string {
	b, _ := os.ReadFile(path)
	s := strings.TrimSpace(string(b))
	if len(s) > 600 {
		s = s[len(s)-600:]
	}
	return s
}
