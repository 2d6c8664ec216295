package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/qtask/qtask/internal/testenv"
	"github.com/qtask/qtask/tasks"
)

// mountStateTmpfs puts the harness's state directory on a tmpfs of the
// given size (mount(8) syntax), unmounted when the test ends. It needs the
// private mount namespace isolated() gives.
func (h *harness) mountStateTmpfs(size string) {
	h.t.Helper()
	if err := os.MkdirAll(h.state, 0o700); err != nil {
		h.t.Fatal(err)
	}
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size+",mode=0700", "tmpfs", h.state).CombinedOutput(); err != nil {
		h.t.Fatalf("mount tmpfs: %v\n%s", err, out)
	}
	h.t.Cleanup(func() { exec.Command("umount", "-l", h.state).Run() })
}

// fillState fills the state directory's file system to the last byte and
// returns a function that frees the space again. Called again, it takes
// what was freed since: the filler grows (one free removes it all).
func (h *harness) fillState() (free func()) {
	h.t.Helper()
	path := filepath.Join(h.state, "filler")
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		h.t.Fatal(err)
	}
	defer f.Close()
	block := make([]byte, 64<<10)
	for {
		_, err := f.Write(block)
		if errors.Is(err, syscall.ENOSPC) {
			break // a short write took what was left
		}
		if err != nil {
			h.t.Fatalf("fill the state file system: %v", err)
		}
	}
	return func() {
		if err := os.Remove(path); err != nil {
			h.t.Fatal(err)
		}
	}
}

// A state file system that is full for 1.5 s in the middle of a task costs
// only what did not fit in memory: the output before and after is in the
// file, and one note says how many bytes were lost and why.
func TestFullDiskLosesOutputOnlyWithANote(t *testing.T) {
	testenv.SkipShort(t, "waits 1.5 s for the capture to notice a full disk")
	t.Parallel()
	if !isolated(t) {
		return
	}
	h := newHarness(t)
	h.mountStateTmpfs("12m")
	gate1, gate2 := filepath.Join(h.root, "gate1"), filepath.Join(h.root, "gate2")
	// 60 lines of 60 KB: 10 before the disk fills, 40 (2.4 MB, more than
	// the capture keeps in memory) while it is full, then a short line that
	// tells the test tmux has passed them all on, and 10 after.
	const width, sentinel = 60000, "forty lines printed"
	lines := func(from, to int) string {
		return fmt.Sprintf(`i=%d; while [ $i -lt %d ]; do i=$((i+1)); echo "line $i $x"; done; `, from, to)
	}
	await := func(gate string) string { return "while [ ! -e '" + gate + "' ]; do sleep 0.02; done; " }
	task := h.start(fmt.Sprintf("x=$(head -c %d /dev/zero | tr '\\0' x); ", width) +
		lines(0, 10) + await(gate1) + lines(10, 50) + "echo " + sentinel + "; " + await(gate2) + lines(50, 60))
	eventually(t, "the first 10 lines in the output", func() bool {
		fi, err := os.Stat(task.OutputPath)
		return err == nil && fi.Size() >= 10*width
	})
	free := h.fillState()
	full := time.Now()
	os.WriteFile(gate1, nil, 0o600) // gates live outside the full file system
	eventually(t, "tmux to have passed the 40 lines on", func() bool {
		screen, _ := h.tmux("capture-pane", "-p", "-t", task.PaneID)
		return strings.Contains(screen, sentinel)
	})
	time.Sleep(time.Until(full.Add(1500 * time.Millisecond)))
	free()
	os.WriteFile(gate2, nil, 0o600)
	end := h.wait(task.ID)

	out := h.output(task.ID)
	notes := regexp.MustCompile(`(?m)^\[qtask: (\d+) bytes lost: no space left on device\]\n`).FindAllStringSubmatchIndex(out, -1)
	if len(notes) != 1 {
		t.Fatalf("want exactly one loss note in the output, found %d; output, x's elided:\n%s", len(notes), regexp.MustCompile(`x{20,}`).ReplaceAllString(out, "x…"))
	}
	lost, _ := strconv.Atoi(out[notes[0][2]:notes[0][3]])
	total := len(sentinel) + 1
	for i := 1; i <= 60; i++ {
		total += len(fmt.Sprintf("line %d ", i)) + width + 1
	}
	if kept := len(out) - (notes[0][1] - notes[0][0]); kept+lost != total {
		t.Errorf("the file keeps %d bytes and the note says %d lost: %d, want the %d the command printed", kept, lost, kept+lost, total)
	}
	for _, i := range []int{1, 10, 51, 60} {
		if want := fmt.Sprintf("line %d %s\n", i, strings.Repeat("x", width)); !strings.Contains(out, want) {
			t.Errorf("line %d is not in the output whole", i)
		}
	}
	if complete, loss := h.outputState(task.ID); end.ExitCode == nil || *end.ExitCode != 0 || complete ||
		!strings.Contains(loss, "bytes lost: no space left on device") {
		t.Errorf("task ended %s, output_complete %v, output_loss %q; want exit 0, false and the loss", end.StatusText(), complete, loss)
	}
}

