package sqlstore_test

import (
	"fmt"
	"os"
	"testing"

	"go.uber.org/goleak"

	"github.com/escrowkit/escrow-go/internal/pgtest"
)

// pg is the package's PostgreSQL server, nil when none could start (pgErr says why).
var (
	pg    *pgtest.Server
	pgErr error
)

// TestMain starts one PostgreSQL server for the package's tests (each takes a database of
// its own), stops it at the end, and fails the package when a goroutine is left behind.
func TestMain(m *testing.M) {
	pg, pgErr = pgtest.Start()
	code := m.Run()
	if pg != nil {
		if err := pg.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "stopping PostgreSQL:", err)
			code = 1
		}
	}
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	os.Exit(code)
}
