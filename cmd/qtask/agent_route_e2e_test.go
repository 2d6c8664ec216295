package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/qtask/qtask/internal/agenttest"
	"github.com/qtask/qtask/internal/mockmodel"
	"github.com/qtask/qtask/tasks"
)

// TestRealAgentClaudeBashRunsAsQtaskTasks is routing's end-to-end check with the
// pinned Claude Code, installed with `qtask agent install claude` (which
// sets CLAUDE_CODE_SHELL_PREFIX) and allow rules for a few commands. What
// must hold: a routed command is a task whose command is the model's own,
// and its output and exit code reach the model; `touch` still runs under
// its allow rule (the permission check stays on the original command) and
// a command without a rule is still refused; a command that outlives the
// (short, configured) foreground timeout comes back as moved to the
// background, and its end later reaches the model exactly once.
func TestRealAgentClaudeBashRunsAsQtaskTasks(t *testing.T) {
	t.Parallel()
	agenttest.Require(t, agenttest.Claude)
	h := newHarness(t)
	h.writeConfig("foreground_timeout = \"3s\"\n")
	p := newAgentProject(t, h, "claude", "route-claude")
	tag := fmt.Sprintf("%08x", rand.Uint32())
	missing := "nonexistent-qtask-" + tag
	slow := fmt.Sprintf("cat %s >/dev/null; echo late-$((6*7))-%s", p.gate, tag)
	script := []mockmodel.Turn{
		mockmodel.Shell("ls " + missing),
		mockmodel.Shell("touch made-it"),
		mockmodel.Shell("mkdir denied-dir"),
		mockmodel.Shell(slow),
		mockmodel.Text("The slow one runs in the background; I will wait."),
		mockmodel.Text("All done."),
	}
	mock := mockmodel.StartForTest(t, script...)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	run := &agenttest.Run{Agent: agenttest.Claude, Prompt: "go", Model: mock.URL(), Dir: p.dir, Env: p.env,
		Args: []string{"--allowedTools", "Bash(ls:*)", "Bash(touch:*)", "Bash(cat:*)", "Bash(echo:*)"}}
	// The slow command is released once the model has been told it moved
	// to the background, and has ended its turn.
	var names string
	opened := p.openGateAfter(ctx, mock, 4, func() { names = windowNames(h) })
	turns := runScripted(t, ctx, mock, run, len(script))
	<-opened
	proj := p.dir
	results := turns[4].ToolResults()
	if len(results) != 4 {
		t.Fatalf("tool results %q, want 4", results)
	}
	t.Logf("tool results as the model read them: %q", results)
	byCommand, list := p.tasks(t)
	// 1. The model's own command is the task's; output and exit code come back.
	if task, ok := byCommand["ls "+missing]; !ok || task.ExitCode == nil || *task.ExitCode != 2 {
		t.Errorf("no task for %q that exited 2 among %+v", "ls "+missing, list)
	}
	if !strings.Contains(results[0], "No such file or directory") || !strings.Contains(results[0], "2") {
		t.Errorf("the failing ls's output and exit code did not reach the model: %q", results[0])
	}
	// 2. The allow rule still matches the original command.
	if task, ok := byCommand["touch made-it"]; !ok || task.Status != tasks.StatusCompleted {
		t.Errorf("touch under Bash(touch:*) did not run as a task: %+v", list)
	}
	if _, err := os.Stat(filepath.Join(proj, "made-it")); err != nil {
		t.Errorf("touch under its allow rule did not run: %v (result %q)", err, results[1])
	}
	// 3. A command without a rule is refused, and never becomes a task.
	if _, err := os.Stat(filepath.Join(proj, "denied-dir")); err == nil {
		t.Errorf("mkdir without an allow rule ran (result %q)", results[2])
	}
	if _, ok := byCommand["mkdir denied-dir"]; ok {
		t.Errorf("mkdir without an allow rule became a task")
	}
	// 4. Moved to the background, then told once.
	task, ok := byCommand[slow]
	if !ok {
		t.Fatalf("no task for the slow command among %+v", list)
	}
	if want := task.ID + " cat " + p.gate[:20]; !strings.Contains(names, want) {
		t.Errorf("while it ran, the window list did not show the slow command under its id (%q): %q", want, names)
	}
	if !strings.Contains(results[3], "moved to the background as task "+task.ID) {
		t.Errorf("the slow command's result does not say it moved to the background: %q", results[3])
	}
	marker := "late-42-" + tag
	blocks := turns[5].Count("Background tasks you started have ended")
	if n := turns[5].Count(marker); n < 1 || n != blocks {
		t.Errorf("the last request carries the slow command's end %d times in %d copies of the block; want once per copy\nrequests:\n%s",
			n, blocks, mock.Summary())
	}
	if n := turns[4].Count(marker); n != 0 {
		t.Errorf("the slow command's end reached the model before it ended (%d times)", n)
	}
	if n := turns[5].Count("<tool-use-id>"); n != 0 {
		t.Errorf("Claude's own task notification reached the model too (%d times)", n)
	}
	if task.Status != tasks.StatusCompleted {
		t.Errorf("the slow command's task is %s", task.StatusText())
	}
}

