//go:build unix

package sqlstore_test

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// perm returns the permission bits of the file name, or the error of its Stat.
func perm(name string) (fs.FileMode, error) {
	fi, err := os.Stat(name)
	if err != nil {
		return 0, err
	}
	return fi.Mode().Perm(), nil
}

// TestSQLiteFilesAreTheOwnersAlone: a SQLite store that Open creates under the common
// umask (022), and the -wal and -shm files its writes make, are readable by their owner
// alone: a secret kept in the store (a setting such as the CLI's delivery secret) lands
// in the -wal first. A path with %HH escapes, which SQLite decodes (ending the path at
// %00), is created as SQLite names it; :memory: makes no file.
func TestSQLiteFilesAreTheOwnersAlone(t *testing.T) {
	t.Chdir(t.TempDir()) // where a :memory: file would appear
	defer syscall.Umask(syscall.Umask(0o022))
	const secret = "whsec-correct-horse-battery-staple"
	for path, file := range map[string]string{"hooks.db": "hooks.db", "hooks%2Dx.db": "hooks-x.db", "cut%00.db": "cut"} {
		s := open(t, "sqlite:"+path)
		if err := s.PutSetting(t.Context(), "webhook_secret", secret); err != nil {
			t.Fatal(err)
		}
		if wal, err := os.ReadFile(file + "-wal"); err != nil || !bytes.Contains(wal, []byte(secret)) {
			t.Errorf("%s-wal holds the secret: %v, %v; want it there (the case this test guards)", file, err, bytes.Contains(wal, []byte(secret)))
		}
		for _, name := range []string{file, file + "-wal", file + "-shm"} {
			if m, err := perm(name); err != nil || m != 0o600 {
				t.Errorf("sqlite:%s made %s: %v, %v; want it 0600", path, name, m, err)
			}
		}
	}
	if _, err := os.Stat("hooks%2Dx.db"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a file named as the DSN's escaped path: %v, want none", err)
	}
	open(t, "sqlite::memory:")
	if _, err := os.Stat(":memory:"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("sqlite::memory: made a file: %v", err)
	}
}

// TestSQLiteFileKeepsItsMode: Open leaves the mode of a SQLite file that exists as its
// owner chose it.
func TestSQLiteFileKeepsItsMode(t *testing.T) {
	path := filepath.Join(t.TempDir(), "hooks.db")
	if err := os.WriteFile(path, nil, 0o640); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, 0o640); err != nil {
		t.Fatal(err)
	}
	open(t, "sqlite:"+path)
	if m, err := perm(path); err != nil || m != 0o640 {
		t.Errorf("an existing file after Open: %v, %v; want 0640 as it was", m, err)
	}
}
