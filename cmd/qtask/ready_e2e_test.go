package main

import (
	"bytes"
	"context"
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

	"github.com/qtask/qtask/internal/testenv"
)

// qtaskAsync starts qtask and returns at once; the channel gets its result
// when it exits (code -1 and the error in stderr if it could not run or
// hung past qtaskDeadline). For tests that must see a command still
// waiting before they let it finish.
func (h *harness) qtaskAsync(args ...string) <-chan result {
	_, done := h.qtaskProcess(args...)
	return done
}

// qtaskProcess is qtaskAsync that also gives the running qtask process.
func (h *harness) qtaskProcess(args ...string) (*os.Process, <-chan result) {
	done := make(chan result, 1)
	ctx, cancel := context.WithTimeout(context.Background(), qtaskDeadline)
	cmd := exec.CommandContext(ctx, qtaskBin, args...)
	cmd.Env, cmd.Dir = h.env, h.root
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Start(); err != nil {
		cancel()
		h.t.Fatal(err)
	}
	go func() {
		defer cancel()
		err := cmd.Wait()
		code := cmd.ProcessState.ExitCode()
		if ctx.Err() != nil {
			code, errOut = -1, *bytes.NewBufferString(fmt.Sprintf("hung: killed after %s; %v", qtaskDeadline, err))
		}
		done <- result{out.String(), errOut.String(), code}
	}()
	return cmd.Process, done
}

// stillWaiting fails the test if the command behind done has returned.
func stillWaiting(t *testing.T, done <-chan result, what string) {
	t.Helper()
	select {
	case r := <-done:
		t.Fatalf("%s returned before it should have: exit %d\nstdout: %s\nstderr: %s", what, r.code, r.stdout, r.stderr)
	default:
	}
}

// onlyTask is the id of the one task in the harness's world, once there
// is one.
func (h *harness) onlyTask() string {
	h.t.Helper()
	var id string
	eventually(h.t, "the task to be started", func() bool {
		id = strings.TrimSpace(h.mustQtask("ls", "-q"))
		return id != ""
	})
	return id
}

// gateCommand prints before, waits for the file gate, prints after and
// keeps running.
func gateCommand(gate, before, after string) string {
	return fmt.Sprintf("echo '%s'; while [ ! -e %s ]; do sleep 0.02; done; echo '%s'; exec sleep 300", before, gate, after)
}

