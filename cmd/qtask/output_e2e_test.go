package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/qtask/qtask/tasks"
	"github.com/qtask/qtask/tasks/capture"
)

// captureViaCat makes the tasks this harness starts keep a cat between
// tmux and the wrapper (QTASK_CAPTURE=cat, the path taken where the kernel
// refuses pidfd_getfd): a capture process a test can kill or stop.
func (h *harness) captureViaCat() {
	h.env = append(h.env, "QTASK_CAPTURE=cat")
}

// capturePIDs lists the processes holding the harness server's pane pipes:
// the tmux server's children that are not the first process of a pane
// (tmux starts a pipe-pane command as its own child).
func (h *harness) capturePIDs() []int {
	h.t.Helper()
	server, err := h.tmux("display-message", "-p", "#{pid}")
	if err != nil {
		h.t.Fatalf("tmux server pid: %v", err)
	}
	panes, err := h.tmux("list-panes", "-a", "-F", "#{pane_pid}")
	if err != nil {
		h.t.Fatalf("list panes: %v", err)
	}
	isPane := map[string]bool{}
	for _, p := range strings.Fields(panes) {
		isPane[p] = true
	}
	entries, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || isPane[e.Name()] {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// After the command name: state, ppid.
		f := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
		if len(f) > 1 && f[1] == server && f[0] != "Z" {
			pids = append(pids, pid)
		}
	}
	return pids
}

// outputState is what `status --json` says of the task's output: whether
// it is complete (false if the field is missing) and what was lost.
func (h *harness) outputState(id string) (complete bool, loss string) {
	h.t.Helper()
	var st struct {
		OutputComplete *bool  `json:"output_complete"`
		OutputLoss     string `json:"output_loss"`
	}
	if err := json.Unmarshal([]byte(h.mustQtask("status", "--json", id)), &st); err != nil {
		h.t.Fatal(err)
	}
	return st.OutputComplete != nil && *st.OutputComplete, st.OutputLoss
}

// startGatedOutput starts a task that prints "before", waits for the file gate,
// then prints 20 numbered lines and exits 0. It returns once "before" is in
// the output file.
func (h *harness) startGatedOutput() (task tasks.Task, gate string) {
	h.t.Helper()
	gate = filepath.Join(h.root, "gate")
	task = h.start("echo before; while [ ! -e '" + gate + "' ]; do sleep 0.02; done; " +
		"i=0; while [ $i -lt 20 ]; do i=$((i+1)); echo after $i; done")
	eventually(h.t, "first line in the output", func() bool { return strings.Contains(h.output(task.ID), "before") })
	return task, gate
}

// startGatedCapture is startGatedOutput for a harness that asked for a cat
// (captureViaCat), with the task's capture process.
func (h *harness) startGatedCapture() (task tasks.Task, gate string, capture int) {
	h.t.Helper()
	task, gate = h.startGatedOutput()
	var pids []int
	eventually(h.t, "the task's capture process", func() bool { pids = h.capturePIDs(); return len(pids) == 1 })
	return task, gate, pids[0]
}

// A task's output reaches its wrapper with no process in between: once the
// pipe's shell has handed the pipe over (taken by pidfd_getfd, or, as a
// machine that refuses it does, passed by the handover helper), the tmux
// server has no child but the panes' first processes, and the output
// still arrives whole.
func TestNoCaptureProcessPerTask(t *testing.T) {
	for _, mode := range []string{"", "handover"} {
		t.Run("QTASK_CAPTURE="+mode, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			h.env = append(h.env, "QTASK_CAPTURE="+mode)
			task, gate := h.startGatedOutput()
			eventually(t, "the pipe's shell to exit", func() bool { return len(h.capturePIDs()) == 0 })
			os.WriteFile(gate, nil, 0o600)
			if end := h.wait(task.ID); end.Status != tasks.StatusCompleted || !strings.HasSuffix(h.output(task.ID), "after 19\nafter 20\n") {
				t.Errorf("settled as %s with output:\n%s", end.StatusText(), h.output(task.ID))
			}
			if complete, loss := h.outputState(task.ID); !complete {
				t.Errorf("output_complete false (%q) for a task whose output all arrived", loss)
			}
		})
	}
}

// A pane's pipe that someone else closes (`pipe-pane` with no command on
// the task's pane) is replaced: the output that comes later is in the
// file, the gap is marked there, and the task says its output is
// incomplete.
func TestClosedPipeIsReplacedAndTheGapMarked(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	task, gate := h.startGatedOutput()
	if out, err := h.tmux("pipe-pane", "-t", task.PaneID); err != nil {
		t.Fatalf("close the pane's pipe: %v: %s", err, out)
	}
	h.checkGapMarked(task, gate, "tmux closed the pane's pipe")
}