// TestRealAgentClaudeBackgroundCallIsToldOnce: a routed Bash call with
// run_in_background is a task the human can see, but one that qtask
// neither moves at its timeout nor announces: Claude waits on it and tells
// the model itself, so the model hears of its end exactly once.
func TestRealAgentClaudeBackgroundCallIsToldOnce(t *testing.T) {
	t.Parallel()
	agenttest.Require(t, agenttest.Claude)
	h := newHarness(t)
	const timeout = 2 * time.Second
	h.writeConfig(fmt.Sprintf("foreground_timeout = %q\n", timeout))
	p := newAgentProject(t, h, "claude", "route-claude-bg")
	tag := fmt.Sprintf("%08x", rand.Uint32())
	command := fmt.Sprintf("cat %s >/dev/null; echo bgend-$((6*7))-%s", p.gate, tag)
	script := []mockmodel.Turn{
		mockmodel.ShellBackground(command),
		mockmodel.Text("It runs in the background."),
		mockmodel.Text("It ended."),
	}
	mock := mockmodel.StartForTest(t, script...)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	run := &agenttest.Run{Agent: agenttest.Claude, Prompt: "go", Model: mock.URL(), Dir: p.dir, Env: p.env,
		Args: []string{"--allowedTools", "Bash(cat:*)", "Bash(echo:*)"}}
	// Released once it has run past the foreground timeout, where it
	// must still be.
	problem := ""
	opened := p.openGateAfter(ctx, mock, 1, func() {
		for ctx.Err() == nil {
			if list := p.list(); len(list) == 1 && time.Since(list[0].StartedAt) > timeout+time.Second {
				if !list[0].Running() || list[0].Background {
					problem = fmt.Sprintf("past the timeout the task is %s, background %v; want running where it was", list[0].StatusText(), list[0].Background)
				}
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
	})
	turns := runScripted(t, ctx, mock, run, len(script))
	<-opened
	if problem != "" {
		t.Error(problem)
	}
	_, list := p.tasks(t)
	if len(list) != 1 {
		t.Fatalf("ls: %+v; want the one task", list)
	}
	task := list[0]
	if task.Command != command || task.Status != tasks.StatusCompleted {
		t.Errorf("the background call's task: %q %s; want %q completed", task.Command, task.StatusText(), command)
	}
	for i, r := range turns {
		if n := r.Count("<task-id>" + task.ID + "</task-id>"); n != 0 {
			t.Errorf("request %d carries qtask's notification of Claude's own background run (%d times)", i+1, n)
		}
	}
	if n := turns[2].Count("<tool-use-id>"); n != 1 {
		t.Errorf("Claude's own notification appears %d times in the last request, want 1\nrequests:\n%s", n, mock.Summary())
	}
	if r := h.qtaskIn(p.dir, []string{"QTASK_SCOPE=" + p.scope}, "agent", "inbox"); r.stdout != "" {
		t.Errorf("qtask queued a notification for Claude's own background run:\n%s", r.stdout)
	}
}

// agentProject is a project directory with qtask installed for an agent
// (`qtask agent install AGENT --hold 60s` plus extra flags), a FIFO gate
// the test opens to let a scripted command end, and the environment that
// puts the agent's tasks in a scope of their own.
type agentProject struct {
	h                *harness
	dir, gate, scope string
	env              []string
}

func newAgentProject(t *testing.T, h *harness, agent, scope string) *agentProject {
	t.Helper()
	p := &agentProject{h: h, dir: filepath.Join(h.root, "proj"), scope: scope}
	p.gate = filepath.Join(p.dir, "gate")
	if err := os.MkdirAll(p.dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if r := h.qtaskIn(p.dir, nil, "agent", "install", agent, "--hold", "60s"); r.code != 0 {
		t.Fatalf("agent install: exit %d %s", r.code, r.stderr)
	}
	checkInstalledIn(t, p.dir, agent)
	if err := syscall.Mkfifo(p.gate, 0o600); err != nil {
		t.Fatal(err)
	}
	p.env = h.agentEnv("QTASK_SCOPE=" + scope)
	return p
}

// openGateAfter opens the gate once a main request carrying n tool
// results has reached the mock and then wait (if not nil) has returned;
// the channel is closed when it is done.
func (p *agentProject) openGateAfter(ctx context.Context, mock *mockmodel.Server, n int, wait func()) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
		if _, err := mock.WaitFor(ctx, func(r mockmodel.Request) bool { return r.Main && len(r.ToolResults()) >= n }); err != nil {
			return
		}
		if wait != nil {
			wait()
		}
		if f, err := os.OpenFile(p.gate, os.O_WRONLY, 0); err == nil {
			f.WriteString("go\n")
			f.Close()
		}
	}()
	return done
}

// list is the scope's tasks, as `ls --json` gives them; nil if it fails
// (for goroutines, which must not end the test).
func (p *agentProject) list() []tasks.Task {
	var list []tasks.Task
	json.Unmarshal([]byte(p.h.qtaskIn(p.h.root, nil, "ls", "--json", "--scope", p.scope).stdout), &list)
	return list
}

// tasks are the scope's tasks by command.
func (p *agentProject) tasks(t *testing.T) (map[string]tasks.Task, []tasks.Task) {
	t.Helper()
	var list []tasks.Task
	if err := json.Unmarshal([]byte(p.h.mustQtask("ls", "--json", "--scope", p.scope)), &list); err != nil {
		t.Fatal(err)
	}
	byCommand := map[string]tasks.Task{}
	for _, task := range list {
		byCommand[task.Command] = task
	}
	return byCommand, list
}

// runScripted runs the agent against a mock serving script and returns
// the main turns, which must be one per scripted turn.
func runScripted(t *testing.T, ctx context.Context, mock *mockmodel.Server, run *agenttest.Run, turns int) []mockmodel.Request {
	t.Helper()
	out, err := agenttest.Output(ctx, agenttest.Command(ctx, t, run))
	if err != nil {
		t.Fatalf("%v\nrequests:\n%s\nstdout tail:\n%s", err, mock.Summary(), lastBytes(out, 4000))
	}
	main := mock.MainTurns()
	if len(main) != turns {
		t.Fatalf("%d main turns reached the model, want %d\nrequests:\n%s", len(main), turns, mock.Summary())
	}
	return main
}

// windowNames is the names of all the tmux server's windows, one a line.
func windowNames(h *harness) string {
	names, _ := h.tmux("list-windows", "-a", "-F", "#{window_name}")
	return names
}

// TestRealAgentClaudeHeredocCommandIsATask: Claude hands its shell prefix a
// command with a here-document in a script of another shape (no
// `< /dev/null`); such commands, common in an agent's work (`git commit
// -F - <<EOF`, `python3 - <<EOF`), are tasks too, with their output back.
func TestRealAgentClaudeHeredocCommandIsATask(t *testing.T) {
	t.Parallel()
	agenttest.Require(t, agenttest.Claude)
	h := newHarness(t)
	p := newAgentProject(t, h, "claude", "route-claude-heredoc")
	command := "cat <<'EOF'\nheredoc-$((6*7))\nEOF\necho after"
	mock, run := p.claude(t, []mockmodel.Turn{mockmodel.Shell(command), mockmodel.Text("done")}, "Bash(cat:*)", "Bash(echo:*)")
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	turns := runScripted(t, ctx, mock, run, 2)
	if results := turns[1].ToolResults(); len(results) != 1 || results[0] != "heredoc-$((6*7))\nafter" {
		t.Errorf("the heredoc command's result: %q; want its output", results)
	}
	byCommand, list := p.tasks(t)
	if task, ok := byCommand[command]; !ok || task.Status != tasks.StatusCompleted {
		t.Errorf("the heredoc command is not a completed task: %+v", list)
	}
}

// TestRealAgentClaudeCallTimeoutIsHonoured: a timeout the model passes with one
// Bash call is that call's tool timeout, which the shell prefix cannot see
// in its script; the PreToolUse hook hands it over, so qtask moves the
// command to the background a little before it (with the task id, and its
// notification later, once) rather than Claude's own timeout firing first.
func TestRealAgentClaudeCallTimeoutIsHonoured(t *testing.T) {
	t.Parallel()
	agenttest.Require(t, agenttest.Claude)
	h := newHarness(t)
	p := newAgentProject(t, h, "claude", "route-claude-timeout")
	tag := fmt.Sprintf("%08x", rand.Uint32())
	command := fmt.Sprintf("cat %s >/dev/null; echo late-$((6*7))-%s", p.gate, tag)
	script := []mockmodel.Turn{
		mockmodel.Tool("Bash", map[string]any{"command": command, "timeout": 4000}),
		mockmodel.Text("It runs in the background."),
		mockmodel.Text("All done."),
	}
	mock, run := p.claude(t, script, "Bash(cat:*)")
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	opened := p.openGateAfter(ctx, mock, 1, nil)
	turns := runScripted(t, ctx, mock, run, len(script))
	<-opened
	byCommand, list := p.tasks(t)
	task, ok := byCommand[command]
	if !ok {
		t.Fatalf("no task for the command among %+v", list)
	}
	if results := turns[1].ToolResults(); len(results) != 1 || !strings.Contains(results[0], "moved to the background as task "+task.ID) {
		t.Errorf("the call's result does not say qtask moved it before the call's own timeout: %q", results)
	}
	if n := turns[2].Count("late-42-" + tag); n < 1 || n != turns[2].Count("Background tasks you started have ended") {
		t.Errorf("the last request carries the command's end %d times; want once per copy of the block\nrequests:\n%s", n, mock.Summary())
	}
}

// claude starts a mock model serving script, and returns it with the run
// of Claude in p against it, allowed the given tools.
func (p *agentProject) claude(t *testing.T, script []mockmodel.Turn, allowed ...string) (*mockmodel.Server, *agenttest.Run) {
	t.Helper()
	mock := mockmodel.StartForTest(t, script...)
	return mock, &agenttest.Run{Agent: agenttest.Claude, Prompt: "go", Model: mock.URL(), Dir: p.dir, Env: p.env,
		Args: append([]string{"--allowedTools"}, allowed...)}
}
