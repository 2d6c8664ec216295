package main

import (
	"os"
	"strings"
	"testing"

	"github.com/qtask/qtask/tasks"
)

// paneState is "1" for a dead pane, "0" for a live one, "" for none.
func (h *harness) paneState(pane string) string {
	out, err := h.tmux("display-message", "-p", "-t", pane, "#{pane_dead}")
	if err != nil {
		return ""
	}
	return out
}

// With keep_failed_pane, a failed task's pane stays open, dead, with its
// colours, while the task is failed (not running); `qtask attach` typed in
// a person's shell shows it on their terminal, red as the command printed
// it; once they leave it (prefix L, as attach's hint says) it closes. A
// task that succeeded leaves no pane. Without the keep the pane closed
// with the command and attach refused the task as not running.
func TestKeptFailedPaneShowsItsColoursUntilViewed(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.writeConfig("keep_failed_pane = true\n")
	work := h.shellSession("work")
	c := h.ptyClient("work")

	ok := h.start("echo fine")
	failed := h.start(`printf 'before\n\033[31mred-words\033[0m\n'; exit 3`)
	if got := h.wait(failed.ID); got.Status != tasks.StatusFailed || !got.PaneKept {
		t.Fatalf("failed task: status %s, pane_kept %v; want failed with its pane kept", got.Status, got.PaneKept)
	}
	h.wait(ok.ID)
	eventually(t, "the completed task's pane to close", func() bool { return h.paneState(ok.PaneID) == "" })
	eventually(t, "the failed task's pane to be kept, dead", func() bool { return h.paneState(failed.PaneID) == "1" })
	if screen, _ := h.tmux("capture-pane", "-p", "-e", "-t", failed.PaneID); !strings.Contains(screen, "\x1b[31mred-words") {
		t.Fatalf("the kept pane does not hold the command's colours:\n%q", screen)
	}

	mark := c.mark()
	c.typeKeys("qtask attach " + failed.ID + "\r")
	eventually(t, "the client to show the kept pane", func() bool {
		shown, _ := h.tmux("display-message", "-p", "-c", c.name, "#{pane_id}")
		return shown == failed.PaneID
	})
	c.waitDrawnSince(mark, "red-words")
	drawn := c.drawn()[mark:]
	if i := strings.Index(drawn, "red-words"); !strings.Contains(drawn[max(0, i-40):i], "\x1b[31m") {
		t.Fatalf("the terminal did not draw red-words in red; drew around it:\n%q", drawn[max(0, i-200):i+20])
	}
	c.waitDrawnSince(mark, "closes once you leave it")
	if st := h.status(failed.ID); st.Status != tasks.StatusFailed {
		t.Fatalf("viewing the kept pane changed the task to %s", st.Status)
	}

	c.pressPrefixKey("L")
	eventually(t, "the client to go back to its session", func() bool {
		shown, _ := h.tmux("display-message", "-p", "-c", c.name, "#{pane_id}")
		return shown == work
	})
	eventually(t, "the viewed pane to close", func() bool { return h.paneState(failed.PaneID) == "" })
	if r := h.qtask("attach", failed.ID); r.code != 1 || !strings.Contains(r.stderr, "is not running") {
		t.Fatalf("attach to a task whose kept pane was viewed: exit %d, %q; want 1, not running", r.code, r.stderr)
	}
}

// Removing a task closes its kept pane: `qtask rm`, and a prune. A stopped
// task's pane is not kept (it did not fail: someone ended it).
func TestKeptPaneClosedByRemoval(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.writeConfig("keep_failed_pane = true\n")
	a := h.start("exit 1")
	b := h.start("exit 2")
	stopped := h.start("sleep 60")
	for _, task := range []tasks.Task{a, b} {
		if got := h.wait(task.ID); !got.PaneKept {
			t.Fatalf("task %s: pane_kept false; want its pane kept", task.ID)
		}
		// The task settles before its wrapper, the pane's program, exits.
		eventually(t, "task "+task.ID+"'s pane to be kept, dead", func() bool { return h.paneState(task.PaneID) == "1" })
	}
	h.mustQtask("stop", stopped.ID)
	if got := h.wait(stopped.ID); got.PaneKept {
		t.Fatalf("a stopped task's pane was kept")
	}
	eventually(t, "the stopped task's pane to close", func() bool { return h.paneState(stopped.PaneID) == "" })

	h.mustQtask("rm", a.ID)
	eventually(t, "rm to close the kept pane", func() bool { return h.paneState(a.PaneID) == "" })
	if h.paneState(b.PaneID) != "1" {
		t.Fatalf("rm %s closed the kept pane of task %s too", a.ID, b.ID)
	}
	h.mustQtask("prune", "--all-finished")
	eventually(t, "prune to close the kept pane", func() bool { return h.paneState(b.PaneID) == "" })
}

// `logs --raw` prints what the pane received, colours included, without
// qtask's end marker or the program's questions to its terminal (tmux
// answered them; a terminal replaying them would type answers into the
// shell), from a 0600 copy kept only with keep_raw_output; without it, it
// says there is none (exit 1), and rm removes the copy.
func TestLogsRaw(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	plain := h.start(`printf '\033[32mgreen\033[0m\n'`)
	h.wait(plain.ID)
	if r := h.qtask("logs", "--raw", plain.ID); r.code != 1 || !strings.Contains(r.stderr, "keep_raw_output = true") {
		t.Fatalf("logs --raw without a raw copy: exit %d, %q; want 1 naming keep_raw_output", r.code, r.stderr)
	}
	if r := h.qtask("logs", "--raw", "--tail", "3", plain.ID); r.code != exitUsage {
		t.Fatalf("logs --raw --tail: exit %d, want %d", r.code, exitUsage)
	}

	h.writeConfig("keep_raw_output = true\n")
	task := h.start(`printf '\033[31mred\033[0m plain\n'; printf 'a\033[cb\033[6nc\033]11;?\007d\n'; exit 2`)
	h.wait(task.ID)
	r := h.qtask("logs", "--raw", task.ID)
	if r.code != 0 || !strings.Contains(r.stdout, "\x1b[31mred\x1b[0m plain") || !strings.Contains(r.stdout, "abcd") || strings.Contains(r.stdout, "qtask-end") {
		t.Fatalf("logs --raw: exit %d, %q; want the red escape, the text without queries, and no end marker", r.code, r.stdout)
	}
	if clean := h.output(task.ID); strings.Contains(clean, "\x1b") || !strings.Contains(clean, "red plain") {
		t.Fatalf("logs (clean) changed with a raw copy kept: %q", clean)
	}
	raw := strings.TrimSuffix(task.OutputPath, ".log") + ".raw"
	if fi, err := os.Stat(raw); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("raw copy %s: %v, mode %v; want 0600", raw, err, fi)
	}
	h.mustQtask("rm", task.ID)
	if _, err := os.Lstat(raw); !os.IsNotExist(err) {
		t.Fatalf("rm left the raw copy %s behind: %v", raw, err)
	}
}
