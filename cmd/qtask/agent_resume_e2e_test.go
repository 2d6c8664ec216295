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

	"github.com/qtask/qtask/internal/agenttest"
	"github.com/qtask/qtask/internal/mockmodel"
	"github.com/qtask/qtask/tasks"
)

// TestRealAgentResumedSessionHearsItsTasks is issue 12's resume check with each
// pinned agent (`qtask agent install AGENT`, no QTASK_SCOPE): session 1
// starts a background task through its shell tool and ends; the task ends
// while no agent runs; the resumed session's first model request carries
// its notification, exactly once, and never that of a task another session
// of the same agent started. The task's scope is the agent's session
// (Claude and qwen give their commands its id; gemini gives them none, and
// its hooks note its process for them, so its tasks are the session's too).
//
// qwen is resumed twice in one conversation (each qwen run costs seconds of
// CPU, so the two resumes share their runs): a plain --continue, which also
// starts a second task, then a --continue --fork-session, whose new session
// id the hook maps back to its parent through the transcript; the fork hears
// the second task once and the first (already told) never again.
func TestRealAgentResumedSessionHearsItsTasks(t *testing.T) {
	t.Parallel()
	cases := []struct {
		agent   agenttest.Agent
		resumes [][]string // the arguments of each resumed run, in order
		scope   string     // the prefix of the tasks' scope
	}{
		{agenttest.Claude, [][]string{{"--continue"}}, "claude:"},
		{agenttest.Qwen, [][]string{{"--continue"}, {"--continue", "--fork-session"}}, "qwen:"},
		{agenttest.Gemini, [][]string{{"--resume", "latest"}}, "gemini:"},
	}
	for _, c := range cases {
		t.Run(c.agent.Name, func(t *testing.T) {
			t.Parallel() // each case has its own server, state, home and mock
			testResumeHearsTasks(t, c.agent, c.resumes, c.scope)
		})
	}
}

// resumeRun is what one run of testResumeHearsTasks says to the model and to
// qtask: the shell call it makes and the notification line of the task that
// call starts (empty for the last run, which starts none).
type resumeRun struct{ call, out string }

// resumeScript is the runs of a session resumed len(resumes) times: each run
// but the last starts a task that waits on its own gate (a FIFO in proj) and
// then prints its line and exits 3.
func resumeScript(t *testing.T, proj, tag string, resumes int) (runs []resumeRun, gates []string) {
	for k := 0; k <= resumes; k++ {
		if k == resumes {
			runs = append(runs, resumeRun{call: "echo resumed"})
			break
		}
		gate := filepath.Join(proj, fmt.Sprintf("gate%d", k))
		if err := syscall.Mkfifo(gate, 0o600); err != nil {
			t.Fatal(err)
		}
		gates = append(gates, gate)
		runs = append(runs, resumeRun{
			call: fmt.Sprintf("qtask run --bg -- 'cat %s >/dev/null; echo out-r%d-$((6*7))-%s; exit 3'", gate, k, tag),
			out:  fmt.Sprintf("out-r%d-42-%s", k, tag),
		})
	}
	return runs, gates
}

func testResumeHearsTasks(t *testing.T, agent agenttest.Agent, resumes [][]string, scopePrefix string) {
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
	checkInstalledIn(t, proj, agent.Name)
	tag := fmt.Sprintf("%08x", rand.Uint32())
	decoy := "decoy-42-" + tag
	runs, gates := resumeScript(t, proj, tag, len(resumes))
	// One mock serves every run, so that its call ids stay unique across
	// the resumed conversation (qwen refuses a call id it saw before).
	mock := mockmodel.StartForTest(t)
	for _, r := range runs {
		mock.Push(mockmodel.Shell(r.call), mockmodel.Text("Done; I will hear when a task ends."))
	}
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
	starts := make([]int, len(runs)) // the index of each run's first main turn
	for k, rr := range runs {
		starts[k] = len(mock.MainTurns())
		var args []string
		if k > 0 {
			args = resumes[k-1]
		}
		// A run that ends with its task still running: Claude would wait
		// 30 s for its rewake waiter (waiting on that task) before exiting,
		// so the session is ended at its result instead, as a person would.
		output := agenttest.Output
		if agent == agenttest.Claude && rr.out != "" {
			output = agenttest.OutputEndedAtResult
		}
		run(output, fmt.Sprintf("run %d: start a task or tell me what happened", k), args...)
		if k > 0 && len(mock.MainTurns()) != starts[k]+2 {
			t.Fatalf("resumed run %d: %d main turns reached the model, want 2\nrequests:\n%s", k, len(mock.MainTurns())-starts[k], mock.Summary())
		}
		if rr.out == "" {
			break
		}
		task := runningTaskOf(t, h, proj, fmt.Sprintf("out-r%d-$((6*7))-%s", k, tag), scopePrefix)
		if k == 0 {
			startDecoy(t, h, proj, agent, tag)
		}
		endResumeTask(t, h, gates[k], task.ID)
	}
	checkToldOnce(t, mock, runs, starts, decoy)
}