// A task that ends while the state file system is full waits to settle
// (ls says why) and, once space returns, settles with its real exit code,
// never as lost, and with its last words in the file: a capture that
// cannot write yet is slow, not done.
func TestTaskEndingOnAFullDiskSettlesWithItsExitCode(t *testing.T) {
	t.Parallel()
	if !isolated(t) {
		return
	}
	h := newHarness(t)
	h.mountStateTmpfs("4m")
	gate := filepath.Join(h.root, "gate")
	task := h.start("echo started; while [ ! -e '" + gate + "' ]; do sleep 0.02; done; echo last words; exit 3")
	eventually(t, "the first line in the output", func() bool { return strings.Contains(h.output(task.ID), "started") })
	free := h.fillState()
	os.WriteFile(gate, nil, 0o600)
	eventually(t, "ls to show the task settling", func() bool {
		return strings.Contains(h.mustQtask("ls"), "running (settling: no space left on device)")
	})
	var st struct {
		Settling string `json:"settling"`
	}
	if json.Unmarshal([]byte(h.mustQtask("status", "--json", task.ID)), &st); st.Settling != "no space left on device" {
		t.Errorf("status --json says settling %q, want the reason", st.Settling)
	}
	free()
	end := h.wait(task.ID)
	if end.Status != tasks.StatusFailed || end.ExitCode == nil || *end.ExitCode != 3 || end.Error != "exited with code 3" {
		t.Errorf("after space returned the task ended %q (exit %v), want failed: exited with code 3", end.StatusText(), deref(end.ExitCode))
	}
	if out := h.output(task.ID); out != "started\nlast words\n" {
		t.Errorf("output when wait returned: %q, want both lines", out)
	}
	if complete, loss := h.outputState(task.ID); !complete || loss != "" {
		t.Errorf("output_complete %v, output_loss %q; want true and none: nothing was lost", complete, loss)
	}
}

// A reader that finds a lost task but cannot write its settle says so
// instead of hiding it.
func TestReaderThatCannotSettleWarns(t *testing.T) {
	t.Parallel()
	if !isolated(t) {
		return
	}
	h := newHarness(t)
	h.mountStateTmpfs("4m")
	// A session of its own keeps the server up when the task's window
	// closes.
	if out, err := h.tmux("new-session", "-d", "-s", "keep", "sleep 300"); err != nil {
		t.Fatalf("tmux new-session: %v: %s", err, out)
	}
	task := h.start("sleep 300")
	rec := h.awaitWrapper(task.ID)
	free := h.fillState()
	syscall.Kill(rec.WrapperPID, syscall.SIGKILL)
	awaitDead(t, rec.WrapperPID)
	// What the wrapper was doing when it was killed may have freed a page
	// (a file it was replacing, one it held open): the settle would fit
	// in it. Nothing of the task's runs now; fill what is free again.
	h.fillState()
	r := h.qtask("ls")
	if r.code != 0 || !strings.Contains(r.stderr, "qtask: warning: task "+task.ID+" is lost") ||
		!strings.Contains(r.stderr, "no space left on device") {
		t.Errorf("ls with a lost task it cannot settle: exit %d, stderr %q; want exit 0 and a warning naming the task and the reason", r.code, r.stderr)
	}
	free()
	if st := h.status(task.ID); st.Status != tasks.StatusFailed || !strings.HasPrefix(st.Error, "lost: ") {
		t.Errorf("once space returned the lost task is %q, want failed: lost", st.StatusText())
	}
}

// wrapperRecord is the part of a task's record that names its processes.
type wrapperRecord struct {
	WrapperPID int `json:"wrapper_pid"`
	PID        int `json:"pid"`
}

// awaitWrapper reads the task's record until its wrapper runs the command.
func (h *harness) awaitWrapper(id string) wrapperRecord {
	h.t.Helper()
	var rec wrapperRecord
	eventually(h.t, "the wrapper to run the command", func() bool {
		data, _ := os.ReadFile(filepath.Join(h.state, "tasks", id+".json"))
		return json.Unmarshal(data, &rec) == nil && rec.WrapperPID != 0 && rec.PID != 0
	})
	return rec
}

// A wrapper whose state directory is deleted under it (rm -rf of the
// state, a test's temp dir) has nowhere to settle its task: it exits when
// the command ends instead of retrying for ten minutes as it does for a
// full disk, which would leave a process behind for nothing.
func TestWrapperWithoutStateDirExits(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	// A session of its own keeps the server up when the task's pane closes.
	if out, err := h.tmux("new-session", "-d", "-s", "keep", "sleep 300"); err != nil {
		t.Fatalf("tmux new-session: %v: %s", err, out)
	}
	task := h.start("sleep 300")
	rec := h.awaitWrapper(task.ID)
	// The wrapper may still be adding files (its capture's pipe) while the
	// tree goes: rm -rf again until it is gone.
	eventually(t, "the state directory to be removed", func() bool { return os.RemoveAll(h.state) == nil })
	if out, err := h.tmux("kill-pane", "-t", task.PaneID); err != nil {
		t.Fatalf("tmux kill-pane: %v: %s", err, out)
	}
	awaitDead(t, rec.PID)
	awaitDead(t, rec.WrapperPID)
}
