package testenv

import (
	"bytes"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"
)

// OtherUser makes the local user name (useradd -M; one left by an earlier
// run is reused) for a test that plays another user, and returns its uid
// and gid. The user is removed when the test ends. Needs root, so only
// root's tests can play another user; each test names its own user, so
// that removing it cannot pull the user from under a test running beside.
func OtherUser(t testing.TB, name string) (uid, gid int) {
	t.Helper()
	if os.Geteuid() != 0 {
		Unavailable(t, "playing another local user needs root")
	}
	NeedProgram(t, "useradd")
	NeedProgram(t, "runuser")
	if _, err := user.Lookup(name); err != nil {
		if out, err := exec.Command("useradd", "-M", "-s", "/usr/sbin/nologin", name).CombinedOutput(); err != nil {
			t.Fatalf("useradd %s: %v: %s", name, err, out)
		}
	}
	t.Cleanup(func() { exec.Command("userdel", name).Run() })
	u, err := user.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	uid, _ = strconv.Atoi(u.Uid)
	gid, _ = strconv.Atoi(u.Gid)
	return uid, gid
}

// ForeignListener runs, as the local user name (runuser), a listener on
// the unix socket path that accepts every connection, never answers and
// keeps what it receives (the sockspy command). The directory of path must
// let that user make the socket. stop ends it and returns every byte it
// received; it is also ended when the test ends.
func ForeignListener(t testing.TB, name, path string) (stop func() []byte) {
	t.Helper()
	// Built where the other user can run it: a test's temp dirs are
	// private to root.
	dir, err := os.MkdirTemp("", "sockspy")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	bin := filepath.Join(dir, "sockspy")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/qtask/qtask/internal/testenv/sockspy").CombinedOutput(); err != nil {
		t.Fatalf("building sockspy: %v: %s", err, out)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	var received, errOut bytes.Buffer
	cmd := exec.Command("runuser", "-u", name, "--", bin, path)
	cmd.Stdout, cmd.Stderr = &received, &errOut
	// runuser forks the listener: both are killed as one group.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	stop = sync.OnceValue(func() []byte {
		select {
		case <-exited: // its group may be gone, its number another's
		default:
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-exited
		}
		return received.Bytes()
	})
	t.Cleanup(func() { stop() })
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if _, err := os.Stat(path); err == nil {
			return stop
		}
		select {
		case <-exited:
			t.Fatalf("sockspy as %s on %s: %s", name, path, &errOut)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("sockspy as %s made no socket %s in 10 s", name, path)
		}
	}
}

// Chown gives path (not what it links to) to uid, for a test of what qtask
// does with a file another user owns. Changing a file's owner takes root:
// without it the test ends as Unavailable says (skipped; failed under
// CI=true).
func Chown(t testing.TB, path string, uid int) {
	t.Helper()
	if os.Geteuid() != 0 {
		Unavailable(t, "changing a file's owner needs root")
	}
	if err := os.Lchown(path, uid, -1); err != nil {
		t.Fatal(err)
	}
}
