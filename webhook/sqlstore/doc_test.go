package sqlstore

import (
	"errors"
	"os/exec"
	"strings"
	"testing"

	// The tests use both engines; a program imports only the driver it uses (see doc.go).
	_ "github.com/jackc/pgx/v5/stdlib"
	_ "modernc.org/sqlite"
)

// TestLinksNoDriver: the package itself imports no SQL driver, so a program that uses one
// engine never compiles the other's driver.
func TestLinksNoDriver(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to list dependencies with")
	}
	out, err := exec.Command(goTool, "list", "-deps", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, dep := range strings.Fields(string(out)) {
		if strings.HasPrefix(dep, "github.com/jackc/") || strings.HasPrefix(dep, "modernc.org/") {
			t.Errorf("package sqlstore depends on %s", dep)
		}
	}
}

// TestMissingDriverNamesItsImport: when the program has not registered the driver a DSN
// needs, the error matches ErrNoDriver (not ErrDSN) and names the package to import.
func TestMissingDriverNamesItsImport(t *testing.T) {
	for _, tc := range []struct {
		dsn, want string
	}{
		{"sqlite:/tmp/x.db", `import _ "modernc.org/sqlite"`},
		{"postgres://u@db.example/x", `import _ "github.com/jackc/pgx/v5/stdlib"`},
	} {
		driver, _, d, err := parseDSN(tc.dsn)
		if err != nil {
			t.Fatalf("parseDSN(%q): %v", tc.dsn, err)
		}
		err = needDriver(driver, d, []string{"mysql"})
		if !errors.Is(err, ErrNoDriver) || errors.Is(err, ErrDSN) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s without its driver: %v; want ErrNoDriver saying %s", tc.dsn, err, tc.want)
		}
		if err := needDriver(driver, d, []string{"mysql", driver}); err != nil {
			t.Errorf("%s with its driver registered: %v", tc.dsn, err)
		}
	}
}
