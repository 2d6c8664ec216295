package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/qtask/qtask/tasks"
)

// awaitBlockedOnLock returns once the qtask process fg waits for the state
// directory's lock: /proc/locks lists a blocked flock waiter as
// "N: -> FLOCK ADVISORY WRITE PID MAJ:MIN:INODE 0 EOF".
func awaitBlockedOnLock(t *testing.T, state string, fg *foreground) {
	t.Helper()
	pid := fg.cmd.Process.Pid
	var st syscall.Stat_t
	if err := syscall.Stat(filepath.Join(state, "lock"), &st); err != nil {
		t.Fatal(err)
	}
	inode := ":" + strconv.FormatUint(st.Ino, 10)
	eventually(t, "qtask (pid "+strconv.Itoa(pid)+") to wait for the state lock", func() bool {
		select {
		case <-fg.done:
			t.Fatalf("%s ended (exit %d) without waiting for the lock; stderr: %s", strings.Join(fg.cmd.Args[1:], " "), fg.code, fg.stderr.String())
		default:
		}
		locks, err := os.ReadFile("/proc/locks")
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(string(locks), "\n") {
			_, waiter, ok := strings.Cut(line, "-> ")
			f := strings.Fields(waiter)
			if ok && len(f) > 4 && f[3] == strconv.Itoa(pid) && strings.HasSuffix(f[4], inode) {
				return true
			}
		}
		return false
	})
}

// TestBlockedOnTheLockHonoursSignalsAndTimeout holds the state lock, as a
// stuck qtask would, while other commands need it: Ctrl+C, SIGTERM and
// --timeout must still end them (they once waited in flock forever).
func TestBlockedOnTheLockHonoursSignalsAndTimeout(t *testing.T) {
	t.Parallel()
	if !isolated(t) {
		return
	}
	h := newHarness(t)
	task := h.start("sleep 300")
	// A lost task (its wrapper killed): the next reader settles it, which
	// takes the lock.
	lost := h.start("sleep 300")
	eventually(t, "the wrapper to record the command's pid", func() bool { return h.status(lost.ID).PID != 0 })
	// The wrapper is the pane's first process.
	wrapper, err := h.tmux("display-message", "-p", "-t", lost.PaneID, "#{pane_pid}")
	pid, _ := strconv.Atoi(wrapper)
	if err != nil || pid <= 1 {
		t.Fatalf("wrapper of task %s: %q %v", lost.ID, wrapper, err)
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	// Until it is dead, a reader still takes the task for alive and has no
	// reason to settle it.
	awaitDead(t, pid)
	release := holdStoreLock(t, h.state)

	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		stop := h.spawn(nil, "stop", task.ID)
		awaitBlockedOnLock(t, h.state, stop)
		stop.cmd.Process.Signal(sig)
		if code := stop.wait(t); code != 128+int(sig) {
			t.Errorf("qtask stop blocked on the lock, sent %v: exit %d, want %d\nstderr: %s", sig, code, 128+int(sig), stop.stderr.String())
		}
	}

	began := time.Now()
	wait := h.spawn(nil, "wait", "--timeout", "1s", lost.ID)
	awaitBlockedOnLock(t, h.state, wait)
	if code := wait.wait(t); code != exitTimeout {
		t.Errorf("qtask wait --timeout 1s blocked on the lock: exit %d after %v, want %d\nstderr: %s",
			code, time.Since(began).Round(time.Millisecond), exitTimeout, wait.stderr.String())
	}

	release()
	if st := h.status(task.ID); !st.Running() {
		t.Errorf("a stop interrupted before it got the lock changed the task: %s", st.StatusText())
	}
	if end := h.wait(lost.ID); end.Status != tasks.StatusFailed || !strings.HasPrefix(end.Error, "lost: ") {
		t.Errorf("the lost task, once the lock was free: %s", end.StatusText())
	}
	h.mustQtask("stop", task.ID)
}

// TestConfigFIFOIsRefused: a FIFO as QTASK_CONFIG once hung every command
// in open(2), deaf to Ctrl+C.
func TestConfigFIFOIsRefused(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	fifo := filepath.Join(h.root, "config.fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	run := h.spawn([]string{"QTASK_CONFIG=" + fifo}, "run", "--bg", "--", "true")
	if code := run.wait(t); code != exitError || !strings.Contains(run.stderr.String(), fifo+" is a named pipe (FIFO), not a regular file") {
		t.Errorf("run with a FIFO as config: exit %d, stderr %q; want exit 1 naming the FIFO", code, run.stderr.String())
	}
	if r := h.qtaskIn(h.root, []string{"QTASK_CONFIG=" + os.DevNull}, "run", "--bg", "--", "true"); r.code != 0 {
		t.Errorf("run with QTASK_CONFIG=/dev/null: exit %d, stderr %q; want the defaults", r.code, r.stderr)
	}
}

// TestWrapperLeftAZombieIsLost: a wrapper killed with its tmux server's
// last window is reparented to init unreaped, and where init does not
// reap (a container's pid 1, here the test binary) it stays a zombie. A
// zombie is dead: the task must settle as lost, not stay running forever.
func TestWrapperLeftAZombieIsLost(t *testing.T) {
	t.Parallel()
	if !isolated(t) {
		return
	}
	h := newHarness(t)
	task := h.start("sleep 300")
	eventually(t, "the wrapper to record the command's pid", func() bool { return h.status(task.ID).PID != 0 })
	wrapper, err := h.tmux("display-message", "-p", "-t", task.PaneID, "#{pane_pid}")
	pid, _ := strconv.Atoi(wrapper)
	if err != nil || pid <= 1 {
		t.Fatalf("wrapper of task %s: %q %v", task.ID, wrapper, err)
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	r := h.qtask("wait", "--timeout", "20s", task.ID)
	if st := h.status(task.ID); r.code == exitTimeout || st.Status != tasks.StatusFailed || !strings.HasPrefix(st.Error, "lost: ") {
		stat, _ := os.ReadFile("/proc/" + wrapper + "/stat")
		t.Errorf("task whose wrapper was killed: wait exit %d, %s; want failed, lost (wrapper: %q)", r.code, st.StatusText(), stat)
	}
}
