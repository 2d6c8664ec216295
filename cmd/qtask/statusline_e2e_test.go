package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/qtask/qtask/internal/testenv"
	"github.com/qtask/qtask/tasks"
)

// wantStatus waits until @qtask_status on the harness's server is want
// (the push on start is the wrapper's, made once the command runs), and
// checks that qtask status-line prints the same. The option is read as
// qtask reads tmux, with -u: without a UTF-8 locale (CI's env -i pass) tmux
// would print "⏵" as "_".
func (h *harness) wantStatus(when, want string) {
	h.t.Helper()
	var pushed string
	eventually(h.t, when+": @qtask_status "+want, func() bool {
		pushed, _ = h.tmux("-u", "show-options", "-gqv", "@qtask_status")
		return pushed == want
	})
	if printed := strings.TrimSuffix(h.mustQtask("status-line"), "\n"); printed != want {
		h.t.Fatalf("%s: qtask status-line printed %q, but @qtask_status is %q", when, printed, want)
	}
}

// The status segment is pushed to tmux on start, end, stop, view and prune,
// and `qtask status-line` agrees with it at every step.
func TestStatusSegmentFollowsTasks(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.shellSession("work") // the user's session keeps the server up
	long := h.start("sleep 60")
	h.wantStatus("one task running", "⏵1")
	failing := h.start("exit 3")
	h.qtask("wait", "--timeout", "60s", failing.ID) // not h.wait: its status would view it
	h.wantStatus("one running, one failed in the background", "⏵1 ✗1")
	h.mustQtask("stop", long.ID)
	h.wantStatus("the running one stopped", "✗1")
	h.mustQtask("status", failing.ID)
	h.wantStatus("the failure viewed", "")

	again := h.start("exit 4")
	h.qtask("wait", "--timeout", "60s", again.ID)
	h.wantStatus("a new failure", "✗1")
	h.mustQtask("prune", "--all-finished")
	h.wantStatus("the failure pruned", "")

	if got := strings.TrimSpace(h.mustQtask("status-line", "--format", "{running} running, {failed} failed")); got != "" {
		t.Fatalf("status-line --format when idle: %q, want empty", got)
	}
	h.start("sleep 60")
	if got := strings.TrimSpace(h.mustQtask("status-line", "--format", "[{running}/{failed}]")); got != "[1/0]" {
		t.Fatalf("status-line --format: %q", got)
	}
	if r := h.qtask("status-line", "--format", "{done}"); r.code != exitUsage || !strings.Contains(r.stderr, "unknown placeholder {done}") {
		t.Fatalf("status-line --format {done}: exit %d, %q", r.code, r.stderr)
	}
}

// `qtask seen` clears unseen failures from the segment in one action (ids,
// a name, or --all), printing nothing, instead of viewing each task.
func TestSeenClearsUnseenFailures(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.shellSession("work")
	long := h.start("sleep 60")
	var failed []tasks.Task
	for _, name := range []string{"one", "two", "three"} {
		f := h.start("exit 3", "--name", name)
		h.qtask("wait", "--timeout", "60s", f.ID) // not h.wait: its status would view it
		failed = append(failed, f)
	}
	h.wantStatus("three failures", "⏵1 ✗3")
	if out := h.mustQtask("seen", failed[0].ID); out != "" {
		t.Fatalf("qtask seen printed %q, want nothing", out)
	}
	h.wantStatus("one failure seen by id", "⏵1 ✗2")
	h.mustQtask("seen", "two")
	h.wantStatus("one seen by name", "⏵1 ✗1")
	h.mustQtask("seen", long.ID) // not a failure: nothing to clear
	if out := h.mustQtask("seen", "--all"); out != "" {
		t.Fatalf("qtask seen --all printed %q, want nothing", out)
	}
	h.wantStatus("all failures seen", "⏵1")
	if r := h.qtask("seen", "nosuchtask"); r.code != 1 || !strings.Contains(r.stderr, `no task with id or name "nosuchtask"`) {
		t.Fatalf("qtask seen of an unknown task: exit %d %q", r.code, r.stderr)
	}
	h.mustQtask("stop", long.ID)
}

// A foreground run's failure was seen by whoever ran it: it does not count
// as an unseen failure.
func TestStatusSegmentForegroundFailureSeen(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.start("sleep 60") // the server exists before the push
	if r := h.qtask("run", "--", "exit 5"); r.code != 5 {
		t.Fatalf("foreground exit 5: got %d", r.code)
	}
	h.wantStatus("after a foreground failure", "⏵1")
}

// insideEnv is the environment of a command typed in pane of the harness's
// server, as tmux gives it to the pane's shell.
func (h *harness) insideEnv(pane string) []string {
	return []string{"QTASK_TMUX_SOCKET=", "TMUX=" + h.socket + ",1,0", "TMUX_PANE=" + pane}
}