// checkToldOnce checks the notification of each run's task in every main
// turn: once in each request of the run after the task ended, in no request
// before it (the task was running) and in none after that run. qwen keeps no
// hook context in its transcript, so a later run of the conversation that
// carried the line again would have been told it a second time. No request
// carries the decoy's.
func checkToldOnce(t *testing.T, mock *mockmodel.Server, runs []resumeRun, starts []int, decoy string) {
	t.Helper()
	turns := mock.MainTurns()
	starts = append(starts, len(turns))
	for k, rr := range runs[:len(runs)-1] {
		for i, r := range turns {
			want := 0
			if i >= starts[k+1] && i < starts[k+2] {
				want = 1 // the run after the task ended
			}
			if n := r.Count(rr.out); n != want {
				t.Errorf("request %d carries task %d's notification %d times, want %d\nrequests:\n%s", i+1, k, n, want, mock.Summary())
			}
		}
	}
	for i, r := range turns {
		if n := r.Count(decoy); n != 0 {
			t.Errorf("request %d carries another session's notification\nrequests:\n%s", i+1, mock.Summary())
		}
	}
}

// runningTaskOf is the task whose command holds marker (the task itself, not
// the `qtask run` that started it), which must be running in a scope that
// starts with scopePrefix now that the session that started it has ended.
func runningTaskOf(t *testing.T, h *harness, proj, marker, scopePrefix string) tasks.Task {
	t.Helper()
	var list []tasks.Task
	if r := h.qtaskIn(proj, nil, "ls", "--json"); json.Unmarshal([]byte(r.stdout), &list) != nil {
		t.Fatalf("qtask ls --json: %q %s", r.stdout, r.stderr)
	}
	var task tasks.Task
	for _, tk := range list {
		if strings.Contains(tk.Command, marker) && !strings.HasPrefix(tk.Command, "qtask run") {
			task = tk
		}
	}
	if !task.Running() || !strings.HasPrefix(task.Scope, scopePrefix) {
		t.Fatalf("after the session ended the task is %+v; want it running in a scope starting %q\nls: %+v", task, scopePrefix, list)
	}
	return task
}

// startDecoy runs a task of another session of the same agent, which ends
// at once and must never be told to the session under test.
func startDecoy(t *testing.T, h *harness, proj string, agent agenttest.Agent, tag string) {
	t.Helper()
	other := []string{"QTASK_SCOPE=" + agent.Name + ":another-session"}
	if r := h.qtaskIn(proj, other, "run", "--bg", "--", "echo decoy-$((6*7))-"+tag); r.code != 0 {
		t.Fatalf("decoy: exit %d %s", r.code, r.stderr)
	}
}

// endResumeTask opens the task's gate and waits for it to end with exit 3,
// while no agent runs.
func endResumeTask(t *testing.T, h *harness, gate, id string) {
	t.Helper()
	if f, err := os.OpenFile(gate, os.O_WRONLY, 0); err == nil {
		f.WriteString("go\n")
		f.Close()
	}
	if r := h.qtaskIn(filepath.Dir(gate), nil, "wait", id); r.code != 3 {
		t.Fatalf("qtask wait %s: exit %d %s, want 3", id, r.code, r.stderr)
	}
}
