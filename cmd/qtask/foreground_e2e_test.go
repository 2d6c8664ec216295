package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/qtask/qtask/internal/testenv"
	"github.com/qtask/qtask/tasks"
)

// foreground is a `qtask run` (no --bg) running as a child of the test.
type foreground struct {
	cmd    *exec.Cmd
	stdout *syncBuffer
	stderr *syncBuffer
	done   chan struct{}
	code   int
}

func (h *harness) runForeground(extraEnv []string, args ...string) *foreground {
	h.t.Helper()
	return h.spawn(extraEnv, append([]string{"run"}, args...)...)
}

// spawn starts any qtask command as a child of the test, for tests that
// signal it or must bound how long it takes.
func (h *harness) spawn(extraEnv []string, args ...string) *foreground {
	h.t.Helper()
	return h.spawnStdin(nil, extraEnv, args...)
}

// spawnStdin is spawn with stdin (nil: none).
func (h *harness) spawnStdin(stdin io.Reader, extraEnv []string, args ...string) *foreground {
	h.t.Helper()
	fg := &foreground{stdout: &syncBuffer{}, stderr: &syncBuffer{}, done: make(chan struct{})}
	fg.cmd = exec.Command(qtaskBin, args...)
	fg.cmd.Env = append(append([]string{}, h.env...), extraEnv...)
	fg.cmd.Dir = h.root
	fg.cmd.Stdin, fg.cmd.Stdout, fg.cmd.Stderr = stdin, fg.stdout, fg.stderr
	if err := fg.cmd.Start(); err != nil {
		h.t.Fatal(err)
	}
	go func() {
		err := fg.cmd.Wait()
		if ee, ok := err.(*exec.ExitError); ok {
			fg.code = ee.ExitCode()
		}
		close(fg.done)
	}()
	h.t.Cleanup(func() { fg.cmd.Process.Kill() })
	return fg
}

// wait returns the exit code, failing the test if qtask run hangs.
func (fg *foreground) wait(t *testing.T) int {
	t.Helper()
	select {
	case <-fg.done:
		return fg.code
	case <-time.After(60 * time.Second):
		t.Fatalf("%s did not return; stdout so far:\n%s", strings.Join(fg.cmd.Args[1:], " "), fg.stdout.String())
		return -1
	}
}

// syncBuffer is a bytes.Buffer safe to read while a process writes it.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// lastTask returns the most recently started task.
func (h *harness) lastTask() tasks.Task {
	h.t.Helper()
	var list []tasks.Task
	if err := json.Unmarshal([]byte(h.mustQtask("ls", "--json")), &list); err != nil || len(list) == 0 {
		h.t.Fatalf("ls --json: %v (%d tasks)", err, len(list))
	}
	return list[len(list)-1]
}

func TestForegroundPassesExitCodeAndOrder(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	r := h.qtask("run", "--", "echo one; echo two >&2; echo three; exit 4")
	if r.code != 4 {
		t.Fatalf("qtask run exit %d, want the command's 4 (stderr %q)", r.code, r.stderr)
	}
	if r.stdout != "one\ntwo\nthree\n" {
		t.Fatalf("foreground output = %q, want the lines in order", r.stdout)
	}
	if task := h.lastTask(); task.Background {
		t.Fatalf("a foreground task should not be marked background: %+v", task)
	}
}

