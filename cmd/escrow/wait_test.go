package main

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestEmulatorWaitEndsTheRace: 'escrow emulator wait FILE', run at once after an emulator
// is started in the background, returns only once that emulator's file is written and it
// answers; a stale file from an earlier emulator is removed first, never loaded.
func TestEmulatorWaitEndsTheRace(t *testing.T) {
	envFile := filepath.Join(t.TempDir(), "escrow.env")
	stale := "export ESCROW_BASE_URL='https://127.0.0.1:1/2017-09-01/'\nexport ESCROW_CA_CERT='/nonexistent.pem'\n"
	if err := os.WriteFile(envFile, []byte(stale), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"emulator", "--addr", "127.0.0.1:0", "--env", envFile}, io.Discard, io.Discard)
	}()
	defer func() {
		stop()
		if code := <-done; code != 0 {
			t.Errorf("emulator: exit %d", code)
		}
	}()
	code, out, errOut := cli(t, "emulator", "wait", envFile, "--timeout", "20s")
	if code != 0 || !strings.HasPrefix(out, "https://127.0.0.1:") || strings.Contains(out, "127.0.0.1:1/") {
		t.Fatalf("wait: exit %d: %s%s", code, out, errOut)
	}
	base, cert, ok := readEnvFile(envFile)
	if !ok || base != strings.TrimSpace(out) || cert == "/nonexistent.pem" {
		t.Errorf("the file holds %q, %q; wait printed %q", base, cert, out)
	}

	// No emulator: wait gives up, and says what to check.
	start := time.Now()
	code, _, errOut = cli(t, "emulator", "wait", filepath.Join(t.TempDir(), "none.env"), "--timeout", "200ms")
	if code != exitAPI || !strings.Contains(errOut, "is 'escrow emulator --env") || time.Since(start) > 10*time.Second {
		t.Errorf("wait without an emulator: exit %d: %s", code, errOut)
	}
}

// TestCreateQuietPrintsTheID: --quiet prints the id alone, for ID=$(…) in scripts.
func TestCreateQuietPrintsTheID(t *testing.T) {
	e := newEmulator(t)
	code, out, errOut := e.api(t, 2, "transactions", "create", "--buyer", "buyer@example.com", "--seller", "seller@example.com",
		"--amount", "100", "--title", "Lamp", "--quiet")
	if code != 0 || out != "200001\n" {
		t.Errorf("exit %d: %q %s", code, out, errOut)
	}
	code, out, _ = e.api(t, 3, "transactions", "pay", "wire", "200001", "--as", "buyer@example.com")
	if code != 0 || !strings.Contains(out, "Amount to wire  103.25") {
		t.Errorf("pay wire: exit %d\n%s", code, out)
	}
}
