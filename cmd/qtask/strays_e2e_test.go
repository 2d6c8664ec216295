package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/qtask/qtask/tasks"
)

// Commands that leave the task's process group in every way a shell offers:
// sleep 906 stays in it; 907 moves to a session of its own (setsid), 909
// too and scrubs its environment (no QTASK_TASK_ID), 910 too and ignores
// SIGTERM (an ignored signal stays ignored across exec); 908 is a job in a
// group of its own (set -m).
const (
	straysStart = `sleep 906 & setsid sleep 907 & setsid env -i sleep 909 & ` +
		`setsid sh -c "trap '' TERM; exec sleep 910" & set -m; sleep 908 & `
	strayCount = 5
)

var straySeconds = []string{"906", "907", "908", "909", "910"}

// straySleeps lists the live (not zombie) `sleep 906` … `sleep 910`.
func straySleeps() []string {
	var found []string
	cmdlines, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range cmdlines {
		argv, err := os.ReadFile(p)
		n, ok := bytes.CutPrefix(argv, []byte("sleep\x00"))
		if err != nil || !ok || !slices.Contains(straySeconds, strings.TrimRight(string(n), "\x00")) {
			continue
		}
		pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(p)))
		if f := procStat(pid); f != nil && f[0] != "Z" {
			found = append(found, fmt.Sprintf("%s (pid %d)", strings.ReplaceAll(strings.TrimRight(string(argv), "\x00"), "\x00", " "), pid))
		}
	}
	return found
}

// TestStopEndsProcessesThatLeftTheGroup: a stop ends every process the
// task started, whatever group or session it moved to and whatever it did
// to its environment or to SIGTERM.
func TestStopEndsProcessesThatLeftTheGroup(t *testing.T) {
	t.Parallel()
	if !isolated(t) {
		return
	}
	h := newHarness(t)
	task := h.start(straysStart + `wait`)
	eventually(t, "the task's five sleeps to run", func() bool { return len(straySleeps()) == strayCount })
	if out := h.mustQtask("stop", "--grace", "300ms", task.ID); !strings.Contains(out, "cancelled") {
		t.Fatalf("stop output %q does not name the cancelled status", out)
	}
	if st := h.status(task.ID); st.Status != tasks.StatusCancelled {
		t.Fatalf("after stop the task is %s %q, want cancelled", st.Status, st.Error)
	}
	// A SIGKILL sent as the stop returned may not have landed yet.
	eventually(t, "no process of the stopped task to be left", func() bool { return len(straySleeps()) == 0 })
}

// TestNaturalEndEndsProcessesThatLeftTheGroup: when the command exits, what
// it left outside its group is ended as what it left in its group is: the
// task completes, with its own exit code, and nothing runs on underneath.
func TestNaturalEndEndsProcessesThatLeftTheGroup(t *testing.T) {
	t.Parallel()
	if !isolated(t) {
		return
	}
	h := newHarness(t)
	h.writeConfig(`stop_grace = "300ms"`)
	gate := h.fifoGate()
	task := h.start(straysStart + `read x < ` + gate + `; exit 0`)
	eventually(t, "the task's five sleeps to run", func() bool { return len(straySleeps()) == strayCount })
	h.openFifoGate(gate)
	st := h.wait(task.ID)
	if st.Status != tasks.StatusCompleted || st.ExitCode == nil || *st.ExitCode != 0 {
		t.Fatalf("the task is %s (exit %v) %q, want completed with exit code 0", st.Status, deref(st.ExitCode), st.Error)
	}
	// The wrapper settles only once the leftovers are dead.
	if left := straySleeps(); len(left) > 0 {
		t.Fatalf("a completed task left processes running: %v", left)
	}
}

// TestLostTaskOrphansDieOutsideTheSession: a lost task's process that moved
// to a session of its own is found by the QTASK_TASK_ID it carries, as its
// set -m job is by its session.
func TestLostTaskOrphansDieOutsideTheSession(t *testing.T) {
	t.Parallel()
	if !isolated(t) {
		return
	}
	h := newHarness(t)
	task := h.start(`trap '' HUP; setsid sleep 907 & set -m; sleep 908 & wait`)
	eventually(t, "the task's sleeps to run", func() bool { return len(straySleeps()) == 2 })
	if err := syscall.Kill(wrapperPID(h, task.ID), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the task to be seen as lost", func() bool {
		st := h.status(task.ID)
		return st.Status == tasks.StatusFailed && strings.HasPrefix(st.Error, "lost: ")
	})
	eventually(t, "the lost task's sleeps to be killed", func() bool { return len(straySleeps()) == 0 })
}

// TestOrphansAreReapedWhileTheTaskRuns: an orphan of the task comes back to
// the wrapper (its subreaper), which reaps it when it dies rather than
// leaving a zombie for as long as the task runs.
func TestOrphansAreReapedWhileTheTaskRuns(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	gate := h.fifoGate()
	orphanGate := filepath.Join(h.root, "orphan-gate")
	if err := unix.Mkfifo(orphanGate, 0o600); err != nil {
		t.Fatal(err)
	}
	task := h.start(`(cat ` + orphanGate + ` >/dev/null &); read x < ` + gate)
	defer h.openFifoGate(gate)
	eventually(t, "task to have a pid", func() bool { return h.status(task.ID).PID != 0 })
	wrapper := wrapperPID(h, task.ID)
	orphan := 0
	eventually(t, "the orphaned cat to come back to the wrapper", func() bool {
		orphan = childNamed(wrapper, "cat")
		return orphan != 0
	})
	f, err := os.OpenFile(orphanGate, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.Close() // the cat reads end-of-file and exits
	eventually(t, "the wrapper to reap its dead orphan", func() bool { return procStat(orphan) == nil })
}

// childNamed is the pid of a child of parent whose command is name, 0 if
// none.
func childNamed(parent int, name string) int {
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, p := range stats {
		pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(p)))
		b, err := os.ReadFile(p)
		if err != nil || !bytes.Contains(b, []byte("("+name+")")) {
			continue
		}
		if f := procStat(pid); len(f) > 1 && f[1] == strconv.Itoa(parent) {
			return pid
		}
	}
	return 0
}
