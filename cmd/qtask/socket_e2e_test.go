package main

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/qtask/qtask/internal/testenv"
)

// outsideTmux is the environment of a caller outside tmux with no socket
// named: qtask picks `-L qtask` under TMUX_TMPDIR=tmpdir.
func outsideTmux(tmpdir string, more ...string) []string {
	return append([]string{"QTASK_TMUX_SOCKET=", "TMUX=", "TMUX_PANE=", "TMUX_TMPDIR=" + tmpdir}, more...)
}

// Another local user made the tmux socket directory before us (mode 0777)
// and listens on `qtask` in it. qtask, outside tmux with no socket named,
// must send that listener nothing (not the caller's environment with its
// secrets, not the command) and say in one line what is wrong and how to
// fix it, as `tmux -L qtask` refuses the directory. It used to send
// everything and then hang, waiting for an answer that never came.
func TestPlantedTmuxSocketGetsNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the other user's listener with go build")
	}
	h := newHarness(t)
	uid, gid := testenv.OtherUser(t, "qtasksock")
	// A TMUX_TMPDIR inside the test's tree that anyone may write, as /tmp.
	tmpdir := filepath.Join(h.root, "tmp")
	if err := os.Chmod(h.root, 0o711); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(tmpdir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(tmpdir, 0o1777); err != nil {
		t.Fatal(err)
	}
	planted := filepath.Join(tmpdir, fmt.Sprintf("tmux-%d", os.Getuid()))
	if err := os.Mkdir(planted, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(planted, uid, gid); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(planted, 0o777); err != nil {
		t.Fatal(err)
	}
	stop := testenv.ForeignListener(t, "qtasksock", filepath.Join(planted, "qtask"))
	const secret = "s3cr3t-t0ken-of-the-caller"
	t.Cleanup(func() { // also after a hang has failed the test
		if got := stop(); len(got) != 0 {
			t.Errorf("the other user's listener received %d bytes (the secret among them: %v)", len(got), bytes.Contains(got, []byte(secret)))
		}
	})
	r := h.qtaskWithin(30*time.Second, h.root, outsideTmux(tmpdir, "MY_SECRET_TOKEN="+secret), "", "run", "--bg", "--", "true")
	if r.code != exitError || strings.Count(r.stderr, "\n") != 1 {
		t.Fatalf("qtask run: exit %d, stderr %q; want exit 1 and one line", r.code, r.stderr)
	}
	for _, want := range []string{planted, "qtasksock", "TMUX_TMPDIR"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("the error does not name %q (the directory, its owner and the fix): %q", want, r.stderr)
		}
	}
}

// A socket of ours whose server never answers (stopped, hung, or not
// tmux at all) is an error within seconds, never a hang: whether it takes
// the connection and says nothing, or never takes it (a full backlog).
func TestUnansweringTmuxServerIsAnError(t *testing.T) {
	if testing.Short() {
		t.Skip("waits out the connection deadline (seconds)")
	}
	for _, tc := range []struct {
		name   string
		listen func(t *testing.T, path string)
	}{
		{"takes the connection, never answers", listenSilently},
		{"never takes the connection", listenFull},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			tmpdir := filepath.Join(h.root, "tmp")
			dir := filepath.Join(tmpdir, fmt.Sprintf("tmux-%d", os.Getuid()))
			if err := os.MkdirAll(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			sock := filepath.Join(dir, "qtask")
			tc.listen(t, sock)
			start := time.Now()
			r := h.qtaskWithin(30*time.Second, h.root, outsideTmux(tmpdir), "", "run", "--bg", "--", "true")
			took := time.Since(start)
			if r.code != exitError || strings.Count(r.stderr, "\n") != 1 || !strings.Contains(r.stderr, sock) {
				t.Errorf("qtask run: exit %d, stderr %q; want exit 1 and one line naming %s", r.code, r.stderr, sock)
			}
			if took > 15*time.Second {
				t.Errorf("qtask run took %s to give up on a silent server; want a few seconds", took.Round(time.Millisecond))
			}
		})
	}
}

// listenSilently takes every connection to path and reads it, answering
// nothing.
func listenSilently(t *testing.T, path string) {
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			t.Cleanup(func() { c.Close() })
			go func() {
				buf := make([]byte, 4096)
				for {
					if _, err := c.Read(buf); err != nil {
						return
					}
				}
			}()
		}
	}()
}

// listenFull listens on path with a backlog already full, and never takes
// a connection: a blocking connect to it waits.
func listenFull(t *testing.T, path string) {
	fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(fd) })
	// A backlog of 0 holds one connection waiting to be taken.
	if err := unix.Bind(fd, &unix.SockaddrUnix{Name: path}); err != nil {
		t.Fatal(err)
	}
	if err := unix.Listen(fd, 0); err != nil {
		t.Fatal(err)
	}
	filler, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC|unix.SOCK_NONBLOCK, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(filler) })
	if err := unix.Connect(filler, &unix.SockaddrUnix{Name: path}); err != nil {
		t.Fatal(err)
	}
	probe, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC|unix.SOCK_NONBLOCK, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(probe)
	if err := unix.Connect(probe, &unix.SockaddrUnix{Name: path}); err != unix.EAGAIN {
		t.Fatalf("a second connection to a full backlog: %v, want EAGAIN (the test no longer fills it)", err)
	}
}