// TestRunReadyReturnsWhenTheLineIsPrinted: `run --bg --ready` does not
// return while the task only boots, and returns (exit 0, the task's id,
// the matched line) once a line matches, the task still running.
func TestRunReadyReturnsWhenTheLineIsPrinted(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	gate := filepath.Join(h.root, "gate")
	done := h.qtaskAsync("run", "--bg", "--ready", "ready on port [0-9]+", "--", gateCommand(gate, "booting", "server ready on port 8123"))
	id := h.onlyTask()
	eventually(t, "the task to print its first line", func() bool { return strings.Contains(h.output(id), "booting") })
	stillWaiting(t, done, "run --ready, with only a line that does not match printed,")
	if err := os.WriteFile(gate, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	r := <-done
	if r.code != 0 {
		t.Fatalf("run --ready: exit %d, want 0\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	for _, want := range []string{"Started task " + id, "Ready:   matched: server ready on port 8123"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("run --ready printed %q, want it to say %q", r.stdout, want)
		}
	}
	if st := h.status(id); !st.Running() {
		t.Errorf("after the gate the task is %s, want it running", st.StatusText())
	}
}

// TestRunReadyReportsDeath: a task that dies before its line makes `run
// --ready` exit 3 at once, with one line saying it ended and how, and its
// last lines of output (where the reason is).
func TestRunReadyReportsDeath(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	r := h.qtask("run", "--bg", "--ready", "listening", "--ready-timeout", "90s", "--",
		"echo booting; echo 'fatal: address already in use' >&2; exit 7")
	if r.code != exitNotReady {
		t.Fatalf("run --ready on a task that dies: exit %d, want %d\nstdout: %s\nstderr: %s", r.code, exitNotReady, r.stdout, r.stderr)
	}
	lines := strings.Split(strings.TrimSuffix(r.stderr, "\n"), "\n")
	if len(lines) < 3 || !strings.Contains(lines[0], "ended before it was ready") || !strings.Contains(lines[0], "exited with code 7") ||
		!strings.Contains(lines[0], `a line matching "listening"`) {
		t.Fatalf("stderr %q: want a first line saying the task ended before it was ready, with its exit code and the gate", r.stderr)
	}
	if !strings.Contains(r.stderr, "  booting\n") || !strings.Contains(r.stderr, "  fatal: address already in use\n") {
		t.Errorf("stderr %q: want the task's last lines of output", r.stderr)
	}
	if r.stdout != "" {
		t.Errorf("stdout %q: a gate that failed prints nothing there", r.stdout)
	}
}

// TestRunReadyTimeoutLeavesTaskRunning: a gate that times out exits 124
// saying so, with the output so far, and leaves the task running.
func TestRunReadyTimeoutLeavesTaskRunning(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	r := h.qtask("run", "--bg", "--ready", "listening", "--ready-timeout", "1s", "--", "echo booting; exec sleep 300")
	if r.code != exitTimeout {
		t.Fatalf("run --ready past its timeout: exit %d, want %d\nstderr: %s", r.code, exitTimeout, r.stderr)
	}
	if !strings.Contains(r.stderr, "not ready after 1s") || !strings.Contains(r.stderr, "still running") || !strings.Contains(r.stderr, "  booting\n") {
		t.Errorf("stderr %q: want it to say the task was not ready after 1s, still runs, and its output", r.stderr)
	}
	if st := h.status(h.onlyTask()); !st.Running() {
		t.Errorf("after the timeout the task is %s, want it still running", st.StatusText())
	}
}

// TestRunReadyTimeoutKillStopsEverything: with --ready-timeout-kill the
// task is stopped through the owned-stop path: failed "not ready after",
// and neither the command nor its children are left alive.
func TestRunReadyTimeoutKillStopsEverything(t *testing.T) {
	t.Parallel()
	if !isolated(t) {
		return
	}
	h := newHarness(t)
	r := h.qtask("run", "--bg", "--ready", "listening", "--ready-timeout", "1s", "--ready-timeout-kill", "--",
		"sleep 300 & echo child $!; wait")
	if r.code != exitTimeout {
		t.Fatalf("run --ready-timeout-kill: exit %d, want %d\nstderr: %s", r.code, exitTimeout, r.stderr)
	}
	id := h.onlyTask()
	st := h.status(id)
	if st.Running() || !strings.Contains(st.Error, "not ready after 1s") || !strings.Contains(r.stderr, "stopped it") {
		t.Fatalf("after the timeout the task is %s (stderr %q); want it stopped, failed: not ready after 1s", st.StatusText(), r.stderr)
	}
	_, child, _ := strings.Cut(strings.TrimSpace(h.output(id)), "child ")
	childPID, err := strconv.Atoi(strings.Fields(child + " x")[0])
	if err != nil || st.PID == 0 {
		t.Fatalf("no pids to check: task pid %d, output %q", st.PID, h.output(id))
	}
	awaitDead(t, st.PID)
	awaitDead(t, childPID)
}

// TestRunReadyInterruptedLeavesTaskRunning: Ctrl+C on a waiting gate ends
// the wait (exit 130, as a shell reports SIGINT) and never the background
// task it waited on.
func TestRunReadyInterruptedLeavesTaskRunning(t *testing.T) {
	t.Parallel()
	if !isolated(t) {
		return
	}
	h := newHarness(t)
	proc, done := h.qtaskProcess("run", "--bg", "--ready", "listening", "--", "echo booting; exec sleep 300")
	id := h.onlyTask()
	eventually(t, "the task to print its first line", func() bool { return strings.Contains(h.output(id), "booting") })
	if err := proc.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	if r := <-done; r.code != 130 {
		t.Fatalf("run --ready interrupted by SIGINT: exit %d, want 130\nstderr: %s", r.code, r.stderr)
	}
	if st := h.status(id); !st.Running() {
		t.Errorf("interrupting the gate ended the task: %s", st.StatusText())
	}
}

// TestWaitUntil: `wait ID --until` on a running task finds a line printed
// before the wait began, waits for one printed after it, times out (124,
// the task untouched) and reports a task that ends first (3).
func TestWaitUntil(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	gate := filepath.Join(h.root, "gate")
	task := h.start(gateCommand(gate, "early line", "later line"))
	eventually(t, "the task to print its first line", func() bool { return strings.Contains(h.output(task.ID), "early line") })

	r := h.qtask("wait", task.ID, "--until", "^early")
	if r.code != 0 || r.stdout != task.ID+" matched: early line\n" {
		t.Fatalf("wait --until a line already printed: exit %d, stdout %q, stderr %q; want exit 0 and the line", r.code, r.stdout, r.stderr)
	}

	done := h.qtaskAsync("wait", task.ID, "--until", "later")
	stillWaiting(t, done, "wait --until a line not printed yet")
	if err := os.WriteFile(gate, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if r := <-done; r.code != 0 || r.stdout != task.ID+" matched: later line\n" {
		t.Fatalf("wait --until a later line: exit %d, stdout %q, stderr %q; want exit 0 and the line", r.code, r.stdout, r.stderr)
	}

	r = h.qtask("wait", task.ID, "--until", "never printed", "--timeout", "500ms")
	if r.code != exitTimeout || !strings.Contains(r.stderr, "still running") || !strings.Contains(r.stderr, "  later line\n") {
		t.Fatalf("wait --until past --timeout: exit %d, stderr %q; want %d saying it still runs, with the output", r.code, r.stderr, exitTimeout)
	}
	if st := h.status(task.ID); !st.Running() {
		t.Errorf("wait --until touched the task: %s", st.StatusText())
	}

	ends := h.start("echo last words; exit 2")
	r = h.qtask("wait", ends.ID, "--until", "never printed")
	if r.code != exitNotReady || !strings.Contains(r.stderr, "ended before it was ready") || !strings.Contains(r.stderr, "  last words\n") {
		t.Fatalf("wait --until on a task that ends: exit %d, stderr %q; want %d saying it ended, with the output", r.code, r.stderr, exitNotReady)
	}
}

// freePort is a TCP port on 127.0.0.1 nothing listens on right now.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// TestRunReadyPortDevServer: a real dev server, gated by --ready-port,
// makes `run` return once it accepts connections, and not before: the
// port answers the moment run returns.
func TestRunReadyPortDevServer(t *testing.T) {
	t.Parallel()
	python := testenv.NeedProgram(t, "python3")
	h := newHarness(t)
	port := freePort(t)
	r := h.qtask("run", "--bg", "--ready-port", strconv.Itoa(port), "--", python, "-m", "http.server", "--bind", "127.0.0.1", strconv.Itoa(port))
	if r.code != 0 {
		t.Fatalf("run --ready-port with a dev server: exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	conn, err := net.DialTimeout("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), time.Second)
	if err != nil {
		t.Fatalf("run --ready-port returned but the server does not accept connections: %v", err)
	}
	conn.Close()
	if want := fmt.Sprintf("Ready:   127.0.0.1:%d accepts connections", port); !strings.Contains(r.stdout, want) {
		t.Errorf("stdout %q, want it to say %q", r.stdout, want)
	}

	// The same port, now taken: refused before anything starts.
	r = h.qtask("run", "--bg", "--ready-port", strconv.Itoa(port), "--", python, "-m", "http.server", "--bind", "127.0.0.1", strconv.Itoa(port))
	if r.code != exitError || !strings.Contains(r.stderr, "already accepts connections") {
		t.Errorf("run --ready-port on a port in use: exit %d, stderr %q; want 1 saying the port is taken", r.code, r.stderr)
	}
	if ids := strings.Fields(h.mustQtask("ls", "-q")); len(ids) != 1 {
		t.Errorf("a refused gate started a task: tasks %v", ids)
	}

	// A server that dies before it listens.
	r = h.qtask("run", "--bg", "--ready-port", strconv.Itoa(freePort(t)), "--", "echo cannot bind; exit 5")
	if r.code != exitNotReady || !strings.Contains(r.stderr, "exited with code 5") || !strings.Contains(r.stderr, "  cannot bind\n") {
		t.Errorf("run --ready-port on a task that dies: exit %d, stderr %q; want %d with its exit and output", r.code, r.stderr, exitNotReady)
	}
}
