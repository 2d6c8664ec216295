package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/qtask/qtask/internal/agenttest"
	"github.com/qtask/qtask/internal/mockmodel"
)

// TestRealAgentClaudeFiresHooksFromLocalSettingsOnce: `qtask agent install claude`
// over an older install (of a qtask since moved), which had put qtask's
// entries in the shared .claude/settings.json, moves them to
// .claude/settings.local.json; the pinned Claude Code then runs each of
// qtask's hooks from there, once per event, not once per file (its
// --include-hook-events records show every hook run; with the older
// entries left in place each event ran twice). What reaches the model:
// the notification of a task that ended before the run, once, in the
// first request (the SessionStart hook, the first to fire, adds it); the
// Bash call's output, the call run as a qtask task (the shell prefix from
// the local env).
func TestRealAgentClaudeFiresHooksFromLocalSettingsOnce(t *testing.T) {
	t.Parallel()
	agenttest.Require(t, agenttest.Claude)
	h := newHarness(t)
	proj := h.movedClaudeInstall()

	scope := "agent-local"
	tag := fmt.Sprintf("%08x", rand.Uint32())
	if r := h.qtaskIn(proj, []string{"QTASK_SCOPE=" + scope}, "run", "--bg", "--", "echo before-$((6*7))-"+tag); r.code != 0 {
		t.Fatalf("run --bg: exit %d %q", r.code, r.stderr)
	}
	if r := h.qtaskIn(proj, []string{"QTASK_SCOPE=" + scope}, "agent", "inbox", "--peek", "--wait", "60s"); r.code != 0 {
		t.Fatalf("the task's notification was not queued: exit %d %q", r.code, r.stderr)
	}
	mock := mockmodel.StartForTest(t, mockmodel.Shell("echo routed-$((6*7))-"+tag), mockmodel.Text("done"))
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	run := &agenttest.Run{Agent: agenttest.Claude, Prompt: "go", Model: mock.URL(), Dir: proj,
		Env: h.agentEnv("QTASK_SCOPE=" + scope), Args: []string{"--allowedTools", "Bash", "--include-hook-events"}}
	out, err := agenttest.Output(ctx, agenttest.Command(ctx, t, run))
	if err != nil {
		t.Fatalf("%v\nrequests:\n%s\nstdout tail:\n%s", err, mock.Summary(), lastBytes(out, 4000))
	}
	turns := mock.MainTurns()
	if len(turns) != 2 || turns[0].Count("before-42-"+tag) != 1 || turns[1].Count("before-42-"+tag) != 1 ||
		turns[0].Count("SessionStart hook additional context: <task-notification>") != 1 {
		t.Errorf("the task's notification should reach the model once, in the first request\nrequests:\n%s", mock.Summary())
	}
	if len(turns) == 2 && !strings.Contains(strings.Join(turns[1].ToolResults(), "\n"), "routed-42-"+tag) {
		t.Errorf("the Bash call's output did not reach the model: %q", turns[1].ToolResults())
	}
	if got := h.qtaskIn(proj, nil, "ls", "--json", "--scope", scope); !strings.Contains(got.stdout, "echo routed-$((6*7))-"+tag) {
		t.Errorf("the Bash call was not a qtask task (no routing from the local env): %s", got.stdout)
	}
	checkHookRuns(t, out, map[string]int{"SessionStart": 1, "UserPromptSubmit": 1, "PreToolUse": 1, "PostToolUse": 1, "Stop": 2})
}

// checkHookRuns reads Claude's hook_started records and wants each hook
// event to have run want[event] hooks: one set, from the local settings
// (without --hold, Stop has two: the hook and the asyncRewake waiter).
func checkHookRuns(t *testing.T, out []byte, want map[string]int) {
	runs := map[string]int{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var ev struct {
			Type, Subtype string
			HookEvent     string `json:"hook_event"`
		}
		if json.Unmarshal(sc.Bytes(), &ev) == nil && ev.Type == "system" && ev.Subtype == "hook_started" {
			runs[ev.HookEvent]++
		}
	}
	t.Logf("hook runs: %v", runs)
	for ev, n := range want {
		if runs[ev] != n {
			t.Errorf("%s ran %d hooks, want %d \nstdout:\n%s", ev, runs[ev], n, lastBytes(out, 6000))
		}
	}
}

