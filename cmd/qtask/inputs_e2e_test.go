package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestWaitTimeoutZeroChecksOnce: `wait --timeout 0` is a poll, not "wait
// forever" (what a 0 meant before, to a script's surprise).
func TestWaitTimeoutZeroChecksOnce(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	running := h.start("sleep 300")
	done := h.start("exit 3")
	h.wait(done.ID)
	w := h.spawn(nil, "wait", "--timeout", "0", running.ID)
	if code := w.wait(t); code != exitTimeout || !strings.Contains(w.stderr.String(), "still running: "+running.ID) {
		t.Errorf("wait --timeout 0 on a running task: exit %d, stderr %q; want %d at once", code, w.stderr.String(), exitTimeout)
	}
	if r := h.qtask("wait", "--timeout", "0", done.ID); r.code != 3 {
		t.Errorf("wait --timeout 0 on a task that exited 3: exit %d, stderr %q", r.code, r.stderr)
	}
	h.mustQtask("stop", running.ID)
}

// TestMalformedInputIsAUsageError: each of these once ran (or reached tmux)
// instead of saying what was wrong; now one line and exit 2, before
// anything is created.
func TestMalformedInputIsAUsageError(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	done := h.wait(h.start("echo hi").ID)
	cases := []struct {
		args []string
		want string // in stderr
	}{
		{[]string{"logs", "--tail", "-5", done.ID}, "--tail must not be negative"},
		{[]string{"logs", "-n", "-1", done.ID}, "--tail must not be negative"},
		{[]string{"run", "--bg", "--", "   "}, "no command given"},
		{[]string{"run", "--", "\t"}, "no command given"},
		{[]string{"monitor", "--", " "}, "no command given (only whitespace): put it after --, e.g. qtask monitor -- make test (see 'qtask monitor --help')"},
		{[]string{"run", "--bg", "--name", strings.Repeat("n", 20000), "--", "true"}, "over the limit of 256"},
		{[]string{"run", "--bg", "--name", "red\x1b[31mname", "--", "true"}, "control character U+001B"},
		{[]string{"run", "--bg", "--name", "two\nlines", "--", "true"}, "control character U+000A"},
		{[]string{"run", "--bg", "--name", "   ", "--", "true"}, "task name is empty"},
		{[]string{"status", ""}, "task id is empty"},
		{[]string{"stop", done.ID, ""}, "task id is empty"},
	}
	for _, c := range cases {
		r := h.qtask(c.args...)
		shown := strings.Join(c.args, " ")
		if len(shown) > 80 {
			shown = shown[:80] + "…"
		}
		if r.code != exitUsage || !strings.Contains(r.stderr, c.want) || strings.Contains(r.stderr, "tmux") {
			t.Errorf("qtask %q: exit %d, stderr %q; want exit 2 saying %q", shown, r.code, r.stderr, c.want)
		}
	}
	if list := h.mustQtask("ls", "--json"); strings.Count(list, `"id"`) != 1 {
		t.Errorf("a refused run created a task:\n%s", list)
	}
	outputs, _ := os.ReadDir(filepath.Join(h.state, "output"))
	if len(outputs) != 1 {
		t.Errorf("refused runs left output files: %d files, want 1", len(outputs))
	}
}

func TestLogsOffsetPastTheEndPrintsNothing(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	done := h.wait(h.start("echo hi").ID)
	for _, offset := range []string{"3", "100", "99999999999999999"} {
		if r := h.qtask("logs", "--offset", offset, done.ID); r.code != 0 || r.stdout != "" || r.stderr != "" {
			t.Errorf("logs --offset %s of a 3-byte output: exit %d, stdout %q, stderr %q; want nothing, exit 0", offset, r.code, r.stdout, r.stderr)
		}
	}
}

// TestFailedStartLeavesNothing: tmux exits 0 but says on stderr that it
// could not create its socket; the user hears tmux's reason (it once was
// `invalid pane id ""`), and no record or empty output file stays behind.
func TestFailedStartLeavesNothing(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	missing := filepath.Join(h.root, "missing", "tmux.sock")
	r := h.qtaskIn(h.root, []string{"QTASK_TMUX_SOCKET=" + missing}, "run", "--bg", "--", "true")
	if r.code != exitError || !strings.Contains(r.stderr, "error creating "+missing) || strings.Contains(r.stderr, "pane id") {
		t.Errorf("start on a socket in a missing directory: exit %d, stderr %q; want tmux's reason", r.code, r.stderr)
	}
	for _, dir := range []string{"tasks", "output"} {
		if entries, _ := os.ReadDir(filepath.Join(h.state, dir)); len(entries) != 0 {
			t.Errorf("a failed start left %d files in %s/: %v", len(entries), dir, entries)
		}
	}
}

// TestFollowAcrossCapRotationMarksDrops stops a `logs -f` while its task
// prints far more than the output cap keeps: when it resumes, the output it
// never saw is announced with its size, not skipped in silence.
func TestFollowAcrossCapRotationMarksDrops(t *testing.T) {
	t.Parallel()
	if !isolated(t) {
		return
	}
	h := newHarness(t)
	h.writeConfig("output_max_bytes = \"64KiB\"\n")
	gate := filepath.Join(h.root, "gate")
	task := h.start("echo start; while [ ! -e " + gate + " ]; do sleep 0.01; done; seq 1 100000; echo end")
	follow := h.spawn(nil, "logs", "-f", task.ID)
	eventually(t, "logs -f to print the first line", func() bool { return follow.stdout.String() == "start\n" })
	if err := follow.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(gate, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	h.wait(task.ID)
	follow.cmd.Process.Signal(syscall.SIGCONT)
	if code := follow.wait(t); code != 0 {
		t.Fatalf("logs -f: exit %d, stderr %q", code, follow.stderr.String())
	}
	out := follow.stdout.String()
	file, err := os.ReadFile(task.OutputPath)
	if err != nil {
		t.Fatal(err)
	}
	var limit, dropped int64
	header, content, _ := strings.Cut(string(file), "\n")
	if _, err := fmt.Sscanf(header, "[qtask: output capped at %d bytes; %d earlier bytes dropped]", &limit, &dropped); err != nil {
		t.Fatalf("the output was not capped (header %q): the test misses its case", header)
	}
	want := fmt.Sprintf("start\n[qtask: %d bytes dropped by the output cap]\n%s", dropped-int64(len("start\n")), content)
	if out != want {
		t.Errorf("logs -f across rotations printed %d bytes beginning %q; want %d bytes: the first line, the dropped count, then the file",
			len(out), out[:min(len(out), 120)], len(want))
	}
}
