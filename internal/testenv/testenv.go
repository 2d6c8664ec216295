// Package testenv is what qtask's tests in every package share about the
// machine they run on: which programs and privileges a test may assume.
//
// The rule: on a developer's machine a test whose prerequisite is missing
// (zsh, fish, root) is skipped and says why, so `go test ./...` passes on a
// fresh checkout; under CI=true (.ci/run installs everything) it fails, so
// CI never goes green by skipping.
package testenv

import (
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"testing"
)

// Unavailable ends the test because a prerequisite is missing: skipped with
// the reason outside CI, failed under CI=true.
func Unavailable(t testing.TB, format string, args ...any) {
	t.Helper()
	reason := fmt.Sprintf(format, args...)
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s (CI=true: .ci/run must provide it)", reason)
	}
	t.Skip(reason)
}

// NeedProgram returns the path of program, or ends the test by the rule
// above when it is not on PATH.
func NeedProgram(t testing.TB, program string) string {
	t.Helper()
	path, err := exec.LookPath(program)
	if err != nil {
		Unavailable(t, "needs %s, which is not installed", program)
	}
	return path
}

// HoldFlock takes an exclusive flock on path (created if needed) through a
// file of its own, as another process would, until release is called or
// the test ends: for tests of what waits on a lock.
func HoldFlock(t testing.TB, path string) (release func()) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return func() { f.Close() }
}

// SkipShort skips the test under -short, the inner loop (`go test -short
// ./...`, which must stay within about 30 s on two CPUs), saying why: it
// runs a real agent, builds with `go build`, or waits on real time for
// more than a second. Never under CI=true: CI runs everything.
func SkipShort(t testing.TB, why string) {
	t.Helper()
	if testing.Short() && os.Getenv("CI") != "true" {
		t.Skip("-short: " + why)
	}
}