func TestPromoteKeepsProcessAndOutput(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	// Lines 1-5 before the promote, 6-30 after: the command waits on a
	// FIFO between them, so the promote never races its end.
	gate := h.fifoGate()
	fg := h.runForeground(nil, "--", "seq 1 5; read x < "+gate+"; seq 6 30")
	var task tasks.Task
	eventually(t, "the foreground task to print 5 lines", func() bool {
		return strings.Contains(fg.stdout.String(), "5\n")
	})
	// The command prints as soon as it starts, which can be before its
	// wrapper notes the command's group in the record.
	eventually(t, "the task's group in its record", func() bool {
		task = h.lastTask()
		return task.PID != 0
	})
	pidBefore := task.PID
	out := h.mustQtask("promote", task.ID)
	if !strings.Contains(out, "Promoted task "+task.ID) {
		t.Fatalf("promote said %q", out)
	}
	if code := fg.wait(t); code != exitPromoted {
		t.Fatalf("the waiting qtask run exited %d, want %d", code, exitPromoted)
	}
	want := fmt.Sprintf("promoted to background as %s; output continues in %s", task.ID, task.OutputPath)
	if !strings.Contains(fg.stdout.String(), want) {
		t.Fatalf("caller output lacks %q:\n%s", want, fg.stdout.String())
	}
	mid := h.status(task.ID)
	if !mid.Running() || !mid.Background || mid.PID != pidBefore {
		t.Fatalf("after promote: running=%v background=%v pid=%d (was %d)", mid.Running(), mid.Background, mid.PID, pidBefore)
	}
	h.openFifoGate(gate)
	end := h.wait(task.ID)
	var want2 strings.Builder
	for i := 1; i <= 30; i++ {
		fmt.Fprintf(&want2, "%d\n", i)
	}
	if end.Status != tasks.StatusCompleted || h.output(task.ID) != want2.String() {
		t.Fatalf("promoted task: %s, output %q; want completed with exactly 1..30", end.Status, h.output(task.ID))
	}
	again := h.qtask("promote", task.ID)
	if again.code != 0 || !strings.Contains(again.stdout, "already finished, exit 0") {
		t.Fatalf("promote after the end: exit %d, %q", again.code, again.stdout)
	}
}

func TestTimeoutBackgroundsAndKeepsWork(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	// The command ends only once the test opens the gate: never before
	// its timeout, however slow the machine.
	gate := h.fifoGate()
	r := h.qtask("run", "--timeout", "500ms", "--", "echo begin; read x < "+gate+"; echo the-last-line")
	if r.code != exitPromoted || !strings.Contains(r.stdout, "promoted to background as ") {
		t.Fatalf("timeout: exit %d, stdout %q; want %d and the promote message", r.code, r.stdout, exitPromoted)
	}
	id := h.lastTask().ID
	again := h.qtask("promote", id)
	if again.code != 0 || !strings.Contains(again.stdout, "already in the background") {
		t.Fatalf("a second promote must be a no-op: exit %d %q", again.code, again.stdout)
	}
	h.openFifoGate(gate)
	task := h.wait(id)
	if task.Status != tasks.StatusCompleted || !strings.HasSuffix(h.output(task.ID), "the-last-line\n") {
		t.Fatalf("work kept after timeout: status %s, output %q", task.Status, h.output(task.ID))
	}
	if strings.Contains(r.stderr, "ran for") {
		t.Fatalf("no long-running hint after a timeout, got %q", r.stderr)
	}
}

func TestTimeoutKillLeavesNothing(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	r := h.qtask("run", "--timeout", "500ms", "--on-timeout", "kill", "--", "sleep 300 & sleep 301")
	task := h.lastTask()
	if task.Status != tasks.StatusFailed || task.Error != "timed out after 500ms" {
		t.Fatalf("on-timeout kill: %s %q, want failed 'timed out after 500ms'", task.Status, task.Error)
	}
	if r.code == 0 || r.code == exitPromoted {
		t.Fatalf("on-timeout kill exited %d", r.code)
	}
	if left := groupMembers(t, task.PID); len(left) > 0 {
		t.Fatalf("processes left after timeout kill: %v", left)
	}
}