// A capture that is SIGKILLed mid-task is replaced: the output that comes
// later is in the file, the gap is marked there, and the task says its output
// is incomplete.
func TestKilledCaptureIsReplacedAndTheGapMarked(t *testing.T) {
	t.Parallel()
	if !isolated(t) {
		return
	}
	h := newHarness(t)
	h.captureViaCat()
	task, gate, capture := h.startGatedCapture()
	syscall.Kill(capture, syscall.SIGKILL)
	h.checkGapMarked(task, gate, "the capture process exited")
}

// checkGapMarked checks a task whose capture was cut after "before", and
// releases its gate: the gap is marked in the file and the task for why,
// the output after it is whole.
func (h *harness) checkGapMarked(task tasks.Task, gate, why string) {
	h.t.Helper()
	eventually(h.t, "the gap to be marked in the output file", func() bool {
		return strings.Contains(h.output(task.ID), "[qtask: output between ")
	})
	if complete, loss := h.outputState(task.ID); complete || !strings.Contains(loss, "lost: "+why) {
		h.t.Errorf("while running, status says output_complete %v, output_loss %q; want false and the loss", complete, loss)
	}
	os.WriteFile(gate, nil, 0o600)
	end := h.wait(task.ID)
	out := h.output(task.ID)
	if !strings.HasPrefix(out, "before\n[qtask: output between ") || !strings.HasSuffix(out, "after 19\nafter 20\n") {
		h.t.Errorf("output after the capture was cut is missing or the gap is unmarked:\n%s", out)
	}
	if complete, loss := h.outputState(task.ID); end.Status != tasks.StatusCompleted || complete || !strings.Contains(loss, why) {
		h.t.Errorf("settled as %s, output_complete %v, output_loss %q; want completed, false, the loss", end.Status, complete, loss)
	}
	if text := h.mustQtask("status", task.ID); !strings.Contains(text, "output between ") {
		h.t.Errorf("status does not mention the lost output:\n%s", text)
	}
}

// A capture that stops (SIGSTOP) while the command ends does not keep the
// task running, nor let it settle as if its output were whole: it is
// replaced, and the loss is said in the file and the task.
func TestStalledCaptureIsReplacedAndTheLossSaid(t *testing.T) {
	t.Parallel()
	if !isolated(t) {
		return
	}
	h := newHarness(t)
	h.captureViaCat()
	task, gate, capture := h.startGatedCapture()
	syscall.Kill(capture, syscall.SIGSTOP)
	defer syscall.Kill(capture, syscall.SIGKILL)
	os.WriteFile(gate, nil, 0o600)
	end := h.wait(task.ID)
	out := h.output(task.ID)
	if !strings.HasPrefix(out, "before\n") || !strings.Contains(out, "[qtask: output between ") {
		t.Errorf("a stalled capture's loss is not marked in the output:\n%s", out)
	}
	if complete, loss := h.outputState(task.ID); end.Status != tasks.StatusCompleted || complete || loss == "" {
		t.Errorf("settled as %s, output_complete %v, output_loss %q; want completed, false, the loss", end.Status, complete, loss)
	}
}

// A task whose output all arrived says so.
func TestCompleteOutputIsSaidComplete(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	id := h.start("echo one; echo two").ID
	h.wait(id)
	if complete, loss := h.outputState(id); !complete || loss != "" {
		t.Errorf("output_complete %v, output_loss %q; want true and none", complete, loss)
	}
}

// The wrapper's own runtime settings (it runs with GOMAXPROCS=1 to save
// memory) never reach the command, which gets the caller's environment.
func TestWrapperSettingsDoNotReachTheCommand(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	id := h.start("echo GOMAXPROCS=${GOMAXPROCS-unset}").ID
	h.wait(id)
	if out := h.output(id); out != "GOMAXPROCS=unset\n" {
		t.Errorf("a command started without GOMAXPROCS sees %q", out)
	}
	r := h.qtaskIn(h.root, []string{"GOMAXPROCS=7"}, "run", "--bg", "--json", "--", "echo GOMAXPROCS=${GOMAXPROCS-unset}")
	id = decodeTask(t, r.stdout).ID
	h.wait(id)
	if out := h.output(id); out != "GOMAXPROCS=7\n" {
		t.Errorf("a command started with the caller's GOMAXPROCS=7 sees %q", out)
	}
}