// A background task's end is shown to the clients attached to the session
// that started it, and to no other client.
func TestNotifyClientsOfStartingSession(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	pane := h.shellSession("work")
	h.shellSession("other")
	work, other := h.ptyClient("work"), h.ptyClient("other")

	ok := decodeTask(t, h.qtaskIn(h.root, h.insideEnv(pane), "run", "--bg", "--json", "--name", "greet", "--", "echo hi").stdout)
	h.wait(ok.ID)
	work.waitDrawn("✓ greet ")
	bad := decodeTask(t, h.qtaskIn(h.root, h.insideEnv(pane), "run", "--bg", "--json", "--", "exit 2").stdout)
	// The message says how long the task ran, rounded to the second: its
	// record's runtime, which a loaded machine can make 1s or more.
	end := h.wait(bad.ID)
	ran := end.Runtime(time.Time{}).Round(time.Second)
	work.waitDrawn(fmt.Sprintf("✗ exit 2 exit 2 %s — qtask status %s", ran, bad.ID))
	// Anything meant for the other client would have been sent before
	// this marker.
	h.tmux("display-message", "-c", other.name, "sync-marker")
	other.waitDrawn("sync-marker")
	if strings.Contains(other.drawn(), "greet") || strings.Contains(other.drawn(), "✗") {
		t.Fatalf("a client of another session was told about the task")
	}
}

// @qtask-notify bell rings the starting session's clients instead.
func TestNotifyBell(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	pane := h.shellSession("work")
	c := h.ptyClient("work")
	h.tmux("set-option", "-g", "@qtask-notify", "bell")
	task := decodeTask(t, h.qtaskIn(h.root, h.insideEnv(pane), "run", "--bg", "--json", "--name", "ring", "--", "true").stdout)
	h.wait(task.ID)
	c.waitDrawn("\a")
	if strings.Contains(c.drawn(), "✓ ring") {
		t.Fatalf("bell mode also showed a message")
	}
}

// withoutOption drops the line of option name from show-options output.
func withoutOption(options, name string) string {
	var kept []string
	for _, line := range strings.Split(options, "\n") {
		if !strings.HasPrefix(line, name+" ") {
			kept = append(kept, line)
		}
	}
	return strings.Join(kept, "\n")
}

// A task is shown running once it has run for a fifth of a second, and a
// push that would set the segment to what the last one set is not made:
// a long task costs two pushes (start and end), a quick one that changes
// nothing on the segment none, a quick one that fails one (the failed
// count). A tmux hook on set-option logs each push (a moment after it:
// counts are waited for, and an excess is caught at the end).
func TestStatusPushesOfQuickAndLongTasks(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.shellSession("work")
	log := filepath.Join(h.root, "pushes")
	hook := fmt.Sprintf(`run-shell "echo '#{hook_argument_0}' >>%s"`, log)
	if _, err := h.tmux("set-hook", "-g", "after-set-option", hook); err != nil {
		t.Fatal(err)
	}
	pushes := func() int {
		b, _ := os.ReadFile(log)
		return strings.Count(string(b), "@qtask_status\n")
	}
	gate := filepath.Join(h.root, "gate")
	if err := syscall.Mkfifo(gate, 0o600); err != nil {
		t.Fatal(err)
	}
	long := h.start("cat " + gate + " >/dev/null")
	h.wantStatus("a long task running", "⏵1")
	// The hook's shell writes the log a moment after the option is set.
	eventually(t, "the long task's start push logged", func() bool { return pushes() == 1 })
	// Non-blocking: a task that died would leave no reader, not a hang.
	f, err := os.OpenFile(gate, os.O_WRONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		t.Fatalf("the long task is not reading its gate: %v", err)
	}
	f.WriteString("go\n")
	f.Close()
	h.qtask("wait", "--timeout", "60s", long.ID)
	eventually(t, "the long task's end pushed", func() bool { return pushes() == 2 })

	// Quick tasks: the segment shows nothing before and after each, so no
	// push at all. One that took longer than the delay on a loaded machine
	// (by its own record) may have two.
	mayHave := 0
	for range 5 {
		quick := h.start("true")
		h.qtask("wait", "--timeout", "60s", quick.ID)
		if st := h.status(quick.ID); st.Runtime(time.Now()) >= 200*time.Millisecond {
			mayHave += 2
		}
	}
	failed := h.start("exit 3")
	h.qtask("wait", "--timeout", "60s", failed.ID)
	// Its start may have been pushed too, as a slow quick one's: read by
	// ls, which does not view the failure as status would.
	last := h.lastTask()
	if last.ID != failed.ID {
		t.Fatalf("ls lists %s last, not the failed task %s", last.ID, failed.ID)
	}
	if last.Runtime(time.Now()) >= 200*time.Millisecond {
		mayHave++
	}
	h.wantStatus("the failed quick task counted", "✗1")
	eventually(t, "the failed task's end pushed", func() bool { return pushes() >= 2+1 })
	// Every wrapper gone (its window closed): no push of theirs is left to
	// come, so an excess shows now.
	eventually(t, "the tasks' windows closed", func() bool {
		panes, _ := h.tmux("list-panes", "-a", "-F", "#{pane_id}")
		return strings.Count(panes, "%") == 1 // the work session's shell
	})
	if n := pushes(); n > 2+1+mayHave {
		t.Fatalf("%d pushes for a long task, 5 quick ones that changed nothing and a failed one (%d more allowed for those slower than the delay), want %d",
			n, mayHave, 2+1+mayHave)
	}
}