// The note after a long foreground run (config long_run_note): by default
// only an agent gets it, a person's terminal stays quiet; "always" gives a
// person one short line; "off" tells nobody.
func TestLongRunningHint(t *testing.T) {
	testenv.SkipShort(t, "runs commands of 1.1 s")
	t.Parallel()
	// No timing is asserted: --timeout 0 (never) sets the bar at 1s, which
	// a sleep 1.1 always reaches however loaded the machine, and an hour's
	// timeout puts it at 30 minutes, which it never does.
	h := newHarness(t)
	note := regexp.MustCompile(`ran (for )?[0-9]+s`)
	if r := h.qtask("run", "--timeout", "0", "--", "sleep 1.1"); r.code != 0 || r.stderr != "" {
		t.Fatalf("a person's long run, long_run_note left at its default (agent): exit %d, stderr %q, want nothing", r.code, r.stderr)
	}
	if r := h.qtask("run", "--agent", "--timeout", "0", "--", "sleep 1.1"); r.code != 0 || !strings.Contains(r.stderr, "[qtask] This command ran for") {
		t.Fatalf("an agent's long run gets its note by default: exit %d stderr %q", r.code, r.stderr)
	}

	h.writeConfig(`long_run_note = "always"` + "\n")
	r := h.qtask("run", "--timeout", "0", "--", "sleep 1.1")
	if r.code != 0 || !regexp.MustCompile("^qtask: ran [0-9]+s; next time try `qtask run --bg`, or prefix B while it runs\n$").MatchString(r.stderr) {
		t.Fatalf("with long_run_note = \"always\" a person gets one short line: exit %d stderr %q", r.code, r.stderr)
	}
	if r := h.qtask("run", "--timeout", "1h", "--", "sleep 1.1"); note.MatchString(r.stderr) {
		t.Fatalf("no note below timeout/2: %q", r.stderr)
	}
	if r := h.qtask("run", "--", "true"); note.MatchString(r.stderr) {
		t.Fatalf("no note for a quick command: %q", r.stderr)
	}
	if r := h.qtask("run", "--timeout", "0", "--", "sleep 1.1; kill -9 $$"); r.code != 137 || note.MatchString(r.stderr) {
		t.Fatalf("no note after a signal death: exit %d %q", r.code, r.stderr)
	}
	if r := h.qtask("run", "--bg", "--", "sleep 1.1"); note.MatchString(r.stderr + r.stdout) {
		t.Fatalf("no note on a background run: %q", r.stderr)
	}

	h.writeConfig(`long_run_note = "off"` + "\n")
	if r := h.qtask("run", "--agent", "--timeout", "0", "--", "sleep 1.1"); r.code != 0 || note.MatchString(r.stderr) {
		t.Fatalf("with long_run_note = \"off\" not even an agent gets the note: exit %d stderr %q", r.code, r.stderr)
	}
}

func TestInterruptStopsForegroundTask(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	fg := h.runForeground(nil, "--", "echo ready; sleep 300")
	eventually(t, "ready", func() bool { return strings.Contains(fg.stdout.String(), "ready") })
	task := h.lastTask()
	fg.cmd.Process.Signal(syscall.SIGINT)
	if code := fg.wait(t); code != 130 {
		t.Fatalf("qtask run after SIGINT exited %d, want 130", code)
	}
	// The record as it ends: the one read at "ready" may predate the
	// wrapper's note of the command's group (the command prints as soon as
	// it starts), and a pid of 0 would name no group.
	st := h.status(task.ID)
	if st.Status != tasks.StatusCancelled || st.PID <= 0 {
		t.Fatalf("task after SIGINT to its caller: %s, pid %d; want cancelled, with its pid", st.Status, st.PID)
	}
	if left := groupMembers(t, st.PID); len(left) > 0 {
		t.Fatalf("processes left: %v", left)
	}
}

