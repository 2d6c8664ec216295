package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/qtask/qtask/internal/agenttest"
	"github.com/qtask/qtask/internal/mockmodel"
	"github.com/qtask/qtask/tasks"
)

// TestRealAgentClaudeBackgroundCallMayStartWithASleep: the sleep rule is
// for foreground calls, whose sleep holds the agent; a routed Bash call
// with run_in_background that starts with one runs like any other
// background call. The prefix checked the rule before it read the
// PreToolUse hook's mark, so the call failed at once with exit code 2
// (the refusal telling the model to use its shell tool's background
// option) and the mark stayed behind in the state dir.
func TestRealAgentClaudeBackgroundCallMayStartWithASleep(t *testing.T) {
	t.Parallel()
	agenttest.Require(t, agenttest.Claude)
	h := newHarness(t)
	p := newAgentProject(t, h, "claude", "route-claude-bg-sleep")
	tag := fmt.Sprintf("%08x", rand.Uint32())
	command := "sleep 2; echo slept-$((6*7))-" + tag
	mock, run := p.claude(t, []mockmodel.Turn{
		mockmodel.ShellBackground(command),
		mockmodel.Text("It runs in the background."),
		mockmodel.Text("It ended."),
	}, "Bash(sleep:*)", "Bash(echo:*)")
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	if out, err := agenttest.Output(ctx, agenttest.Command(ctx, t, run)); err != nil {
		t.Fatalf("%v\nrequests:\n%s\nstdout tail:\n%s", err, mock.Summary(), lastBytes(out, 4000))
	}
	turns := mock.MainTurns()
	last := turns[len(turns)-1]
	if last.Count("<status>completed</status>") != 1 || last.Count("exit code 0") != 1 {
		t.Errorf("the model was not told the background call completed (exit 0); it read:\n%q\nrequests:\n%s", last.Texts(), mock.Summary())
	}
	for i, r := range turns {
		if n := r.Count("refused: this command starts by sleeping") + r.Count("exit code 2"); n != 0 {
			t.Errorf("request %d tells the model the background call was refused\n%q", i+1, r.Texts())
		}
	}
	byCommand, list := p.tasks(t)
	if task, ok := byCommand[command]; !ok || task.Status != tasks.StatusCompleted {
		t.Errorf("the background call is not a completed task: %+v", list)
	}
	if marks, _ := filepath.Glob(filepath.Join(h.state, "agent", "bg-*")); len(marks) != 0 {
		t.Errorf("the hook's marks stayed behind: %q", marks)
	}
}

// outputFileRE finds the output file Claude names in its result of a
// background call and in its notification of that call's end.
var outputFileRE = regexp.MustCompile(`/[^\s<>"]*/tasks/[A-Za-z0-9]+\.output`)

// readOutputFile is a model turn that reads, with Claude's Read tool, the
// output file of the background call the request tells of.
func readOutputFile(r mockmodel.Request) mockmodel.Turn {
	var path string
	for _, s := range append(r.ToolResults(), r.Texts()...) {
		if m := outputFileRE.FindString(s); m != "" {
			path = m
		}
	}
	return mockmodel.Tool("Read", map[string]any{"file_path": path})
}

// TestRealAgentClaudeBackgroundCallHasNoLongRunningNote: qtask's note that
// a command ran long and would better run in the background is advice for
// a foreground call; a background call that ran a second or more got it
// in its output too (the rule compared against a timeout of 0), which the
// model read when it read the call's output.
func TestRealAgentClaudeBackgroundCallHasNoLongRunningNote(t *testing.T) {
	t.Parallel()
	agenttest.Require(t, agenttest.Claude)
	h := newHarness(t)
	p := newAgentProject(t, h, "claude", "route-claude-bg-note")
	tag := fmt.Sprintf("%08x", rand.Uint32())
	command := "echo begin-" + tag + "; sleep 1.5; echo end-$((6*7))-" + tag
	mock, run := p.claude(t, []mockmodel.Turn{
		mockmodel.ShellBackground(command),
		mockmodel.Text("It runs in the background."),
		mockmodel.Func(readOutputFile),
		mockmodel.Text("Read it."),
	}, "Bash(echo:*)", "Read")
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	turns := runScripted(t, ctx, mock, run, 4)
	results := turns[3].ToolResults()
	if len(results) != 2 || !strings.Contains(results[1], "end-42-"+tag) {
		t.Fatalf("the model did not read the background call's output: %q\nrequests:\n%s", results, mock.Summary())
	}
	if strings.Contains(results[1], "[qtask]") {
		t.Errorf("the background call's output carries qtask's note:\n%s", results[1])
	}
}

