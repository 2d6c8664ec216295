package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/qtask/qtask/agent/agenttest"
	"github.com/qtask/qtask/agent/mockmodel"
	"github.com/qtask/qtask/tasks"
)

// TestResumedSessionHearsItsTasks is issue 12's resume check with each
// pinned agent (`qtask agent install AGENT`, no QTASK_SCOPE): session 1
// starts a background task through its shell tool and ends; the task ends
// while no agent runs; the resumed session's first model request carries
// its notification, exactly once, and never that of a task another session
// of the same agent started. The task's scope is the agent's session
// (Claude and qwen give their commands its id; gemini gives them none, so
// its tasks keep the pane's scope, which its hooks read too). qwen's
// --fork-session gives the resumed run a new session id, which the hook
// maps back to its parent through the transcript.
func TestResumedSessionHearsItsTasks(t *testing.T) {
	t.Parallel()
	cases := []struct {
		agent     agenttest.Agent
		name      string
		resume    []string
		scope     string // the prefix of the task's scope
		separates bool   // the agent's sessions have scopes of their own
	}{
		{agenttest.Claude, "claude", []string{"--continue"}, "claude:", true},
		{agenttest.Qwen, "qwen", []string{"--continue"}, "qwen:", true},
		{agenttest.Qwen, "qwen-fork", []string{"--continue", "--fork-session"}, "qwen:", true},
		{agenttest.Gemini, "gemini", []string{"--resume", "latest"}, "default", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel() // each case has its own server, state, home and mock
			testResumeHearsTasks(t, c.agent, c.resume, c.scope, c.separates)
		})
	}
}

func testResumeHearsTasks(t *testing.T, agent agenttest.Agent, resume []string, scopePrefix string, separates bool) {
	agenttest.Require(t, agent)
	h := newHarness(t)
	h.writeConfig("shell = \"sh\"\n")
	proj, home := filepath.Join(h.root, "proj"), filepath.Join(h.root, "home")
	for _, d := range []string{proj, home} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if r := h.qtaskIn(proj, nil, "agent", "install", agent.Name); r.code != 0 {
		t.Fatalf("agent install: exit %d %s", r.code, r.stderr)
	}
	gate := filepath.Join(proj, "gate")
	if err := syscall.Mkfifo(gate, 0o600); err != nil {
		t.Fatal(err)
	}
	tag := fmt.Sprintf("%08x", rand.Uint32())
	out, decoy := "out-r-42-"+tag, "decoy-42-"+tag
	// One mock serves both runs, so that its call ids stay unique across
	// the resumed conversation (qwen refuses a call id it saw before).
	mock, err := mockmodel.Start(
		mockmodel.Shell(fmt.Sprintf("qtask run --bg -- 'cat %s >/dev/null; echo out-r-$((6*7))-%s; exit 3'", gate, tag)),
		mockmodel.Text("Started it; I will hear when it ends."),
		mockmodel.Shell("echo resumed"),
		mockmodel.Text("It failed with exit 3."),
	)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(mock.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	env := h.agentEnv()
	run := func(output func(context.Context, *exec.Cmd) ([]byte, error), prompt string, args ...string) {
		t.Helper()
		r := &agenttest.Run{Agent: agent, Prompt: prompt, Model: mock.URL(), Dir: proj, Home: home, Env: env, Args: args}
		if agent == agenttest.Claude {
			r.Args = append([]string{"--allowedTools", "Bash"}, args...)
		}
		if o, err := output(ctx, agenttest.Command(ctx, t, r)); err != nil {
			t.Fatalf("%v\nrequests:\n%s\nstdout tail:\n%s", err, mock.Summary(), lastBytes(o, 4000))
		}
	}
	// Session 1 ends with its task still running. Claude would wait 30 s
	// for its rewake waiter (waiting on that task) before exiting: the
	// session is ended at its result instead, as a person would.
	session1 := agenttest.Output
	if agent == agenttest.Claude {
		session1 = agenttest.OutputEndedAtResult
	}
	run(session1, "start the task")
	first := len(mock.MainTurns())

	// The task runs, in the session's scope, after session 1 ended.
	var list []tasks.Task
	if r := h.qtaskIn(proj, nil, "ls", "--json"); json.Unmarshal([]byte(r.stdout), &list) != nil {
		t.Fatalf("qtask ls --json: %q %s", r.stdout, r.stderr)
	}
	var task tasks.Task
	for _, tk := range list {
		if strings.Contains(tk.Command, "out-r-$((6*7))-"+tag) && !strings.HasPrefix(tk.Command, "qtask run") {
			task = tk
		}
	}
	if !task.Running() || !strings.HasPrefix(task.Scope, scopePrefix) {
		t.Fatalf("after session 1 the task is %+v; want it running in a scope starting %q\nls: %+v", task, scopePrefix, list)
	}
	if separates {
		// A task of another session of the same agent, ended: never told
		// to this one.
		other := []string{"CLAUDE_CODE_SESSION_ID=", "QWEN_CODE_SESSION_ID="}
		other[map[bool]int{true: 0, false: 1}[agent == agenttest.Claude]] += "another-session"
		if r := h.qtaskIn(proj, other, "run", "--bg", "--", "echo decoy-$((6*7))-"+tag); r.code != 0 {
			t.Fatalf("decoy: exit %d %s", r.code, r.stderr)
		}
	}
	if f, err := os.OpenFile(gate, os.O_WRONLY, 0); err == nil {
		f.WriteString("go\n")
		f.Close()
	}
	if r := h.qtaskIn(proj, nil, "wait", task.ID); r.code != 3 {
		t.Fatalf("qtask wait %s: exit %d %s, want 3", task.ID, r.code, r.stderr)
	}

	run(agenttest.Output, "what happened to the task?", resume...)
	turns := mock.MainTurns()
	if len(turns) != first+2 {
		t.Fatalf("%d main turns reached the model, want %d\nrequests:\n%s", len(turns), first+2, mock.Summary())
	}
	for i, r := range turns {
		want := 0
		if i >= first {
			want = 1 // from the resumed run's first request on
		}
		if n := r.Count(out); n != want {
			t.Errorf("request %d carries the task's notification %d times, want %d\nrequests:\n%s", i+1, n, want, mock.Summary())
		}
		if n := r.Count(decoy); n != 0 {
			t.Errorf("request %d carries another session's notification\nrequests:\n%s", i+1, mock.Summary())
		}
	}
}
