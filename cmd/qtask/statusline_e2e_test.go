package main

import (
	"strings"
	"testing"
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
	h.wait(bad.ID)
	work.waitDrawn("✗ exit 2 exit 2 0s — qtask status " + bad.ID)
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
