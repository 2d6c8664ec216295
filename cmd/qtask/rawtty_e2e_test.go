package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/qtask/qtask/tasks"
)

// runOnTTY starts `qtask run ARGS` with its stdout (and stdin) on a pty the
// test owns, as from a terminal; fg.stdout collects what the terminal is
// sent, fg.stderr qtask's stderr.
func (h *harness) runOnTTY(args ...string) *foreground {
	h.t.Helper()
	master, tty := openPTY(h.t, 24, 80)
	fg := &foreground{stdout: &syncBuffer{}, stderr: &syncBuffer{}, done: make(chan struct{})}
	fg.cmd = exec.Command(qtaskBin, append([]string{"run"}, args...)...)
	fg.cmd.Env = append(append([]string{}, h.env...), "TERM=xterm-256color")
	fg.cmd.Dir = h.root
	fg.cmd.Stdin, fg.cmd.Stdout, fg.cmd.Stderr = tty, tty, fg.stderr
	if err := fg.cmd.Start(); err != nil {
		h.t.Fatal(err)
	}
	tty.Close()
	read := make(chan struct{})
	go func() {
		defer close(read)
		buf := make([]byte, 4096)
		for {
			n, err := master.Read(buf)
			fg.stdout.Write(buf[:n])
			if err != nil {
				return // EIO: the caller is gone
			}
		}
	}()
	go func() {
		err := fg.cmd.Wait()
		if ee, ok := err.(*exec.ExitError); ok {
			fg.code = ee.ExitCode()
		}
		<-read // all it wrote has been read
		close(fg.done)
	}()
	h.t.Cleanup(func() {
		fg.cmd.Process.Kill()
		<-fg.done
		master.Close()
	})
	return fg
}

// fifoGate makes a FIFO a task's command can wait on (`read x < GATE`) until
// the test opens it.
func (h *harness) fifoGate() string {
	h.t.Helper()
	gate := filepath.Join(h.root, "gate")
	if err := unix.Mkfifo(gate, 0o600); err != nil {
		h.t.Fatal(err)
	}
	return gate
}

// openFifoGate lets a command waiting on gate go on.
func (h *harness) openFifoGate(gate string) {
	h.t.Helper()
	f, err := os.OpenFile(gate, os.O_WRONLY, 0)
	if err != nil {
		h.t.Fatal(err)
	}
	f.WriteString("go\n")
	f.Close()
}

// rawCommand prints red text and a progress bar redrawn with \r.
const rawCommand = `printf '\033[31mred\033[0m\n'; printf 'p 10%%\rp 50%%\rp 99%%\n'`

func TestForegroundOnTerminalGetsRawBytes(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	fg := h.runOnTTY("--", rawCommand)
	if code := fg.wait(t); code != 0 {
		t.Fatalf("qtask run on a terminal exited %d; stderr: %s", code, fg.stderr.String())
	}
	shown := fg.stdout.String()
	if !strings.Contains(shown, "\x1b[31mred\x1b[0m") {
		t.Errorf("the terminal did not get the command's colours: %q", shown)
	}
	if !strings.Contains(shown, "p 10%\rp 50%\rp 99%") {
		t.Errorf("the progress bar was not redrawn in place (\\r between frames): %q", shown)
	}
	if strings.Contains(shown, "qtask-end:") {
		t.Errorf("qtask's end marker reached the terminal: %q", shown)
	}
	task := h.lastTask()
	if out := h.output(task.ID); out != "red\np 99%\n" {
		t.Errorf("output file of a run on a terminal = %q, want the clean text", out)
	}
	if left, _ := filepath.Glob(filepath.Join(h.state, "tasks", "display-*")); len(left) > 0 {
		t.Errorf("display pipes left in the state directory: %v", left)
	}
}

// The questions a program asks its terminal (device attributes, cursor
// position, background colour) were answered by tmux in the pane; a copy
// reaching the caller's terminal would be answered again, into the
// caller's input, and show up at the next prompt.
func TestForegroundOnTerminalGetsNoQueries(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	fg := h.runOnTTY("--", `printf 'a\033[cb\033[6nc\033]11;?\007d\033[1me\n'`)
	if code := fg.wait(t); code != 0 {
		t.Fatalf("qtask run on a terminal exited %d; stderr: %s", code, fg.stderr.String())
	}
	shown := fg.stdout.String()
	if !strings.Contains(shown, "abcd\x1b[1me") {
		t.Errorf("the terminal got %q, want the text and the bold without the three queries", shown)
	}
	for _, query := range []string{"\x1b[c", "\x1b[6n", "\x1b]11;?"} {
		if strings.Contains(shown, query) {
			t.Errorf("the query %q reached the caller's terminal: %q", query, shown)
		}
	}
}

