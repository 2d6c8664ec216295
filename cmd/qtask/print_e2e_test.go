package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/qtask/qtask/internal/testenv"
)

// hostile is text that would act on a terminal printed raw: clear the
// screen (ESC and C1 CSI), set the title, reverse what follows.
const hostile = "\x1b[2J\u009b2J\x1b]0;owned\a\u202e"

// assertPrintable fails if out holds anything a terminal could act on
// rather than show: C0 controls but newline, DEL, C1 controls (encoded or
// as stray bytes) and bidi controls.
func assertPrintable(t *testing.T, what, out string) {
	t.Helper()
	for i := 0; i < len(out); {
		r, n := utf8.DecodeRuneInString(out[i:])
		if r == utf8.RuneError && n == 1 && out[i] <= 0x9f || r != '\n' && r != '\t' && terminalControl(r) {
			t.Errorf("%s printed the raw control %q at byte %d:\n%q", what, out[i:i+n], i, out)
			return
		}
		i += n
	}
}

// useStateDir points the harness (and every qtask it runs) at dir.
func (h *harness) useStateDir(dir string) {
	h.state = dir
	for i, kv := range h.env {
		if strings.HasPrefix(kv, "QTASK_STATE_DIR=") {
			h.env[i] = "QTASK_STATE_DIR=" + dir
		}
	}
}

func TestValuesFromDiskArePrintedEscaped(t *testing.T) {
	testenv.SkipShort(t, "waits out two 1 s timeouts")
	t.Parallel()
	h := newHarness(t)
	// Every output path, and so every record, carries the hostile text.
	h.useStateDir(filepath.Join(h.root, "state"+hostile))
	check := func(args ...string) result {
		t.Helper()
		r := h.qtask(args...)
		assertPrintable(t, "qtask "+strings.Join(args, " ")+" (stdout)", r.stdout)
		assertPrintable(t, "qtask "+strings.Join(args, " ")+" (stderr)", r.stderr)
		return r
	}

	r := check("run", "--bg", "--", "echo hi")
	if r.code != 0 || !strings.Contains(r.stdout, `state\u001b[2J\u009b2J`) {
		t.Fatalf("run --bg: exit %d, stdout %q; want the output path with its controls escaped", r.code, r.stdout)
	}
	first := strings.TrimSuffix(strings.Fields(r.stdout)[2], ":") // "Started task ID: …"
	check("wait", "--timeout", "60s", first)
	bg := h.start("sleep 300")
	check("ls")
	check("ls", "--json")
	check("status", bg.ID)
	check("promote", bg.ID)
	check("wait", "--timeout", "1s", bg.ID)
	if r := check("run", "--timeout", "1s", "--", "sleep 300"); r.code != exitPromoted {
		t.Errorf("foreground run past its timeout: exit %d, want %d\n%s", r.code, exitPromoted, r.stderr)
	}

	// A record whose every value is hostile, as a damaged or planted
	// record could hold: its id and output path are checked on read, the
	// rest is escaped on the way out.
	id := "0000000a"
	var rec map[string]any
	if err := json.Unmarshal([]byte(mustRead(t, filepath.Join(h.state, "tasks", bg.ID+".json"))), &rec); err != nil {
		t.Fatal(err)
	}
	ended := time.Now().UTC().Format(time.RFC3339Nano)
	for k, v := range map[string]any{"id": id, "output_path": filepath.Join(h.state, "output", id+".log"),
		"name": "n" + hostile, "command": "c" + hostile, "cwd": "/" + hostile, "scope": "s" + hostile,
		"status": "failed", "error": "e" + hostile, "pane_id": "%9" + hostile, "ended_at": ended, "exit_code": 3} {
		rec[k] = v
	}
	data, err := json.Marshal(rec)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(h.state, "tasks", id+".json"), data, 0o600); err != nil {
		t.Fatal(err)
	}
	check("ls")
	check("ls", "--json")
	check("status", id)
	check("status", "--json", id)
	check("stop", id)
	check("wait", id)
	check("promote", id)
	check("logs", id) // its output file does not exist: the error names the path
	check("stop", "--all")
}

func TestOutputNeverHoldsC1Controls(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	// U+009B is CSI to a terminal: "\u009b2J" clears the screen.
	task := h.wait(h.start(`printf 'a\302\2332Jb\302\205c\n'`).ID)
	file := mustRead(t, task.OutputPath)
	assertPrintable(t, "the output file", file)
	if file != "a2Jbc\n" {
		t.Errorf("output file holds %q, want %q", file, "a2Jbc\n")
	}

	// An output file with controls planted in it (C1 encoded and as raw
	// bytes, C0 escapes): no way of reading it prints them.
	planted := "x\u009b31my\x9bz\x1b]0;t\x07\nsecond\u0085 line\x90\n"
	if err := os.WriteFile(task.OutputPath, []byte(planted), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"logs", task.ID},
		{"logs", "--tail", "1", task.ID},
		{"logs", "--tail", "5", "-f", task.ID},
		{"logs", "--offset", "1", "--limit", "2", task.ID},
		{"logs", "--offset", "2", task.ID},
		{"logs", "-f", task.ID},
	} {
		out := h.mustQtask(args...)
		assertPrintable(t, "qtask "+strings.Join(args, " "), out)
	}
	if got := h.output(task.ID); got != "x31myz]0;t\nsecond line\n" {
		t.Errorf("logs of the planted file: %q, want the text without its controls", got)
	}

	// status shows a running task's recent output.
	running := h.start("sleep 300")
	if err := os.WriteFile(running.OutputPath, []byte(planted), 0o600); err != nil {
		t.Fatal(err)
	}
	out := h.mustQtask("status", running.ID)
	assertPrintable(t, "qtask status", out)
	if !strings.Contains(out, "second line") {
		t.Errorf("status of a running task does not show its output:\n%s", out)
	}
	h.mustQtask("stop", running.ID)
}