// TestRealAgentClaudeEndingLeavesBackgroundCallRunning: Claude ending by
// SIGTERM or SIGHUP (a closed terminal, `tmux kill-pane`, `timeout`
// around `claude -p`) stops its background shell commands, with the same
// SIGTERM its TaskStop sends. A routed background call is a qtask task,
// which outlives the agent that started it: its prefix lets go, the task
// runs on, and its end, with the real status, exit code and output, is
// told to the session when it is resumed, once. Before, the prefix passed
// the signal on and the task was cancelled (exit 143) within half a
// second.
func TestRealAgentClaudeEndingLeavesBackgroundCallRunning(t *testing.T) {
	t.Parallel()
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGHUP} {
		t.Run(unix.SignalName(sig), func(t *testing.T) {
			t.Parallel()
			testClaudeEndsDuringBackgroundCall(t, sig)
		})
	}
}

// TestRealAgentClaudeKilledBackgroundCallIsToldOnResume: Claude killed
// outright (SIGKILL) leaves its background shell commands running, and,
// resumed, tells the model itself that the call was "stopped" and "didn't
// finish before the previous session ended". The task did finish: its
// end goes to the session's queue, and the resumed model reads qtask's
// notification of it, with the real exit code and output and a sentence
// saying it kept running after the session ended. Before, the prefix was
// still waiting, so nothing was queued (qtask left the end to Claude), and
// the model read only Claude's "stopped".
func TestRealAgentClaudeKilledBackgroundCallIsToldOnResume(t *testing.T) {
	t.Parallel()
	testClaudeEndsDuringBackgroundCall(t, syscall.SIGKILL)
}

// testClaudeEndsDuringBackgroundCall runs a Claude session that starts a
// routed background call (waiting on a gate) and is ended by sig when its
// turn is over; checks that the task runs on, ends it (exit 3), and
// resumes the session, whose first request must carry the task's
// notification, once.
func testClaudeEndsDuringBackgroundCall(t *testing.T, sig syscall.Signal) {
	agenttest.Require(t, agenttest.Claude)
	h := newHarness(t)
	proj, home := filepath.Join(h.root, "proj"), filepath.Join(h.root, "home")
	for _, d := range []string{proj, home} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if r := h.qtaskIn(proj, nil, "agent", "install", "claude"); r.code != 0 {
		t.Fatalf("agent install: exit %d %s", r.code, r.stderr)
	}
	gate := filepath.Join(proj, "gate")
	if err := syscall.Mkfifo(gate, 0o600); err != nil {
		t.Fatal(err)
	}
	tag := fmt.Sprintf("%08x", rand.Uint32())
	command := fmt.Sprintf("cat %s >/dev/null; echo out-$((6*7))-%s; exit 3", gate, tag)
	// The turn ends, and Claude with it, once the call is a running task.
	started := mockmodel.Func(func(mockmodel.Request) mockmodel.Turn {
		for end := time.Now().Add(time.Minute); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
			if list := runningTasks(h); len(list) == 1 {
				break
			}
		}
		return mockmodel.Text("It runs in the background.")
	})
	mock := mockmodel.StartForTest(t, mockmodel.ShellBackground(command), started)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	claude := func(prompt string, args ...string) *exec.Cmd {
		return agenttest.Command(ctx, t, &agenttest.Run{Agent: agenttest.Claude, Prompt: prompt, Model: mock.URL(),
			Dir: proj, Home: home, Env: h.agentEnv(), Args: append([]string{"--allowedTools", "Bash"}, args...)})
	}
	if out, err := agenttest.OutputSignalledAtResult(ctx, claude("start it"), sig); err != nil {
		t.Fatalf("%v\nrequests:\n%s\nstdout tail:\n%s", err, mock.Summary(), lastBytes(out, 4000))
	}
	first := len(mock.MainTurns())
	// Claude stops its shells as it exits; the task must not go with them.
	time.Sleep(time.Second)
	task := runningTaskOf(t, h, proj, "out-$((6*7))-"+tag, "claude:")
	endResumeTask(t, h, gate, task.ID)

	mock.Push(mockmodel.Text("I was told how it ended."))
	if out, err := agenttest.Output(ctx, claude("what happened?", "--continue")); err != nil {
		t.Fatalf("%v\nrequests:\n%s\nstdout tail:\n%s", err, mock.Summary(), lastBytes(out, 4000))
	}
	turns := mock.MainTurns()
	if len(turns) != first+1 {
		t.Fatalf("the resumed run made %d main requests, want 1\nrequests:\n%s", len(turns)-first, mock.Summary())
	}
	resumed := turns[first]
	for what, s := range map[string]string{
		"the output":                   "out-42-" + tag,
		"the task id":                  "<task-id>" + task.ID + "</task-id>",
		"the exit code":                "<exit-code>3</exit-code>",
		"that it outlived the session": "It kept running after the session that started it ended",
	} {
		if n := resumed.Count(s); n != 1 {
			t.Errorf("the resumed session's first request carries %s (%q) %d times, want once\nits texts: %q", what, s, n, resumed.Texts())
		}
	}
	for i, r := range turns[:first] {
		if n := r.Count("<task-id>" + task.ID + "</task-id>"); n != 0 {
			t.Errorf("request %d, before the end, carries qtask's notification", i+1)
		}
	}
	if r := h.qtaskIn(proj, nil, "agent", "inbox", "--scope", task.Scope); r.stdout != "" {
		t.Errorf("the notification is still queued after the resumed session read it:\n%s", r.stdout)
	}
}

