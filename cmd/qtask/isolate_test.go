package main

import (
	"errors"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/qtask/qtask/internal/testenv"
)

// isolatedEnv marks a test binary re-executed inside private namespaces.
const isolatedEnv = "QTASK_TEST_ISOLATED"

// isolated runs the calling test inside a private pid and mount namespace
// (`unshare --pid --fork --mount-proc`): a test that plants records naming
// foreign pids, signals process groups or mounts file systems can then never
// reach the machine's other processes or mounts, even when qtask has a bug.
//
// It returns true in the re-executed copy, which should go on with the test.
// In the outer copy it runs that copy, fails the test with its output if it
// failed, and returns false: the caller returns at once.
//
//	if !isolated(t) {
//		return
//	}
//
// A machine where namespaces cannot be made (not root, no unshare) skips
// the test with the reason, or fails it under CI (testenv.Unavailable).
func isolated(t *testing.T) bool {
	t.Helper()
	if os.Getenv(isolatedEnv) == "1" {
		return true
	}
	unshare, err := exec.LookPath("unshare")
	if err == nil && os.Geteuid() != 0 {
		err = errNotRoot
	}
	if err != nil {
		testenv.Unavailable(t, "needs a private pid namespace (root and unshare): %v", err)
	}
	cmd := exec.Command(unshare, "--pid", "--fork", "--mount-proc", "--",
		os.Args[0], "-test.run", "^"+testPattern(t.Name())+"$", "-test.v", "-test.count=1")
	cmd.Env = append(os.Environ(), isolatedEnv+"=1", testBinEnv+"="+qtaskBin)
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: "+t.Name()) {
		t.Fatalf("in a private pid namespace: %v\n%s", err, out)
	}
	return false
}

var errNotRoot = errors.New("not running as root")

// testPattern turns a test name (with subtests) into a -test.run pattern
// that matches exactly it.
func testPattern(name string) string {
	parts := strings.Split(name, "/")
	for i, p := range parts {
		parts[i] = regexp.QuoteMeta(p)
	}
	return strings.Join(parts, "$/^")
}

func TestIsolatedRunsInPrivatePIDNamespace(t *testing.T) {
	t.Parallel()
	if !isolated(t) {
		return
	}
	// In a fresh pid namespace the test binary itself is pid 1.
	if os.Getpid() != 1 {
		t.Fatalf("pid %d, want 1 inside the private namespace", os.Getpid())
	}
}
