package webhook_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestNoDatabaseDrivers: package webhook builds without the SQL drivers, which only
// webhook/sqlstore imports, so that programs using webhook with their own Store never
// compile them.
func TestNoDatabaseDrivers(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to list dependencies with")
	}
	out, err := exec.Command(goTool, "list", "-deps", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, dep := range strings.Fields(string(out)) {
		if strings.Contains(dep, "jackc/pgx") || strings.HasPrefix(dep, "modernc.org/") || dep == "database/sql" {
			t.Errorf("package webhook depends on %s", dep)
		}
	}
}