// wrapperArgv0 starts `sleep 300` with the qtask binary bin and returns the
// program its wrapper runs as.
func (h *harness) wrapperArgv0(bin string) string {
	h.t.Helper()
	cmd := exec.Command(bin, "run", "--bg", "--json", "--", "sleep 300")
	cmd.Env = h.env
	out, err := cmd.Output()
	if err != nil {
		h.t.Fatalf("%s run --bg: %v", bin, err)
	}
	id := decodeTask(h.t, string(out)).ID
	var rec struct {
		WrapperPID int `json:"wrapper_pid"`
		PID        int `json:"pid"`
	}
	eventually(h.t, "the wrapper to run the command", func() bool {
		data, _ := os.ReadFile(filepath.Join(h.state, "tasks", id+".json"))
		return json.Unmarshal(data, &rec) == nil && rec.WrapperPID != 0 && rec.PID != 0
	})
	argv, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", rec.WrapperPID))
	h.mustQtask("stop", id)
	return string(bytes.SplitN(argv, []byte{0}, 2)[0])
}

// A task's wrapper is qtask-exec, the wrapper alone, when it is installed
// beside qtask (each running task then costs less memory); without it,
// qtask itself.
func TestWrapperIsTheSmallBinaryWhenInstalled(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	small := filepath.Join(filepath.Dir(qtaskBin), "qtask-exec")
	if got := h.wrapperArgv0(qtaskBin); got != small {
		t.Errorf("wrapper runs as %q, want %q beside qtask", got, small)
	}
	alone := filepath.Join(h.root, "alone", "qtask")
	os.MkdirAll(filepath.Dir(alone), 0o700)
	data, err := os.ReadFile(qtaskBin)
	if err != nil {
		t.Fatal(err)
	}
	writeExecutable(t, alone, data)
	if got := h.wrapperArgv0(alone); got != alone {
		t.Errorf("without qtask-exec beside it, the wrapper runs as %q, want qtask itself (%q)", got, alone)
	}
}

// `qtask _handover NAME` and `qtask-exec _handover NAME`, which a pane
// pipe's shell becomes where the kernel will not let the wrapper take the
// pipe, pass their stdin over the abstract unix socket NAME and exit 0.
func TestHandoverCommandsPassTheirStdin(t *testing.T) {
	for _, bin := range []string{qtaskBin, filepath.Join(filepath.Dir(qtaskBin), "qtask-exec")} {
		t.Run(filepath.Base(bin), func(t *testing.T) {
			name := fmt.Sprintf("qtask-pipe-test%d-%s", os.Getpid(), filepath.Base(bin))
			l, err := net.ListenUnix("unix", &net.UnixAddr{Name: "@" + name, Net: "unix"})
			if err != nil {
				t.Fatal(err)
			}
			defer l.Close()
			fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
			if err != nil {
				t.Fatal(err)
			}
			tmuxEnd, pipe := os.NewFile(uintptr(fds[0]), "tmux end"), os.NewFile(uintptr(fds[1]), "pipe")
			defer tmuxEnd.Close()
			helper := exec.Command(bin, capture.HandoverVerb, name)
			helper.Stdin = pipe
			out, err := helper.CombinedOutput()
			pipe.Close()
			if err != nil {
				t.Fatalf("%s %s: %v\n%s", bin, capture.HandoverVerb, err, out)
			}
			l.SetDeadline(time.Now().Add(5 * time.Second))
			conn, err := l.AcceptUnix()
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			oob := make([]byte, syscall.CmsgSpace(4))
			_, oobn, _, _, err := conn.ReadMsgUnix(make([]byte, 1), oob)
			if err != nil {
				t.Fatal(err)
			}
			msgs, _ := syscall.ParseSocketControlMessage(oob[:oobn])
			if len(msgs) != 1 {
				t.Fatalf("%d control messages, want the pipe", len(msgs))
			}
			got, err := syscall.ParseUnixRights(&msgs[0])
			if err != nil || len(got) != 1 {
				t.Fatalf("rights %v, %v; want one descriptor", got, err)
			}
			passed := os.NewFile(uintptr(got[0]), "passed")
			defer passed.Close()
			tmuxEnd.Write([]byte("pane output\n"))
			buf := make([]byte, 64)
			passed.SetReadDeadline(time.Now().Add(5 * time.Second))
			if n, _ := passed.Read(buf); string(buf[:n]) != "pane output\n" {
				t.Errorf("the passed descriptor read %q, want the pane's output", buf[:n])
			}
		})
	}
}
