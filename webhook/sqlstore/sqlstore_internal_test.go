package sqlstore

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"sync"
	"testing"
	"time"
)

// The race connect's retry is for (replicas switching one new SQLite file to WAL at once)
// cannot be provoked on demand, so these tests give connect a database whose driver says
// SQLITE_BUSY, as modernc's does, for as long as they choose.

// codedError is an error carrying an SQLite result code, as modernc.org/sqlite's do.
type codedError int

func (e codedError) Error() string { return fmt.Sprintf("sqlite: result code %d", int(e)) }
func (e codedError) Code() int     { return int(e) }

// busyConnector refuses connections with its code until busyUntil, then opens them.
type busyConnector struct {
	mu        sync.Mutex
	code      int
	busyUntil time.Time
	attempts  int
}

func (c *busyConnector) Connect(context.Context) (driver.Conn, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.attempts++
	if time.Now().Before(c.busyUntil) {
		return nil, codedError(c.code)
	}
	return idleConn{}, nil
}

func (c *busyConnector) Driver() driver.Driver { return nil }

func (c *busyConnector) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.attempts
}

// idleConn is a connection that is never used beyond the ping.
type idleConn struct{}

func (idleConn) Prepare(string) (driver.Stmt, error) { return nil, errors.New("not used") }
func (idleConn) Close() error                        { return nil }
func (idleConn) Begin() (driver.Tx, error)           { return nil, errors.New("not used") }

func busyDB(t *testing.T, code int, busyFor time.Duration) (*sql.DB, *busyConnector) {
	c := &busyConnector{code: code, busyUntil: time.Now().Add(busyFor)}
	db := sql.OpenDB(c)
	t.Cleanup(func() { db.Close() })
	return db, c
}

// TestBusySQLiteFileIsWaitedOut: a SQLite file busy while the store connects (plain
// SQLITE_BUSY, or an extended code of it) is retried until it answers, with a growing wait
// rather than a busy loop.
func TestBusySQLiteFileIsWaitedOut(t *testing.T) {
	for _, code := range []int{5, 5 | 1<<8} { // SQLITE_BUSY, SQLITE_BUSY_RECOVERY
		db, c := busyDB(t, code, 300*time.Millisecond)
		start := time.Now()
		if err := connect(t.Context(), db, SQLite); err != nil {
			t.Fatalf("code %d: connect: %v", code, err)
		}
		if d := time.Since(start); d < 300*time.Millisecond || d > 3*time.Second {
			t.Errorf("code %d: connected after %v, for a file busy 300ms", code, d)
		}
		// 5, 10, 20, 40, 80, 160 ms: seven attempts; fewer when a loaded machine stalls a
		// wait, never many more (a busy loop makes hundreds).
		if n := c.count(); n < 2 || n > 15 {
			t.Errorf("code %d: %d attempts in 300ms, want a growing wait between them", code, n)
		}
	}
}

// TestBusyWaitEndsWithTheContext: a file that stays busy is given up on when the caller's
// context ends, with the busy error.
func TestBusyWaitEndsWithTheContext(t *testing.T) {
	db, _ := busyDB(t, 5, time.Hour)
	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	err := connect(ctx, db, SQLite)
	var coded codedError
	if !errors.As(err, &coded) {
		t.Errorf("connect to a busy file: %v, want its busy error", err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("connect gave up %v after its context ended", d)
	}
}

// TestOnlyBusyIsRetried: any other error, and any error of PostgreSQL, is final at once.
func TestOnlyBusyIsRetried(t *testing.T) {
	for _, tc := range []struct {
		code int
		d    Dialect
	}{{14, SQLite}, {6, SQLite}, {5, Postgres}} { // CANTOPEN, LOCKED; a code from another engine
		db, c := busyDB(t, tc.code, time.Hour)
		if err := connect(t.Context(), db, tc.d); err == nil {
			t.Fatalf("code %d on %v: connected", tc.code, tc.d)
		}
		if n := c.count(); n != 1 {
			t.Errorf("code %d on %v: %d attempts, want 1", tc.code, tc.d, n)
		}
	}
}

// A database that fails in the middle of a result (a connection reset, a server killed
// between two rows) cannot be provoked on demand from a real one, so these tests read from
// a driver whose every result gives one row, then fails.

var errMidResult = errors.New("connection reset in the middle of the result")

// breakingConn answers every query with one row, then errMidResult.
type breakingConn struct{ idleConn }

func (breakingConn) QueryContext(context.Context, string, []driver.NamedValue) (driver.Rows, error) {
	return &breakingRows{}, nil
}

type breakingRows struct{ read int }

func (*breakingRows) Columns() []string { return []string{"v"} }
func (*breakingRows) Close() error      { return nil }

func (r *breakingRows) Next(dest []driver.Value) error {
	r.read++
	switch r.read {
	case 1:
		dest[0] = int64(7) // read as a transaction id or, converted, as a fact key
		return nil
	case 2:
		return errMidResult
	}
	return io.EOF
}

type breakingConnector struct{}

func (breakingConnector) Connect(context.Context) (driver.Conn, error) { return breakingConn{}, nil }
func (breakingConnector) Driver() driver.Driver                        { return nil }

// TestReadBrokenMidResultIsAnError: a read that fails after some rows is an error, never
// the rows that came before it. A short set of facts handed over would hand the rest over
// again; a short list of unfinished transactions would leave the others unreconciled.
func TestReadBrokenMidResultIsAnError(t *testing.T) {
	db := sql.OpenDB(breakingConnector{})
	t.Cleanup(func() { db.Close() })
	s := &Store{db: db, d: SQLite}
	if got, err := s.Handed(t.Context(), 1); !errors.Is(err, errMidResult) {
		t.Errorf("Handed = %v, %v; want the read's error", got, err)
	}
	if got, err := s.Unfinished(t.Context()); !errors.Is(err, errMidResult) {
		t.Errorf("Unfinished = %v, %v; want the read's error", got, err)
	}
}
