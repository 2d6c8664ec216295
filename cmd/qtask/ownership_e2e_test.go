package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/qtask/qtask/tasks"
)

// plantRunning writes a record that says task id, started at startedAt,
// is running as pid, with wrapper pid wrapper (0: none yet) — what a
// corrupt, stale or planted record looks like. A wrapper is alive as far
// as start times go, so readers keep the task running and stop has to
// decide for itself whether the pid is the task's.
func (h *harness) plantRunning(id string, pid, wrapper int, startedAt time.Time) {
	h.t.Helper()
	rec := map[string]any{
		"id": id, "name": "", "kind": "shell", "command": "sleep 300", "cwd": h.root, "scope": "default",
		"status": "running", "exit_code": nil, "error": "", "pid": pid, "pane_id": "%99",
		"started_at": startedAt.UTC().Format(time.RFC3339Nano), "ended_at": nil,
		"output_path": filepath.Join(h.state, "output", id+".log"), "background": true,
	}
	if wrapper != 0 {
		rec["wrapper_pid"], rec["wrapper_start"] = wrapper, procStart(h.t, wrapper)
	}
	h.plantRecord(id, rec)
}

// plantRecord writes rec as task id's record, with an empty output file.
func (h *harness) plantRecord(id string, rec map[string]any) {
	h.t.Helper()
	data, err := json.Marshal(rec)
	if err != nil {
		h.t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(h.state, "output", id+".log"), nil, 0o600); err != nil {
		h.t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(h.state, "tasks", id+".json"), data, 0o600); err != nil {
		h.t.Fatal(err)
	}
}

// procStat returns the fields of /proc/PID/stat after the command name
// (state is field 0, start time field 19); nil once the process is gone.
func procStat(pid int) []string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return nil
	}
	s := string(b)
	return strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
}

func procStart(t *testing.T, pid int) uint64 {
	t.Helper()
	f := procStat(pid)
	if len(f) < 20 {
		t.Fatalf("no /proc stat for pid %d", pid)
	}
	start, err := strconv.ParseUint(f[19], 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return start
}

// bystander starts `sleep 300` (in a session of its own with setsid) that
// no qtask task owns, and returns a check that it never got a signal: it
// SIGKILLs the sleep and fails unless that SIGKILL is what ended it.
func bystander(t *testing.T, setsid bool) (pid int, survived func(what string)) {
	t.Helper()
	cmd := exec.Command("sleep", "300")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: setsid}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := false
	t.Cleanup(func() {
		if !done {
			cmd.Process.Kill()
			cmd.Wait()
		}
	})
	return cmd.Process.Pid, func(what string) {
		t.Helper()
		done = true
		cmd.Process.Kill()
		cmd.Wait()
		if ws := cmd.ProcessState.Sys().(syscall.WaitStatus); !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
			t.Errorf("%s signalled a process it does not own: sleep %d ended with %v", what, cmd.Process.Pid, cmd.ProcessState)
		}
	}
}

// TestStopSignalsOnlyWhatItOwns plants records naming pid 1 and an
// unrelated setsid group: stop and stop --all must settle them as lost and
// signal nothing (once, stop on pid 1 sent SIGTERM to -1: every process).
func TestStopSignalsOnlyWhatItOwns(t *testing.T) {
	t.Parallel()
	if !isolated(t) {
		return
	}
	h := newHarness(t)
	real := h.start("sleep 300")
	eventually(t, "task to have a pid", func() bool { return h.status(real.ID).PID != 0 })

	for i, all := range []bool{false, true} {
		what := "qtask stop"
		if all {
			what = "qtask stop --all"
		}
		_, plainSurvived := bystander(t, false)
		foreign, foreignSurvived := bystander(t, true)
		ids := []string{fmt.Sprintf("0000000%d", i), fmt.Sprintf("1000000%d", i)}
		h.plantRunning(ids[0], 1, 1, time.Now())
		h.plantRunning(ids[1], foreign, foreign, time.Now())

		var out string
		if all {
			out = h.mustQtask("stop", "--all", "--grace", "300ms")
		} else {
			for _, id := range ids {
				out += h.mustQtask("stop", "--grace", "300ms", id)
			}
		}
		plainSurvived(what + " of a record naming pid 1")
		foreignSurvived(what + " of a record naming an unrelated group")
		for _, id := range ids {
			st := h.status(id)
			if st.Status != tasks.StatusFailed || !strings.HasPrefix(st.Error, "lost: ") {
				t.Errorf("%s: planted task %s is %s %q, want failed: lost: …", what, id, st.Status, st.Error)
			}
			if !strings.Contains(out, "Task "+id+" already ended: failed: lost: ") {
				t.Errorf("%s: output does not say task %s was lost:\n%s", what, id, out)
			}
		}
	}
	if st := h.status(real.ID); st.Status != tasks.StatusCancelled {
		t.Errorf("stop --all left the real task %s, want cancelled", st.Status)
	}
}