func TestForegroundPipedGetsCleanText(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	r := h.qtask("run", "--", rawCommand)
	if r.code != 0 {
		t.Fatalf("qtask run exited %d; stderr: %s", r.code, r.stderr)
	}
	if r.stdout != "red\np 99%\n" {
		t.Errorf("qtask run to a pipe printed %q, want the clean text", r.stdout)
	}
	if out := h.output(h.lastTask().ID); out != "red\np 99%\n" {
		t.Errorf("output file = %q, want the clean text", out)
	}
}

// A caller that stops reading its raw stream (stopped, here) never holds
// up the task or its output file.
func TestForegroundStoppedTerminalCallerNeverBlocksTask(t *testing.T) {
	t.Parallel()
	if !isolated(t) {
		return
	}
	h := newHarness(t)
	gate := h.fifoGate()
	const lines = 400000 // about 2.7 MB: more than the display pipe holds
	fg := h.runOnTTY("--", fmt.Sprintf("echo ready; read x < %s; seq 1 %d", gate, lines))
	eventually(t, "ready", func() bool { return strings.Contains(fg.stdout.String(), "ready") })
	task := h.lastTask()
	if err := fg.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	h.openFifoGate(gate)
	end := h.wait(task.ID)
	if end.Status != tasks.StatusCompleted || !end.OutputComplete {
		t.Fatalf("task under a stopped caller: %s, output complete %v (%s)", end.Status, end.OutputComplete, end.OutputLoss)
	}
	out := h.output(task.ID)
	if n := strings.Count(out, "\n"); n != lines+1 || !strings.HasSuffix(out, fmt.Sprintf("\n%d\n", lines)) {
		t.Fatalf("output file of a task whose caller was stopped: %d lines, ends %q", n, out[max(0, len(out)-40):])
	}
	fg.cmd.Process.Signal(syscall.SIGCONT)
	if code := fg.wait(t); code != 0 {
		t.Fatalf("qtask run, continued, exited %d; stderr: %s", code, fg.stderr.String())
	}
	if shown := fg.stdout.String(); !strings.Contains(shown, "[qtask: output skipped here, this terminal was not keeping up; `qtask logs "+task.ID+"` has all of it]") {
		t.Errorf("the terminal was not told that output was skipped; it ends %q", shown[max(0, len(shown)-200):])
	}
}

// A terminal caller released by a promote, or killed, stops reading; the
// task carries on printing and its output file is complete.
func TestForegroundTerminalCallerLeavesTaskUntouched(t *testing.T) {
	t.Parallel()
	for _, leave := range []string{"promote", "SIGKILL"} {
		t.Run(leave, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			gate := h.fifoGate()
			const lines = 300000
			// Cut off while its cursor is hidden and its colour set.
			fg := h.runOnTTY("--", fmt.Sprintf("printf '\\033[?25l\\033[32mready\\n'; read x < %s; seq 1 %d", gate, lines))
			eventually(t, "ready", func() bool { return strings.Contains(fg.stdout.String(), "\x1b[32mready") })
			task := h.lastTask()
			if leave == "promote" {
				h.mustQtask("promote", task.ID)
				if code := fg.wait(t); code != exitPromoted {
					t.Fatalf("promoted caller exited %d, want %d; stderr: %s", code, exitPromoted, fg.stderr.String())
				}
				shown := fg.stdout.String()
				if !strings.Contains(shown, "promoted to background as "+task.ID) {
					t.Errorf("promoted caller showed %q", shown)
				}
				if i, j := strings.Index(shown, "\x1b[0m\x1b[?25h"), strings.Index(shown, "promoted to"); i < 0 || i > j {
					t.Errorf("promoted caller did not restore the terminal's colour and cursor before its message: %q", shown)
				}
			} else {
				fg.cmd.Process.Kill()
				fg.wait(t)
			}
			h.openFifoGate(gate)
			end := h.wait(task.ID)
			out := h.output(task.ID)
			if end.Status != tasks.StatusCompleted || !end.OutputComplete || strings.Count(out, "\n") != lines+1 || !strings.HasSuffix(out, fmt.Sprintf("\n%d\n", lines)) {
				t.Fatalf("task after its terminal caller left (%s): %s, complete %v, %d lines", leave, end.Status, end.OutputComplete, strings.Count(out, "\n"))
			}
		})
	}
}
