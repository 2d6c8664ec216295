package main

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/qtask/qtask/tasks"
)

// attachClient attaches a real tmux client to session on the harness's
// server: it runs inside a pane of a second, throwaway server, which gives
// it the terminal a client needs.
func (h *harness) attachClient(session string) {
	h.t.Helper()
	outer := filepath.Join(h.root, "outer.sock")
	cmd := exec.Command("tmux", "-S", outer, "-f", "/dev/null", "new-session", "-d", "-x", "120", "-y", "40",
		"--", "env", "-u", "TMUX", "tmux", "-S", h.socket, "attach-session", "-t", "="+session)
	cmd.Env = h.env
	if out, err := cmd.CombinedOutput(); err != nil {
		h.t.Fatalf("start outer tmux: %v %s", err, out)
	}
	h.t.Cleanup(func() { exec.Command("tmux", "-S", outer, "kill-server").Run() })
	eventually(h.t, "a client to attach", func() bool {
		clients, _ := h.tmux("list-clients")
		return clients != ""
	})
}

// switchedToTask attaches a client to a session "user", starts a task and
// runs `qtask VERB ID` (attach, fg) from the user's pane, which must switch
// the client to the task's pane. It returns the task, the user's pane and
// the environment of a command run in that pane.
func (h *harness) switchedToTask(verb string) (task tasks.Task, userPane string, env []string) {
	h.t.Helper()
	if _, err := h.tmux("new-session", "-d", "-s", "user"); err != nil {
		h.t.Fatal(err)
	}
	h.attachClient("user")
	userPane, _ = h.tmux("display-message", "-p", "-t", "=user:", "#{pane_id}")
	task = h.start("sleep 30")
	env = []string{"QTASK_TMUX_SOCKET=", "TMUX=" + h.socket + ",1,0", "TMUX_PANE=" + userPane}
	if r := h.qtaskIn(h.root, env, verb, task.ID); r.code != 0 {
		h.t.Fatalf("qtask %s inside tmux: exit %d %s", verb, r.code, r.stderr)
	}
	if shown, _ := h.tmux("list-clients", "-F", "#{pane_id}"); shown != task.PaneID {
		h.t.Fatalf("the client shows pane %q after qtask %s, want the task's %s", shown, verb, task.PaneID)
	}
	return task, userPane, env
}

func TestAttachSwitchesClientToTask(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	task, userPane, env := h.switchedToTask("fg")

	here := h.start("sleep 30")
	if r := h.qtaskIn(h.root, env, "attach", "--here", here.ID); r.code != 0 {
		t.Fatalf("attach --here: exit %d %s", r.code, r.stderr)
	}
	win, _ := h.tmux("display-message", "-p", "-t", here.PaneID, "#{window_id}")
	userWin, _ := h.tmux("display-message", "-p", "-t", userPane, "#{window_id}")
	if win != userWin {
		t.Fatalf("attach --here should join the task's pane into the caller's window %s, it is in %s", userWin, win)
	}
	h.mustQtask("stop", task.ID, here.ID)
	if r := h.qtaskIn(h.root, env, "attach", task.ID); r.code != 1 || !strings.Contains(r.stderr, "not running") {
		t.Fatalf("attach to a finished task: exit %d %q", r.code, r.stderr)
	}
}

// A person who switched to a task with `qtask attach` stays in tmux when
// the task ends: its window closing destroys the qtask session (it was the
// only task), and tmux's default (detach-on-destroy on) detached the client,
// dropping the person out of tmux altogether; qtask's session now sends
// its clients back to the session they came from (found by a new user's
// trial).
func TestAttachedClientStaysInTmuxWhenTaskEnds(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	task, _, _ := h.switchedToTask("attach")
	h.mustQtask("stop", task.ID)
	eventually(t, "the task's session to close", func() bool {
		_, err := h.tmux("has-session", "-t", "=qtask")
		return err != nil
	})
	eventually(t, "the client to be back in the user's session", func() bool {
		session, _ := h.tmux("list-clients", "-F", "#{session_name}")
		return session == "user"
	})
}
