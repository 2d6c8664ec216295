package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestWakeTmuxTypesOnlyIntoAnIdleAgentsFreePane checks `--wake tmux`'s
// rules with a stand-in agent: a pane running cat on the harness's tmux
// server, whose hooks (`qtask agent hook qwen --wake tmux`) are called by
// the test. A task ending while the agent is busy, or while its pane is in
// copy mode, types nothing; one ending while it is idle in a free pane
// types one line, naming the task; the next end, before the agent's hooks
// said it is idle again, types nothing.
func TestWakeTmuxTypesOnlyIntoAnIdleAgentsFreePane(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	if _, err := h.tmux("new-session", "-d", "-s", "agent", "-x", "200", "cat"); err != nil {
		t.Fatal(err)
	}
	pane, err := h.tmux("display-message", "-p", "-t", "agent", "#{pane_id}")
	if err != nil {
		t.Fatal(err)
	}
	scope := []string{"QTASK_SCOPE=wake-test"}
	hookEnv := append([]string{"TMUX=" + h.socket + ",1,0", "TMUX_PANE=" + pane}, scope...)
	hook := func(event string) {
		t.Helper()
		in := `{"hook_event_name":"` + event + `","session_id":"s1"}`
		if r := h.qtaskStdin(h.root, hookEnv, in, "agent", "hook", "qwen", "--wake", "tmux"); r.code != 0 || r.stderr != "" {
			t.Fatalf("hook %s: exit %d %s", event, r.code, r.stderr)
		}
	}
	// endTask runs a background task in the agent's scope to its end, and
	// until its wrapper (which wakes the agent after the settle) is gone.
	endTask := func() string {
		t.Helper()
		r := h.qtaskIn(h.root, scope, "run", "--bg", "--json", "--", "true")
		var task struct {
			ID     string `json:"id"`
			PaneID string `json:"pane_id"`
		}
		if err := json.Unmarshal([]byte(r.stdout), &task); err != nil {
			t.Fatalf("run: %q %s", r.stdout, r.stderr)
		}
		h.wait(task.ID)
		eventually(t, "task "+task.ID+"'s window to close", func() bool {
			panes, err := h.tmux("list-panes", "-a", "-F", "#{pane_id}")
			return err == nil && !strings.Contains("\n"+panes+"\n", "\n"+task.PaneID+"\n")
		})
		return task.ID
	}
	screen := func() string {
		t.Helper()
		out, err := h.tmux("capture-pane", "-p", "-t", pane)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}

	hook("UserPromptSubmit") // busy
	busy := endTask()
	// The agent reads that end (else its Stop would be blocked with it,
	// and the agent busy again), then ends its turn: idle.
	if r := h.qtaskIn(h.root, scope, "agent", "inbox"); !strings.Contains(r.stdout, busy) {
		t.Fatalf("inbox: %q %s", r.stdout, r.stderr)
	}
	hook("Stop")
	if _, err := h.tmux("copy-mode", "-t", pane); err != nil {
		t.Fatal(err)
	}
	inMode := endTask()
	if _, err := h.tmux("send-keys", "-t", pane, "-X", "cancel"); err != nil {
		t.Fatal(err)
	}
	woken := endTask()
	eventually(t, "the wake line for "+woken, func() bool { return strings.Contains(screen(), "[qtask] task "+woken+" finished: completed") })
	after := endTask()
	got := screen()
	for what, id := range map[string]string{"busy": busy, "in copy mode": inMode, "already woken": after} {
		if strings.Contains(got, id) {
			t.Errorf("a task that ended while the agent was %s was typed into its pane:\n%s", what, got)
		}
	}
	if n := strings.Count(got, "[qtask] task "); n != 2 { // the terminal's echo, and cat's copy
		t.Errorf("%d wake lines on the agent's screen, want the one line, echoed:\n%s", n, got)
	}
}
