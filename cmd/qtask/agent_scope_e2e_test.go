package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/qtask/qtask/internal/agenttest"
	"github.com/qtask/qtask/internal/mockmodel"
	"github.com/qtask/qtask/tasks"
)

// TestRealAgentsNeverHearAPersonsTasks is issue 25's item 6: a person's
// tasks are never told to an agent. A person starts one task outside tmux
// (scope "default") and one in a tmux pane (the pane's scope); both end
// unread. Then, with qtask's hooks installed and no QTASK_SCOPE:
//   - a headless Claude started outside tmux starts a task of its own; its
//     requests carry that task's end, and never the person's: before, its
//     SessionStart hook read "default" and gave it the person's task;
//   - a headless gemini started in the person's pane starts a task with
//     `qtask run --agent --bg` through its shell tool and one through
//     qtask's MCP server; its requests carry both ends, never the person's
//     task of that pane: before, its hooks read the pane's scope, which
//     its own tasks had too. gemini names its session to neither its shell
//     commands nor its MCP server: its hooks note its process, and the
//     tasks are the session's (scope gemini:ID).
//
// Afterwards the person's two notifications are still queued for the
// person.
func TestRealAgentsNeverHearAPersonsTasks(t *testing.T) {
	t.Parallel()
	agenttest.Require(t, agenttest.Claude)
	agenttest.Require(t, agenttest.Gemini)
	h := newHarness(t)
	tag := fmt.Sprintf("%08x", rand.Uint32())
	if _, err := h.tmux("new-session", "-d", "-s", "person", "-x", "80", "-y", "24"); err != nil {
		t.Fatal(err)
	}
	pane, err := h.tmux("display-message", "-p", "-t", "person", "#{pane_id}")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.tmux("kill-session", "-t", "person") })
	inPane := []string{"TMUX=" + h.socket + ",1,0", "TMUX_PANE=" + pane}

	// The person's tasks, outside tmux and in the pane, end unread.
	outside := h.personTask(nil, "echo person-outside-$((6*7))-"+tag)
	inside := h.personTask(inPane, "echo person-pane-$((6*7))-"+tag)
	if outside.Scope != "default" || inside.Scope != pane {
		t.Fatalf("the person's tasks have scopes %q and %q, want default and %s", outside.Scope, inside.Scope, pane)
	}
	personal := []string{"person-outside-42-" + tag, "person-pane-42-" + tag}

	for _, c := range []struct {
		agent agenttest.Agent
		env   []string // where it runs: outside tmux, or in the pane
		turns []mockmodel.Turn
		own   []string // the ends it must hear
	}{
		{agenttest.Claude, nil, []mockmodel.Turn{
			mockmodel.Shell("qtask run --bg -- 'echo own-claude-$((6*7))-" + tag + "'"),
			mockmodel.Text("Started it."),
		}, []string{"own-claude-42-" + tag}},
		{agenttest.Gemini, inPane, []mockmodel.Turn{
			mockmodel.Shell("qtask run --agent --bg -- 'echo own-gemini-$((6*7))-" + tag + "'"),
			mockmodel.Tool(agenttest.Gemini.MCPTool("qtask", "shell"), map[string]any{
				"is_background": true, "command": "sleep 1; echo own-mcp-$((6*7))-" + tag}),
			mockmodel.Text("Started both."),
		}, []string{"own-gemini-42-" + tag, "own-mcp-42-" + tag}},
	} {
		t.Run(c.agent.Name, func(t *testing.T) {
			proj := filepath.Join(h.root, "proj-"+c.agent.Name)
			if err := os.MkdirAll(proj, 0o755); err != nil {
				t.Fatal(err)
			}
			// --hold: the headless run's end of turn waits for its own
			// tasks and passes their ends on.
			if r := h.qtaskIn(proj, nil, "agent", "install", c.agent.Name, "--hold", "60s"); r.code != 0 {
				t.Fatalf("agent install: exit %d %s", r.code, r.stderr)
			}
			mock := mockmodel.StartForTest(t, c.turns...)
			ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
			defer cancel()
			run := &agenttest.Run{Agent: c.agent, Prompt: "start a task", Model: mock.URL(), Dir: proj, Env: h.agentEnv(c.env...)}
			if c.agent == agenttest.Claude {
				run.Args = []string{"--allowedTools", "Bash"}
			}
			out, err := agenttest.Output(ctx, agenttest.Command(ctx, t, run))
			if err != nil {
				t.Fatalf("%v\nrequests:\n%s\nstdout tail:\n%s", err, mock.Summary(), lastBytes(out, 4000))
			}
			turns := mock.MainTurns()
			if len(turns) < len(c.turns) {
				t.Fatalf("%d main turns, want at least %d\nrequests:\n%s", len(turns), len(c.turns), mock.Summary())
			}
			last := turns[len(turns)-1] // the whole conversation
			for _, marker := range personal {
				for i, r := range turns {
					if r.Count(marker) != 0 {
						t.Errorf("request %d carries the person's task %q", i+1, marker)
					}
				}
			}
			for _, marker := range c.own {
				if last.Count(marker) == 0 {
					t.Errorf("the agent never heard of its own task %q", marker)
				}
			}
			if t.Failed() {
				t.Logf("requests:\n%s", mock.Summary())
			}
			for _, task := range h.tasksPrinting(proj, c.own) {
				if want := c.agent.Name + ":"; !strings.HasPrefix(task.Scope, want) {
					t.Errorf("the agent's task %q has scope %q, want its session's (%s…)", task.Command, task.Scope, want)
				}
			}
		})
	}
	for _, c := range []struct {
		env  []string
		task tasks.Task
	}{{nil, outside}, {inPane, inside}} {
		if r := h.qtaskIn(h.root, c.env, "agent", "inbox", "--peek"); !strings.Contains(r.stdout, "<task-id>"+c.task.ID+"</task-id>") {
			t.Errorf("the person's inbox in scope %s does not hold their task %s any more: %q %s", c.task.Scope, c.task.ID, r.stdout, r.stderr)
		}
	}
}

// personTask runs command as a person's background task (in env: their
// pane, or nothing for outside tmux) and waits for its end.
func (h *harness) personTask(env []string, command string) tasks.Task {
	h.t.Helper()
	r := h.qtaskIn(h.root, env, "run", "--bg", "--json", "--", command)
	if r.code != 0 {
		h.t.Fatalf("qtask run: exit %d %s", r.code, r.stderr)
	}
	task := decodeTask(h.t, r.stdout)
	h.wait(task.ID)
	return task
}

// tasksPrinting is every task whose command prints one of markers (as
// written, $((6*7)) for 42), the `qtask run` around it left out.
func (h *harness) tasksPrinting(dir string, markers []string) []tasks.Task {
	h.t.Helper()
	var list, found []tasks.Task
	if r := h.qtaskIn(dir, nil, "ls", "--json"); json.Unmarshal([]byte(r.stdout), &list) != nil {
		h.t.Fatalf("qtask ls --json: %q %s", r.stdout, r.stderr)
	}
	for _, task := range list {
		for _, m := range markers {
			if strings.Contains(task.Command, strings.Replace(m, "-42-", "-$((6*7))-", 1)) && !strings.HasPrefix(task.Command, "qtask run") {
				found = append(found, task)
			}
		}
	}
	if len(found) != len(markers) {
		h.t.Errorf("found %d tasks printing %q, want %d: %+v", len(found), markers, len(markers), list)
	}
	return found
}