// TestLostTaskOrphansDieWithScrubbedEnvironment: a task's process that
// dropped its environment (env -i) carries no QTASK_TASK_ID, and one that
// ignores SIGHUP outlives its pane; when the wrapper is lost, reconcile
// still finds it by its group and kills it.
func TestLostTaskOrphansDieWithScrubbedEnvironment(t *testing.T) {
	t.Parallel()
	if !isolated(t) {
		return
	}
	h := newHarness(t)
	task := h.start(`trap '' HUP; exec env -i sleep 300`)
	eventually(t, "sleep to run with a scrubbed environment", func() bool {
		pid := h.status(task.ID).PID
		env, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
		cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		return pid != 0 && err == nil && len(env) == 0 && strings.HasPrefix(string(cmdline), "sleep\x00")
	})
	pid := h.status(task.ID).PID
	syscall.Kill(wrapperPID(h, task.ID), syscall.SIGKILL)
	eventually(t, "the task to be seen as lost", func() bool {
		st := h.status(task.ID)
		return st.Status == tasks.StatusFailed && strings.HasPrefix(st.Error, "lost: ")
	})
	eventually(t, "the lost task's scrubbed sleep to be killed", func() bool {
		f := procStat(pid)
		return f == nil || f[0] == "Z"
	})
}

// wrapperPID reads the wrapper's pid from the task's record.
func wrapperPID(h *harness, id string) int {
	h.t.Helper()
	var rec struct {
		WrapperPID int `json:"wrapper_pid"`
	}
	data, err := os.ReadFile(filepath.Join(h.state, "tasks", id+".json"))
	if err == nil {
		err = json.Unmarshal(data, &rec)
	}
	if err != nil || rec.WrapperPID == 0 {
		h.t.Fatalf("task %s: no wrapper pid in its record: %v", id, err)
	}
	return rec.WrapperPID
}

// TestStopLosingTheRaceToTheNaturalEnd freezes the wrapper so the command
// has exited (exit 3) but nobody has recorded it yet, then stops the task:
// the stop must see it already ended, and the task must stay `failed:
// exited with code 3`, never become `cancelled` with the command's own
// exit code.
func TestStopLosingTheRaceToTheNaturalEnd(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	fifo := filepath.Join(h.root, "go")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	task := h.start(fmt.Sprintf("cat %s >/dev/null; exit 3", fifo))
	eventually(t, "task to have a pid", func() bool { return h.status(task.ID).PID != 0 })
	leader, wrapper := h.status(task.ID).PID, wrapperPID(h, task.ID)
	thaw := freeze(t, wrapper)
	defer thaw()
	f, err := os.OpenFile(fifo, os.O_WRONLY, 0) // blocks until the task's cat opens it
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	eventually(t, "the command to exit, unreaped by the frozen wrapper", func() bool {
		f := procStat(leader)
		return f != nil && f[0] == "Z"
	})

	stop := exec.Command(qtaskBin, "stop", "--grace", "10s", task.ID)
	stop.Env = h.env
	var out strings.Builder
	stop.Stdout, stop.Stderr = &out, &out
	if err := stop.Start(); err != nil {
		t.Fatal(err)
	}
	// Once stop watches the record it has decided: let the wrapper go on.
	eventually(t, "stop to wait on the task", func() bool { return watching(stop.Process.Pid) })
	thaw()
	if err := stop.Wait(); err != nil {
		t.Fatalf("stop after the natural end: %v\n%s", err, out.String())
	}
	if want := "Task " + task.ID + " already ended: failed: exited with code 3\n"; out.String() != want {
		t.Errorf("stop after the natural end printed %q, want %q", out.String(), want)
	}
	if st := h.status(task.ID); st.Status != tasks.StatusFailed || st.ExitCode == nil || *st.ExitCode != 3 {
		t.Errorf("a task that exited 3 before the stop is %s (exit %v), want failed with exit code 3", st.Status, deref(st.ExitCode))
	}
}