// The end message stays a few seconds (@qtask-notify-time, in ms), not
// tmux's display-time of 750 ms, which is easily missed; a short value is
// honoured too. The client's status line is drawn again ("[work]") only
// once the message goes.
func TestNotifyTime(t *testing.T) {
	testenv.SkipShort(t, "watches a message for 2 s")
	t.Parallel()
	h := newHarness(t)
	pane := h.shellSession("work")
	h.tmux("set-option", "-g", "status-interval", "0") // no redraw but the message's end
	c := h.ptyClient("work")
	task := decodeTask(t, h.qtaskIn(h.root, h.insideEnv(pane), "run", "--bg", "--json", "--name", "first", "--", "true").stdout)
	h.wait(task.ID)
	c.waitDrawn("✓ first ")
	shown := c.mark()
	time.Sleep(2 * time.Second) // well past display-time's 750 ms
	if strings.Contains(c.drawn()[shown:], "[work]") {
		t.Fatalf("the end message was gone within 2 s (the status line was drawn again); want the default of a few seconds")
	}
	h.tmux("set-option", "-g", "@qtask-notify-time", "300")
	task = decodeTask(t, h.qtaskIn(h.root, h.insideEnv(pane), "run", "--bg", "--json", "--name", "second", "--", "true").stdout)
	h.wait(task.ID)
	c.waitDrawn("✓ second ")
	c.waitDrawnSince(c.mark(), "[work]")
}

// With tasks on two tmux servers that both loaded the plugin, each server's
// segment agrees with `qtask status-line` after every change, whichever
// server the change happened on: a client attached to one server draws a
// count that changed on the other. Each push went to the task's own server
// only, so one server said ⏵2 ✗3 while status-line said ⏵1 ✗3, until a
// count changed there. A server that is gone is dropped, and no push
// starts a server on its socket.
func TestStatusSegmentAgreesAcrossServers(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.shellSession("work")
	h.tmux("set-option", "-g", "status-right", "S[#{@qtask_status}]")
	h.loadPlugin()
	c := h.ptyClient("work")

	// A second server, whose own qtask calls (key bindings, the plugin)
	// name it, as the tmux a person runs in another terminal.
	other := filepath.Join(h.root, "other.sock")
	otherTmux := func(args ...string) (string, error) {
		cmd := exec.Command("tmux", append([]string{"-u", "-S", other, "-f", "/dev/null"}, args...)...)
		cmd.Env = append(append([]string{}, h.env...), "QTASK_TMUX_SOCKET="+other)
		out, err := cmd.CombinedOutput()
		return strings.TrimSpace(string(out)), err
	}
	if out, err := otherTmux("new-session", "-d", "-s", "desk"); err != nil {
		t.Fatalf("second server: %v %s", err, out)
	}
	if out, err := otherTmux("run-shell", pluginScript(t)); err != nil || out != "" {
		t.Fatalf("loading the plugin on the second server: %v %q", err, out)
	}
	agree := func(when string) string {
		t.Helper()
		var printed, here, there string
		eventually(t, when+": both servers' @qtask_status to be what status-line prints", func() bool {
			printed = strings.TrimSuffix(h.mustQtask("status-line"), "\n")
			here, _ = h.tmux("-u", "show-options", "-gqv", "@qtask_status")
			there, _ = otherTmux("show-options", "-gqv", "@qtask_status")
			return here == printed && there == printed
		})
		return printed
	}

	a := h.start("sleep 60")
	agree("a task started on the first server")
	b := h.startOn(other, "sleep 60")
	failed := h.startOn(other, "exit 3")
	h.qtask("wait", "--timeout", "60s", failed.ID) // not status: it would view the failure
	if got := agree("two tasks started on the second, one failed"); got != "⏵2 ✗1" {
		t.Fatalf("status-line printed %q, want ⏵2 ✗1", got)
	}
	c.waitDrawn("S[⏵2 ✗1]")
	h.mustQtask("stop", a.ID)
	agree("the first server's task stopped")

	if _, err := otherTmux("kill-server"); err != nil {
		t.Fatal(err)
	}
	h.qtask("wait", "--timeout", "60s", b.ID)
	h.start("sleep 60")
	printed := ""
	eventually(t, "the first server's segment to agree once the second is gone", func() bool {
		printed = strings.TrimSuffix(h.mustQtask("status-line"), "\n")
		here, _ := h.tmux("-u", "show-options", "-gqv", "@qtask_status")
		return here == printed
	})
	c.waitDrawn("S[" + printed + "]")
	if out, err := otherTmux("list-sessions"); err == nil {
		t.Fatalf("a push started a server on the gone server's socket: %s", out)
	}
}