// runningTasks is the running tasks of h, as `ls --json` gives them; nil
// if it fails (for the mock's goroutines, which must not end the test).
func runningTasks(h *harness) []tasks.Task {
	var list []tasks.Task
	json.Unmarshal([]byte(h.qtaskIn(h.root, nil, "ls", "--json", "--status", "running").stdout), &list)
	return list
}

// claudeTaskIDRE finds Claude's id of a background call in its result.
var claudeTaskIDRE = regexp.MustCompile(`background with ID: ([A-Za-z0-9]+)`)

// TestRealAgentClaudeTaskStopCancelsBackgroundCall: the model's TaskStop
// sends a routed background call's process group the same SIGTERM as
// Claude's own end, but it is a stop the model asked for: its PreToolUse
// hook marks Claude's id of the call, and the prefix, finding the mark,
// stops the task (cancelled) instead of letting it go. The model hears of
// the stop from Claude, once, and qtask queues nothing.
func TestRealAgentClaudeTaskStopCancelsBackgroundCall(t *testing.T) {
	t.Parallel()
	agenttest.Require(t, agenttest.Claude)
	h := newHarness(t)
	p := newAgentProject(t, h, "claude", "route-claude-taskstop")
	command := fmt.Sprintf("cat %s >/dev/null; echo never-%08x", p.gate, rand.Uint32())
	stop := mockmodel.Func(func(r mockmodel.Request) mockmodel.Turn {
		id := ""
		for _, res := range r.ToolResults() {
			if m := claudeTaskIDRE.FindStringSubmatch(res); m != nil {
				id = m[1]
			}
		}
		// Stopped once it is a running task.
		for end := time.Now().Add(time.Minute); len(runningTasks(h)) == 0 && time.Now().Before(end); {
			time.Sleep(50 * time.Millisecond)
		}
		return mockmodel.Tool("TaskStop", map[string]any{"task_id": id})
	})
	mock, run := p.claude(t, []mockmodel.Turn{
		mockmodel.ShellBackground(command),
		stop,
		mockmodel.Text("Stopped it."),
	}, "Bash(cat:*)", "Bash(echo:*)", "TaskStop")
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	if out, err := agenttest.Output(ctx, agenttest.Command(ctx, t, run)); err != nil {
		t.Fatalf("%v\nrequests:\n%s\nstdout tail:\n%s", err, mock.Summary(), lastBytes(out, 4000))
	}
	byCommand, list := p.tasks(t)
	task, ok := byCommand[command]
	if !ok || task.Status != tasks.StatusCancelled {
		t.Fatalf("after the model's TaskStop the task is %+v; want cancelled\nls: %+v\nrequests:\n%s", task, list, mock.Summary())
	}
	for i, r := range mock.MainTurns() {
		if n := r.Count("<task-id>" + task.ID + "</task-id>"); n != 0 {
			t.Errorf("request %d carries qtask's notification of the stopped call too", i+1)
		}
	}
	if r := h.qtaskIn(p.dir, nil, "agent", "inbox", "--scope", p.scope); r.stdout != "" {
		t.Errorf("qtask queued a notification of the call the model stopped:\n%s", r.stdout)
	}
	if marks, _ := filepath.Glob(filepath.Join(h.state, "agent", "stop-*")); len(marks) != 0 {
		t.Errorf("the stop mark stayed behind: %q", marks)
	}
}