// movedClaudeInstall makes a project whose shared .claude/settings.json
// holds an older install's entries, of a qtask since moved (so that its
// hooks are not the same commands as the new ones, which Claude would run
// once anyway), and runs `qtask agent install claude` there with args,
// which must move them to .claude/settings.local.json.
func (h *harness) movedClaudeInstall(args ...string) string {
	t := h.t
	t.Helper()
	h.writeConfig("shell = \"sh\"\n")
	proj := filepath.Join(h.root, "proj")
	shared, local := filepath.Join(proj, ".claude", "settings.json"), filepath.Join(proj, ".claude", "settings.local.json")
	os.MkdirAll(filepath.Dir(shared), 0o755)
	install := append([]string{"agent", "install", "claude"}, args...)
	if r := h.qtaskIn(proj, nil, install...); r.code != 0 {
		t.Fatalf("install: exit %d %q", r.code, r.stderr)
	}
	oldBin := filepath.Join(h.root, "old", "qtask")
	os.MkdirAll(filepath.Dir(oldBin), 0o755)
	if err := os.Symlink(qtaskBin, oldBin); err != nil {
		t.Fatal(err)
	}
	older, err := os.ReadFile(local)
	if err != nil || !strings.Contains(string(older), qtaskBin+" agent hook claude") {
		t.Fatalf("install wrote (%v):\n%s", err, older)
	}
	os.Remove(local)
	if err := os.WriteFile(shared, []byte(strings.ReplaceAll(string(older), qtaskBin+" agent hook", oldBin+" agent hook")), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := h.qtaskIn(proj, nil, install...); r.code != 0 || !strings.Contains(r.stdout, "removed from "+shared) {
		t.Fatalf("install over the older one: exit %d %q %q", r.code, r.stdout, r.stderr)
	}
	checkInstalledIn(t, proj, "claude")
	return proj
}

// TestRealAgentClaudeHearsAtItsNextPromptFromLocalSettings: the same move, with
// --hold (no asyncRewake waiter to race for the notification), in a
// streaming-input session: a task of the session's scope ends between two
// prompts, and the UserPromptSubmit hook from settings.local.json adds its
// notification to the second prompt's request, once; each prompt runs
// UserPromptSubmit and Stop once.
func TestRealAgentClaudeHearsAtItsNextPromptFromLocalSettings(t *testing.T) {
	t.Parallel()
	agenttest.Require(t, agenttest.Claude)
	h := newHarness(t)
	proj := h.movedClaudeInstall("--hold", "1s")
	scope, tag := "agent-prompt", fmt.Sprintf("%08x", rand.Uint32())
	mock := mockmodel.StartForTest(t, mockmodel.Text("one"), mockmodel.Text("two"))
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	run := &agenttest.Run{Agent: agenttest.Claude, Model: mock.URL(), Dir: proj, Env: h.agentEnv("QTASK_SCOPE=" + scope),
		Args: []string{"--input-format", "stream-json", "--include-hook-events"}}
	cmd := agenttest.Command(ctx, t, run)
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); cmd.Wait() })
	var out bytes.Buffer // read once results is closed
	results := make(chan string, 8)
	go readClaudeResults(io.TeeReader(stdout, &out), results)
	prompt := func(text, want string) {
		t.Helper()
		line, _ := json.Marshal(map[string]any{"type": "user", "message": map[string]any{"role": "user", "content": text}})
		fmt.Fprintf(stdin, "%s\n", line)
		if got := <-results; got != want {
			t.Fatalf("result %q, want %q\nrequests:\n%s", got, want, mock.Summary())
		}
	}
	prompt("first", "one")
	if r := h.qtaskIn(proj, []string{"QTASK_SCOPE=" + scope}, "run", "--bg", "--", "echo between-$((6*7))-"+tag); r.code != 0 {
		t.Fatalf("run --bg: exit %d %q", r.code, r.stderr)
	}
	if r := h.qtaskIn(proj, []string{"QTASK_SCOPE=" + scope}, "agent", "inbox", "--peek", "--wait", "60s"); r.code != 0 {
		t.Fatalf("the task's notification was not queued: exit %d %q", r.code, r.stderr)
	}
	prompt("second", "two")
	stdin.Close()
	for range results {
	}
	turns := mock.MainTurns()
	if len(turns) != 2 || turns[0].Count("between-42-"+tag) != 0 || turns[1].Count("between-42-"+tag) != 1 ||
		turns[1].Count("UserPromptSubmit hook additional context: <task-notification>") != 1 {
		t.Errorf("the notification should reach the model once, with the second prompt\nrequests:\n%s", mock.Summary())
	}
	checkHookRuns(t, out.Bytes(), map[string]int{"SessionStart": 1, "UserPromptSubmit": 2, "Stop": 2})
}
