package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

func TestUsageErrors(t *testing.T) {
	tests := []struct {
		args []string
		code int
		out  string // in stdout or stderr
	}{
		{nil, exitUsage, "usage: escrow <command>"},
		{[]string{"frobnicate"}, exitUsage, `unknown command "frobnicate"`},
		{[]string{"help"}, 0, "emulator"},
		{[]string{"emulator", "--bogus"}, exitUsage, "flag provided but not defined"},
		{[]string{"emulator", "extra"}, exitUsage, `unexpected argument "extra"`},
		{[]string{"emulator", "-h"}, 0, "--cert-out"},
		{[]string{"emulator", "--addr", "256.0.0.1:1"}, 1, "escrow emulator:"},
	}
	for _, tc := range tests {
		var stdout, stderr bytes.Buffer
		code := run(context.Background(), tc.args, &stdout, &stderr)
		if code != tc.code || !strings.Contains(stdout.String()+stderr.String(), tc.out) {
			t.Errorf("%v: exit %d, want %d; output:\n%s%s", tc.args, code, tc.code, stdout.String(), stderr.String())
		}
	}
}
