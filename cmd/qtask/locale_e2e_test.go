package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/qtask/qtask/tasks"
)

// withoutLocale strips LANG, LANGUAGE and LC_* from everything the harness
// runs, as in a bare container (env -i): tmux then rewrites non-printable
// and non-ASCII bytes in what it prints. Call it before the first qtask or
// tmux call, so the harness's tmux server starts without a locale too.
func (h *harness) withoutLocale() {
	env := h.env[:0:0]
	for _, kv := range h.env {
		name, _, _ := strings.Cut(kv, "=")
		if name == "LANG" || name == "LANGUAGE" || strings.HasPrefix(name, "LC_") {
			continue
		}
		env = append(env, kv)
	}
	h.env = env
}

func TestPromoteWithoutLocale(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.withoutLocale()
	gate := filepath.Join(h.root, "go")
	fg := h.runForeground(nil, "--", "echo ready; while [ ! -e "+gate+" ]; do sleep 0.05; done; echo after")
	eventually(t, "the foreground task to start", func() bool { return strings.Contains(fg.stdout.String(), "ready\n") })
	task := h.lastTask()
	r := h.qtask("promote", task.ID)
	if r.code != 0 || !strings.Contains(r.stdout, "Promoted task "+task.ID) {
		t.Fatalf("promote without a UTF-8 locale: exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	if code := fg.wait(t); code != exitPromoted {
		t.Fatalf("the waiting qtask run exited %d, want %d; stderr: %s", code, exitPromoted, fg.stderr.String())
	}
	if where, _ := h.tmux("display-message", "-p", "-t", task.PaneID, "#{session_name}"); where != "qtask" {
		t.Fatalf("promoted pane is in session %q, want qtask", where)
	}
	if err := os.WriteFile(gate, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if end := h.wait(task.ID); end.Status != tasks.StatusCompleted || h.output(task.ID) != "ready\nafter\n" {
		t.Fatalf("promoted task: %s, output %q", end.StatusText(), h.output(task.ID))
	}
}

func TestTimeoutToBackgroundWithoutLocale(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.withoutLocale()
	gate := h.fifoGate() // the command ends after its timeout, never before
	r := h.qtask("run", "--timeout", "300ms", "--", "read x < "+gate+"; echo the-end")
	if r.code != exitPromoted {
		t.Fatalf("timeout without a UTF-8 locale: exit %d, want %d\nstdout: %s\nstderr: %s", r.code, exitPromoted, r.stdout, r.stderr)
	}
	id := h.lastTask().ID
	h.openFifoGate(gate)
	if end := h.wait(id); end.Status != tasks.StatusCompleted || h.output(id) != "the-end\n" {
		t.Fatalf("backgrounded task: %s, output %q", end.StatusText(), h.output(id))
	}
}
