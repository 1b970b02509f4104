package sqlstore

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"io"
	"testing"
)

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
