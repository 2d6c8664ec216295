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

// TestRealAgentsHearTheirTasksEnd is issue 12's end-to-end check with each
// pinned agent, run headless against the mock model with qtask's hooks
// installed (`qtask agent install AGENT --hold 60s`). The scripted model
// has the agent start task A with `qtask run --bg` through its own shell
// tool, release it and wait for its notification to be queued, then start
// task B and end its turn while B still runs. What must reach the model:
// A's notification with the next tool result (PostToolUse / AfterTool),
// exactly once in every later request however often the hooks fire; B in
// `qtask ls` and a tmux window while it runs; B's notification in the
// end-of-turn block the --hold waited for, exactly once.
func TestRealAgentsHearTheirTasksEnd(t *testing.T) {
	t.Parallel()
	for _, agent := range []agenttest.Agent{agenttest.Claude, agenttest.Qwen, agenttest.Gemini} {
		t.Run(agent.Name, func(t *testing.T) { testAgentHearsTasks(t, agent) })
	}
}

func testAgentHearsTasks(t *testing.T, agent agenttest.Agent) {
	agenttest.Require(t, agent)
	h := newHarness(t)
	proj := h.installedProject(agent.Name, "--hold", "60s")
	fifoA, fifoB := filepath.Join(proj, "gate-a"), filepath.Join(proj, "gate-b")
	for _, f := range []string{fifoA, fifoB} {
		if err := syscall.Mkfifo(f, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	// The output markers are computed by the task, so they appear in a
	// request only where the task's output does: in a notification.
	tag := fmt.Sprintf("%08x", rand.Uint32())
	outA, outB := "out-a-42-"+tag, "out-b-42-"+tag
	script := []mockmodel.Turn{
		mockmodel.Shell(fmt.Sprintf("qtask run --bg -- 'cat %s >/dev/null; echo out-a-$((6*7))-%s; exit 3'", fifoA, tag)),
		mockmodel.Shell(fmt.Sprintf("echo go > %s; qtask agent inbox --peek --wait 60s >/dev/null; echo released", fifoA)),
		mockmodel.Shell(fmt.Sprintf("qtask run --bg -- 'cat %s >/dev/null; echo out-b-$((6*7))-%s'", fifoB, tag)),
		mockmodel.Text("B is running; I will wait for it."),
		mockmodel.Text("Both tasks ended."),
	}
	mock := mockmodel.StartForTest(t, script...)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	scope := "agent-" + agent.Name
	env := h.agentEnv("QTASK_SCOPE=" + scope)
	run := &agenttest.Run{Agent: agent, Prompt: "run the two tasks", Model: mock.URL(), Dir: proj, Env: env}
	if agent == agenttest.Claude {
		run.Args = []string{"--allowedTools", "Bash"}
	}
	cmd := agenttest.Command(ctx, t, run)

	// B, blocked on its gate, must be a running task in a tmux window when
	// the agent ends its turn; then the test lets it end.
	checkedB := make(chan string, 1)
	go func() {
		defer close(checkedB)
		if _, err := mock.WaitFor(ctx, func(r mockmodel.Request) bool { return r.Main && len(r.ToolResults()) >= 3 }); err != nil {
			checkedB <- err.Error()
			return
		}
		checkedB <- runningInWindow(h, scope, outB)
		if f, err := os.OpenFile(fifoB, os.O_WRONLY, 0); err == nil {
			f.WriteString("go\n")
			f.Close()
		}
	}()
	out, err := agenttest.Output(ctx, cmd)
	if err != nil {
		t.Fatalf("%v\nrequests:\n%s\nstdout tail:\n%s", err, mock.Summary(), lastBytes(out, 4000))
	}
	if problem := <-checkedB; problem != "" {
		t.Errorf("while the agent waited: %s", problem)
	}
	turns := mock.MainTurns()
	if d := os.Getenv("AGENTTEST_DUMP"); d != "" {
		for i, r := range turns {
			os.WriteFile(filepath.Join(d, fmt.Sprintf("%s-%d.json", agent.Name, i+1)), r.Body, 0o600)
		}
	}
	if len(turns) != len(script) {
		t.Fatalf("%d main turns reached the model, want %d\nrequests:\n%s\nstdout tail:\n%s", len(turns), len(script), mock.Summary(), lastBytes(out, 4000))
	}
	// turns[i] is the request answered by script[i]; each carries the
	// whole conversation so far. The last follows the end-of-turn block,
	// which the agent may show more than once (Claude adds a system copy
	// of every Stop block to the user's "Stop hook feedback"): B's
	// notification appears only inside copies of the block.
	blocks := turns[4].Count("Background tasks you started have ended")
	if blocks < 1 {
		t.Errorf("the request after the end of the turn carries no block reason\nrequests:\n%s", mock.Summary())
	}
	for i, want := range []struct{ a, b int }{{0, 0}, {0, 0}, {1, 0}, {1, 0}, {1, blocks}} {
		if a, b := turns[i].Count(outA), turns[i].Count(outB); a != want.a || b != want.b {
			t.Errorf("request %d carries A's notification %d times and B's %d times; want %d and %d\nrequests:\n%s",
				i+1, a, b, want.a, want.b, mock.Summary())
		}
	}
	if n := turns[2].Count("exited with code 3"); n != 1 {
		t.Errorf("A's notification does not say how it ended (\"exited with code 3\" appears %d times)", n)
	}
	if r := h.qtaskIn(proj, []string{"QTASK_SCOPE=" + scope}, "agent", "inbox"); r.stdout != "" {
		t.Errorf("after the run the scope's inbox still holds:\n%s", r.stdout)
	}
}

// runningInWindow checks that the scope's task printing marker is running
// in a pane of the tmux server; "" when it is, else what is wrong.
func runningInWindow(h *harness, scope, marker string) string {
	r := h.qtaskIn(h.root, nil, "ls", "--json", "--scope", scope)
	var list []tasks.Task
	if err := json.Unmarshal([]byte(r.stdout), &list); err != nil {
		return fmt.Sprintf("qtask ls --json: %v: %q", err, r.stdout)
	}
	marker = strings.Replace(marker, "-42-", "-$((6*7))-", 1)
	for _, t := range list {
		// With routing, the agent's `qtask run --bg -- …` is itself a
		// (short, foreground) task whose command holds the marker too.
		if !strings.Contains(t.Command, marker) || strings.HasPrefix(t.Command, "qtask run --bg") {
			continue
		}
		if !t.Running() || t.PaneID == "" {
			return fmt.Sprintf("task %s is %s in pane %q, want running in a pane", t.ID, t.StatusText(), t.PaneID)
		}
		panes, err := h.tmux("list-panes", "-a", "-F", "#{pane_id}")
		if err != nil || !strings.Contains("\n"+panes+"\n", "\n"+t.PaneID+"\n") {
			return fmt.Sprintf("task %s's pane %s is not among the tmux server's panes %q (%v)", t.ID, t.PaneID, panes, err)
		}
		return ""
	}
	return fmt.Sprintf("no task of scope %s runs %q: ls shows %+v", scope, marker, list)
}

func lastBytes(b []byte, n int) string {
	if len(b) > n {
		return string(b[len(b)-n:])
	}
	return string(b)
}

// installedProject makes the agent's project directory, with sh as qtask's
// shell, and runs `qtask agent install` there with args.
func (h *harness) installedProject(args ...string) string {
	h.t.Helper()
	h.writeConfig("shell = \"sh\"\n")
	proj := filepath.Join(h.root, "proj")
	if err := os.MkdirAll(proj, 0o755); err != nil {
		h.t.Fatal(err)
	}
	if r := h.qtaskIn(proj, nil, append([]string{"agent", "install"}, args...)...); r.code != 0 {
		h.t.Fatalf("agent install: exit %d %s", r.code, r.stderr)
	}
	checkInstalledIn(h.t, proj, args[0])
	return proj
}

// installedSettings is the settings file `qtask agent install` writes in
// the project proj for agent a: Claude's personal project settings, the
// project settings of the others.
func installedSettings(proj string, a agenttest.Agent) string {
	if a == agenttest.Claude {
		return filepath.Join(proj, ".claude", "settings.local.json")
	}
	return filepath.Join(proj, "."+a.Name, "settings.json")
}

// checkInstalledIn checks that the hooks install wrote for the agent named
// name are in its installedSettings and that, for Claude, the shared
// .claude/settings.json (which teams commit) names no qtask: so a real agent's
// run on proj proves the hooks fire from there.
func checkInstalledIn(t *testing.T, proj, name string) {
	t.Helper()
	for _, a := range []agenttest.Agent{agenttest.Claude, agenttest.Qwen, agenttest.Gemini} {
		if a.Name != name {
			continue
		}
		if data, err := os.ReadFile(installedSettings(proj, a)); err != nil || !strings.Contains(string(data), "agent hook "+name) {
			t.Fatalf("%s has no hooks of qtask's (%v):\n%s", installedSettings(proj, a), err, data)
		}
		if data, _ := os.ReadFile(filepath.Join(proj, ".claude", "settings.json")); a == agenttest.Claude && strings.Contains(string(data), "qtask") {
			t.Fatalf("install left qtask in the shared .claude/settings.json:\n%s", data)
		}
	}
}

// agentEnv is the environment of an agent run on the harness: qtask's
// state, config and tmux server, the qtask under test first on PATH, then
// extra.
func (h *harness) agentEnv(extra ...string) []string {
	return append(extra, "QTASK_STATE_DIR="+h.state, "QTASK_CONFIG="+h.config,
		"QTASK_TMUX_SOCKET="+h.socket, "PATH="+filepath.Dir(qtaskBin)+":"+os.Getenv("PATH"))
}

// TestRealAgentQwenShellTimeoutLeavesTheTaskRunning: a foreground `qtask run
// --agent` run by qwen-code's shell tool is moved to the background a
// little before that tool's timeout, so qwen reads qtask's "moved to the
// background as task ID" and later the task's notification, once. At
// equal timeouts (qwen's and qtask's defaults are both two minutes) qwen's
// fired first, killed the waiting qtask run and with it the task: the
// model read "Command timed out" and the work was lost (found by an agent
// author's trial). The tool's timeout is shortened here, through qwen's
// project settings (tools.shell.defaultTimeoutMs), which qtask reads.
func TestRealAgentQwenShellTimeoutLeavesTheTaskRunning(t *testing.T) {
	t.Parallel()
	agenttest.Require(t, agenttest.Qwen)
	h := newHarness(t)
	proj := h.installedProject("qwen", "--hold", "60s")
	settings := filepath.Join(proj, ".qwen", "settings.json")
	var doc map[string]any
	if data, err := os.ReadFile(settings); err != nil || json.Unmarshal(data, &doc) != nil {
		t.Fatalf("reading %s: %v", settings, err)
	}
	doc["tools"] = map[string]any{"shell": map[string]any{"defaultTimeoutMs": 4000}}
	data, _ := json.Marshal(doc)
	if err := os.WriteFile(settings, data, 0o644); err != nil {
		t.Fatal(err)
	}
	gate := filepath.Join(proj, "gate")
	if err := syscall.Mkfifo(gate, 0o600); err != nil {
		t.Fatal(err)
	}
	tag := fmt.Sprintf("%08x", rand.Uint32())
	mock := mockmodel.StartForTest(t,
		mockmodel.Shell(fmt.Sprintf("qtask run --agent -- 'echo begin; cat %s >/dev/null; echo end-$((6*7))-%s'", gate, tag)),
		mockmodel.Shell(fmt.Sprintf("echo go > %s; echo released", gate)),
		mockmodel.Text("It ended."),
		mockmodel.Text("Done."))
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	run := &agenttest.Run{Agent: agenttest.Qwen, Prompt: "run it", Model: mock.URL(), Dir: proj, Env: h.agentEnv()}
	out, err := agenttest.Output(ctx, agenttest.Command(ctx, t, run))
	if err != nil {
		t.Fatalf("%v\nrequests:\n%s\nstdout tail:\n%s", err, mock.Summary(), lastBytes(out, 4000))
	}
	turns := mock.MainTurns()
	if len(turns) < 3 {
		t.Fatalf("%d main turns, want at least 3\nrequests:\n%s", len(turns), mock.Summary())
	}
	first := turns[1].ToolResults()
	if len(first) != 1 || !strings.Contains(first[0], "moved to the background as task") || strings.Contains(first[0], "timed out") {
		t.Fatalf("the result of the foreground run qwen's timeout would cut: %q", first)
	}
	task := h.lastTask()
	if st := h.wait(task.ID); st.Status != tasks.StatusCompleted {
		t.Errorf("the task moved to the background ended %s, want completed", st.StatusText())
	}
	last := turns[len(turns)-1]
	if n := last.Count("end-42-" + tag); n != 1 {
		t.Errorf("the task's end reached the model %d times, want once in its notification\nrequests:\n%s", n, mock.Summary())
	}
}
