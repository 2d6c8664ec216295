package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/qtask/qtask/internal/testenv"
	"github.com/qtask/qtask/tasks"
)

// gatedExit is a foreground command that prints "ready", waits for the
// file gate to appear and then exits with code 3.
func gatedExit(gate string) string {
	return "echo ready; while [ ! -e " + gate + " ]; do sleep 0.01; done; exit 3"
}

// startGated starts gatedExit in the foreground and returns it with its
// task once the command runs and its pid is on record.
func (h *harness) startGated(gate string) (*foreground, tasks.Task) {
	h.t.Helper()
	fg := h.runForeground(nil, "--", gatedExit(gate))
	var task tasks.Task
	eventually(h.t, "the foreground task to start", func() bool {
		if !strings.Contains(fg.stdout.String(), "ready\n") {
			return false
		}
		task = h.lastTask()
		return task.PID != 0
	})
	return fg, task
}

// openGateAndAwaitExit lets the command exit and returns once its process
// is gone (reaped by the wrapper): the command has then certainly exited.
func openGateAndAwaitExit(t *testing.T, gate string, pid int) {
	t.Helper()
	if err := os.WriteFile(gate, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the command to exit", func() bool {
		_, err := os.Stat("/proc/" + strconv.Itoa(pid))
		return os.IsNotExist(err)
	})
}

// checkPromoteLostTheRace asserts what a promote that came after the
// command's exit must say, and that the waiting `qtask run` passed on the
// exit code instead of claiming a promote.
func checkPromoteLostTheRace(t *testing.T, promote result, fg *foreground, id string) {
	t.Helper()
	if promote.code != 0 || !strings.Contains(promote.stdout, "Task "+id+" already finished, exit 3") {
		t.Errorf("promote after the command exited: exit %d\nstdout: %s\nstderr: %s\nwant exit 0 and \"already finished, exit 3\"",
			promote.code, promote.stdout, promote.stderr)
	}
	if strings.Contains(promote.stderr, "tmux") {
		t.Errorf("promote printed a tmux error: %s", promote.stderr)
	}
	if code := fg.wait(t); code != 3 {
		t.Errorf("qtask run exited %d for a command that exited 3 before the promote (125 = claimed promoted)\nstdout: %s\nstderr: %s",
			code, fg.stdout.String(), fg.stderr.String())
	}
}

// TestPromoteAfterTheCommandExited holds the task between the command's
// exit and its settle (the capture is stopped, so the wrapper waits for the
// output to be complete) and promotes it there: the exit wins.
func TestPromoteAfterTheCommandExited(t *testing.T) {
	t.Parallel()
	if !isolated(t) {
		return
	}
	h := newHarness(t)
	h.captureViaCat() // a capture process to stop
	gate := filepath.Join(h.root, "gate")
	fg, task := h.startGated(gate)
	capture := h.capturePIDs()
	if len(capture) != 1 {
		t.Fatalf("want one capture process for task %s, found %v", task.ID, capture)
	}
	if err := syscall.Kill(capture[0], syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	defer syscall.Kill(capture[0], syscall.SIGCONT)
	openGateAndAwaitExit(t, gate, task.PID)
	if st := h.status(task.ID); !st.Running() {
		t.Fatalf("the task settled while its capture was stopped (%s): the test would not test the race", st.StatusText())
	}
	promote := h.qtask("promote", task.ID)
	syscall.Kill(capture[0], syscall.SIGCONT)
	checkPromoteLostTheRace(t, promote, fg, task.ID)
	if end := h.wait(task.ID); end.Background || end.Status != tasks.StatusFailed || end.ExitCode == nil || *end.ExitCode != 3 {
		t.Errorf("task after the lost promote: %s, background %v", end.StatusText(), end.Background)
	}
}

// TestPromoteRacingTheExitNeverClaimsPromoted lets a promote race the
// wrapper and the capture for the store lock right after the command
// exited, 30 times: whoever wins, the exit must. (Before the wrapper
// recorded the exit first, a promote winning the lock released `qtask run`
// with 125 though the command had already exited; 6 of 60 times in a
// plain race on 790c37b.)
func TestPromoteRacingTheExitNeverClaimsPromoted(t *testing.T) {
	testenv.SkipShort(t, "30 rounds of promotes racing real command exits (4–8 s)")
	t.Parallel()
	h := newHarness(t)
	for i := range 30 {
		gate := filepath.Join(h.root, "gate"+strconv.Itoa(i))
		fg, task := h.startGated(gate)
		release := holdStoreLock(t, h.state)
		promote := make(chan result, 1)
		go func() { promote <- h.qtask("promote", task.ID) }()
		openGateAndAwaitExit(t, gate, task.PID)
		release()
		checkPromoteLostTheRace(t, <-promote, fg, task.ID)
		if t.Failed() {
			t.Fatalf("try %d of 30", i+1)
		}
	}
}

// holdStoreLock takes the state directory's lock, as a long transition
// would, until release is called (or the test ends).
func holdStoreLock(t *testing.T, state string) (release func()) {
	t.Helper()
	return testenv.HoldFlock(t, filepath.Join(state, "lock"))
}

// TestPromoteThenEndSaysNoTmuxError: a promote that marked the task
// background first, and found its window gone when it came to move it
// because the command ended meanwhile (and with the last window the tmux
// server), has still done what it said: no tmux error, exit 0. The tmux
// server is held stopped until the exit is on record, then killed.
func TestPromoteThenEndSaysNoTmuxError(t *testing.T) {
	t.Parallel()
	if !isolated(t) {
		return
	}
	h := newHarness(t)
	gate := filepath.Join(h.root, "gate")
	fg, task := h.startGated(gate)
	serverPID, err := h.tmux("display-message", "-p", "#{pid}")
	server, _ := strconv.Atoi(serverPID)
	if err != nil || server <= 1 {
		t.Fatalf("tmux server pid: %q %v", serverPID, err)
	}
	if err := syscall.Kill(server, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	defer syscall.Kill(server, syscall.SIGKILL)
	promote := h.spawn(nil, "promote", task.ID)
	record := filepath.Join(h.state, "tasks", task.ID+".json")
	eventually(t, "the promote to mark the task background", func() bool {
		data, _ := os.ReadFile(record)
		return strings.Contains(string(data), `"promoted_at"`)
	})
	// The waiting run is released by the mark alone; the command ends only
	// after that (a caller slow to look would otherwise find it ended).
	if code := fg.wait(t); code != exitPromoted {
		t.Errorf("qtask run exited %d, want %d: the promote came first", code, exitPromoted)
	}
	if err := os.WriteFile(gate, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the wrapper to record the command's exit", func() bool {
		data, _ := os.ReadFile(record)
		return strings.Contains(string(data), `"exited_at"`)
	})
	syscall.Kill(server, syscall.SIGKILL)
	if code := promote.wait(t); code != 0 || strings.Contains(promote.stderr.String(), "tmux") {
		t.Errorf("promote whose task ended before its window moved: exit %d\nstdout: %s\nstderr: %s", code, promote.stdout.String(), promote.stderr.String())
	}
}
