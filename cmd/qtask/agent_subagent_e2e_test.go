package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/qtask/qtask/internal/agenttest"
	"github.com/qtask/qtask/internal/mockmodel"
)

// TestRealAgentClaudeBackgroundSubAgentIsATask is docs/AGENTS.md's "A background
// sub-agent": `qtask run --bg --name review -- claude -p '…'` runs the
// pinned Claude Code headless in a task window, and the notification of its
// end carries the sub-agent's answer in its output tail.
func TestRealAgentClaudeBackgroundSubAgentIsATask(t *testing.T) {
	t.Parallel()
	agenttest.Require(t, agenttest.Claude)
	h := newHarness(t)
	answer := fmt.Sprintf("review-answer-%08x: no problems found", rand.Uint32())
	mock := mockmodel.StartForTest(t, mockmodel.Text(answer))
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	// The isolated Claude the harness would run, started by qtask instead:
	// its environment is the task's, its command line the one documented.
	cmd := agenttest.Command(ctx, t, &agenttest.Run{Agent: agenttest.Claude, Prompt: "review", Model: mock.URL()})
	env := append(cmd.Env, "QTASK_SCOPE=lead")
	r := h.qtaskIn(cmd.Dir, env, "run", "--bg", "--name", "review", "--", cmd.Path, "-p", "review the diff in HEAD and list problems")
	if r.code != 0 {
		t.Fatalf("qtask run --bg: exit %d %s", r.code, r.stderr)
	}
	got := h.qtaskIn(cmd.Dir, []string{"QTASK_SCOPE=lead"}, "agent", "inbox", "--wait", "150s")
	if got.code != 0 {
		t.Fatalf("agent inbox: exit %d %s\nrequests:\n%s", got.code, got.stderr, mock.Summary())
	}
	for _, want := range []string{"<status>completed</status>", "<output-tail truncated=\"false\">" + answer} {
		if !strings.Contains(got.stdout, want) {
			t.Errorf("the sub-agent's notification lacks %q:\n%s", want, got.stdout)
		}
	}
	if n := len(mock.MainTurns()); n != 1 {
		t.Errorf("the sub-agent made %d main requests, want 1\n%s", n, mock.Summary())
	}
}