func TestCallerKilledTaskCarriesOn(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	// The task waits on a FIFO, not a clock: it runs until the test has
	// looked at it, however slow the machine.
	gate := filepath.Join(h.root, "gate")
	if err := syscall.Mkfifo(gate, 0o600); err != nil {
		t.Fatal(err)
	}
	fg := h.runForeground(nil, "--", "echo ready; cat "+gate+" >/dev/null; echo finished")
	eventually(t, "ready", func() bool { return strings.Contains(fg.stdout.String(), "ready") })
	task := h.lastTask()
	fg.cmd.Process.Kill()
	fg.wait(t)
	st := h.status(task.ID)
	if !st.Running() || !st.Background {
		t.Fatalf("after its caller was SIGKILLed the task should run on as a background task: %+v", st)
	}
	if err := os.WriteFile(gate, []byte("go\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if end := h.wait(task.ID); end.Status != tasks.StatusCompleted || !strings.HasSuffix(h.output(task.ID), "finished\n") {
		t.Fatalf("orphaned foreground task: %s, output %q", end.Status, h.output(task.ID))
	}
}

func TestPromoteErrors(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	if _, err := h.tmux("new-session", "-d", "-s", "idle"); err != nil {
		t.Fatal(err)
	}
	pane, _ := h.tmux("display-message", "-p", "-t", "=idle:", "#{pane_id}")
	r := h.qtask("promote", "--pane", pane)
	if r.code != 1 || !strings.Contains(r.stderr, "nothing running in pane "+pane) {
		t.Fatalf("promote of an idle pane: exit %d, %q", r.code, r.stderr)
	}
	if r := h.qtask("promote", "--pane", "bogus"); r.code != 2 {
		t.Fatalf("promote --pane bogus: exit %d, want 2", r.code)
	}
	for _, cmd := range []string{"sleep 1 &", `bash -c "sleep 1 &"`} {
		if r := h.qtask("run", "--", cmd); r.code != 2 || !strings.Contains(r.stderr, "'&'") {
			t.Fatalf("trailing & (%s): exit %d %q, want 2 and why", cmd, r.code, r.stderr)
		}
	}
	if r := h.qtask("run", "--", "true && echo '&'"); r.code != 0 {
		t.Fatalf("a quoted & must run: exit %d %q", r.code, r.stderr)
	}
}

func TestForegroundInsideTmuxPromoteByPane(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	if _, err := h.tmux("new-session", "-d", "-s", "user"); err != nil {
		t.Fatal(err)
	}
	userPane, _ := h.tmux("display-message", "-p", "-t", "=user:", "#{pane_id}")
	env := []string{"QTASK_TMUX_SOCKET=", "TMUX=" + h.socket + ",1,0", "TMUX_PANE=" + userPane}
	gate := h.fifoGate() // the command ends after the promote, never before
	fg := h.runForeground(env, "--", "echo ready; read x < "+gate+"; echo after")
	eventually(t, "ready", func() bool { return strings.Contains(fg.stdout.String(), "ready") })
	task := h.lastTask()
	where, _ := h.tmux("display-message", "-p", "-t", task.PaneID, "#{session_name}")
	active, _ := h.tmux("display-message", "-p", "-t", "=user:", "#{pane_id}")
	if where != "user" || active != userPane {
		t.Fatalf("foreground window should open unselected in the caller's session: in %q, active pane %s", where, active)
	}
	// Exactly what the documented key binding (docs/REFERENCE.md) runs, run by tmux itself.
	if out, err := h.tmux("run-shell", "-t", task.PaneID, "qtask promote --pane #{pane_id}"); err != nil {
		t.Fatalf("the promote binding's command failed: %v %s", err, out)
	}
	if code := fg.wait(t); code != exitPromoted {
		t.Fatalf("caller exited %d after promote", code)
	}
	where, _ = h.tmux("display-message", "-p", "-t", task.PaneID, "#{session_name}")
	if where != "qtask" {
		t.Fatalf("promoted pane is in session %q, want qtask", where)
	}
	if windows, _ := h.tmux("list-windows", "-t", "=user:"); strings.Count(windows, "\n") != 0 {
		t.Fatalf("the caller's session should be back to its one window:\n%s", windows)
	}
	h.openFifoGate(gate)
	if end := h.wait(task.ID); !strings.HasSuffix(h.output(task.ID), "ready\nafter\n") || end.Status != tasks.StatusCompleted {
		t.Fatalf("after promote: %s %q", end.Status, h.output(task.ID))
	}
}

func TestPromoteByPaneStaysOnItsServer(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	fg := h.runForeground(nil, "--", "echo ready; sleep 30")
	eventually(t, "ready", func() bool { return strings.Contains(fg.stdout.String(), "ready") })
	task := h.lastTask()
	// Another server whose first pane has the same id.
	other := filepath.Join(h.root, "other.sock")
	if out, err := exec.Command("tmux", "-S", other, "-f", "/dev/null", "new-session", "-d", "-P", "-F", "#{pane_id}").CombinedOutput(); err != nil || strings.TrimSpace(string(out)) != task.PaneID {
		t.Fatalf("second server's first pane is %q (%v), want the same id as the task's %s", out, err, task.PaneID)
	}
	t.Cleanup(func() { exec.Command("tmux", "-S", other, "kill-server").Run() })
	r := h.qtaskIn(h.root, []string{"QTASK_TMUX_SOCKET=" + other}, "promote", "--pane", task.PaneID)
	if r.code != 1 || !strings.Contains(r.stderr, "nothing running in pane "+task.PaneID) {
		t.Fatalf("promote of pane %s on another server: exit %d, %q %q; it must not touch this server's task",
			task.PaneID, r.code, r.stdout, r.stderr)
	}
	if st := h.status(task.ID); st.Background {
		t.Fatalf("the task on the first server was promoted by a promote aimed at another server")
	}
	h.mustQtask("stop", task.ID)
	fg.wait(t)
}
