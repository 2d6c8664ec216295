package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestTasksForkNoTmuxClient: once the tmux server runs, a task's whole life
// — the caller's start, the wrapper's pipe and status pushes, the settle,
// a foreground caller's wait — talks to the server over its socket and
// forks no `tmux` client (a third of a start's time went to forking one).
// A tmux on PATH that logs its calls proves it: the server is started
// through it (that needs the client), so the wrapper inside the server
// finds it too.
func TestTasksForkNoTmuxClient(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	real, err := exec.LookPath("tmux")
	if err != nil {
		t.Fatal(err)
	}
	shim := filepath.Join(h.root, "shim")
	log := filepath.Join(h.root, "tmux-calls")
	if err := os.Mkdir(shim, 0o700); err != nil {
		t.Fatal(err)
	}
	script := "#!/bin/sh\nprintf '%s\\n' \"$*\" >>'" + log + "'\nexec '" + real + "' \"$@\"\n"
	writeExecutable(t, filepath.Join(shim, "tmux"), []byte(script))
	env := []string{"PATH=" + shim + ":" + filepath.Dir(qtaskBin) + ":" + os.Getenv("PATH")}

	// A long task keeps the server up: it exits with its last session.
	first := h.qtaskIn(h.root, env, "run", "--bg", "--json", "--", "sleep 600")
	if first.code != 0 {
		t.Fatalf("first start: exit %d: %s", first.code, first.stderr)
	}
	long := decodeTask(t, first.stdout).ID
	eventually(t, "the long task runs", func() bool { return h.status(long).PID != 0 })
	calls, _ := os.ReadFile(log)
	if !strings.Contains(string(calls), "new-session") {
		t.Fatalf("the server was not started through the logging tmux (calls: %q): the test proves nothing", calls)
	}
	if err := os.Remove(log); err != nil {
		t.Fatal(err)
	}

	bg := h.qtaskIn(h.root, env, "run", "--bg", "--json", "--", "echo background")
	if bg.code != 0 {
		t.Fatalf("run --bg: exit %d: %s", bg.code, bg.stderr)
	}
	task := h.wait(decodeTask(t, bg.stdout).ID)
	if task.Status != "completed" || strings.TrimSpace(h.output(task.ID)) != "background" {
		t.Fatalf("background task ended %s with output %q", task.Status, h.output(task.ID))
	}
	fg := h.qtaskIn(h.root, env, "run", "--", "echo foreground; exit 3")
	if fg.code != 3 || strings.TrimSpace(fg.stdout) != "foreground" {
		t.Fatalf("run in the foreground: exit %d, stdout %q, stderr %q; want 3 and its output", fg.code, fg.stdout, fg.stderr)
	}
	if calls, err := os.ReadFile(log); err == nil {
		t.Errorf("tmux clients were forked with the server up:\n%s", calls)
	}
}