// freeze stops every thread of process pid until thaw is called. It uses
// ptrace (seize, interrupt), not SIGSTOP: tmux sends SIGCONT at once to a
// pane's process that stops, and a stopped process tells its parent.
func freeze(t *testing.T, pid int) (thaw func()) {
	t.Helper()
	attached, release, detached := make(chan error), make(chan struct{}), make(chan error)
	go func() {
		// Every ptrace request must come from the thread that attached.
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		seized, err := seizeThreads(pid)
		attached <- err
		<-release
		for _, tid := range seized {
			if derr := unix.PtraceDetach(tid); derr != nil && err == nil {
				err = derr
			}
		}
		detached <- err
	}()
	if err := <-attached; err != nil {
		close(release)
		<-detached
		t.Fatalf("freeze pid %d: %v", pid, err)
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			close(release)
			if err := <-detached; err != nil {
				t.Errorf("thaw pid %d: %v", pid, err)
			}
		})
	}
}

// seizeThreads stops each thread of pid under ptrace, listing them again
// until no new one appeared (a stopped thread starts none).
func seizeThreads(pid int) ([]int, error) {
	var seized []int
	done := map[int]bool{}
	for {
		tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
		if err != nil {
			return seized, err
		}
		grew := false
		for _, e := range tasks {
			tid, _ := strconv.Atoi(e.Name())
			if done[tid] {
				continue
			}
			done[tid], grew = true, true
			if err := unix.PtraceSeize(tid); err != nil {
				return seized, err
			}
			seized = append(seized, tid)
			if err := unix.PtraceInterrupt(tid); err != nil {
				return seized, err
			}
			var ws unix.WaitStatus
			if _, err := unix.Wait4(tid, &ws, unix.WALL, nil); err != nil {
				return seized, err
			}
		}
		if !grew {
			return seized, nil
		}
	}
}

// watching reports whether process pid holds an inotify instance: qtask
// creates one only to wait on a record, after a stop has acted.
func watching(pid int) bool {
	fds, _ := filepath.Glob(fmt.Sprintf("/proc/%d/fd/*", pid))
	for _, fd := range fds {
		if target, err := os.Readlink(fd); err == nil && target == "anon_inode:inotify" {
			return true
		}
	}
	return false
}

// TestStopRefusesTheTaskItRunsIn: `qtask stop $QTASK_TASK_ID` inside the
// task would SIGTERM its own caller; it is refused with exit 1 and a reason.
func TestStopRefusesTheTaskItRunsIn(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	task := h.start(`qtask stop --grace 1s "$QTASK_TASK_ID" 2>&1; echo "stop exit $?"`)
	st := h.wait(task.ID)
	out := h.output(task.ID)
	if !strings.Contains(out, "stop exit 1") || !strings.Contains(out, "is the task this command runs in") {
		t.Errorf("stop from inside the task: output %q, want exit 1 and the reason", out)
	}
	if st.Status != tasks.StatusCompleted {
		t.Errorf("the task that asked to stop itself is %s %q, want completed (the stop refused)", st.Status, st.Error)
	}
}

// TestFutureStartedAtNeverKeepsADeadTaskRunning: after the clock steps
// back, a started_at in the future must not keep a task whose wrapper never
// started "running", nor make a live task look dead: liveness is the
// wrapper's pid and start time.
func TestFutureStartedAtNeverKeepsADeadTaskRunning(t *testing.T) {
	t.Parallel()
	if !isolated(t) {
		return
	}
	h := newHarness(t)
	live := h.start("sleep 300")
	eventually(t, "task to have a pid", func() bool { return h.status(live.ID).PID != 0 })
	future := time.Now().Add(time.Hour)
	h.plantRunning("0000000f", 0, 0, future)
	if st := h.status("0000000f"); st.Status != tasks.StatusFailed || st.Error != "lost: the task's wrapper never started" {
		t.Errorf("a task with no wrapper, started an hour from now, is %s %q; want failed: lost: the task's wrapper never started", st.Status, st.Error)
	}

	path := filepath.Join(h.state, "tasks", live.ID+".json")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var rec map[string]any
	if err := json.Unmarshal(data, &rec); err != nil {
		t.Fatal(err)
	}
	rec["started_at"] = future.UTC().Format(time.RFC3339Nano)
	if data, err = json.Marshal(rec); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	if st := h.status(live.ID); st.Status != tasks.StatusRunning {
		t.Errorf("a live task whose started_at is in the future is %s %q, want running", st.Status, st.Error)
	}
	h.mustQtask("stop", "--grace", "2s", live.ID)
	if st := h.status(live.ID); st.Status != tasks.StatusCancelled {
		t.Errorf("after stop the live task is %s %q, want cancelled", st.Status, st.Error)
	}
}
