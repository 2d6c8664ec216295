package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/qtask/qtask/internal/agenttest"
	"github.com/qtask/qtask/internal/mockmodel"
)

// TestRealAgentClaudeHeadlessExitsWithTaskRunning: a plain headless
// `claude -p` run, installed without --hold, whose model starts a task
// and ends its turn exits as soon as the turn is over: the asyncRewake
// waiter, which would wait on that task and which Claude waits ~30 s for
// before exiting, is not armed in a run that ends with its turn (see
// hooks.ClaudeOutlivesTurn). The task goes on.
func TestRealAgentClaudeHeadlessExitsWithTaskRunning(t *testing.T) {
	t.Parallel()
	agenttest.Require(t, agenttest.Claude)
	h := newHarness(t)
	proj := h.installedProject("claude")
	tag := fmt.Sprintf("%08x", rand.Uint32())
	var lastTurn atomic.Int64 // when the model's last turn was asked for, unix ns
	mock := mockmodel.StartForTest(t,
		mockmodel.Shell(fmt.Sprintf("qtask run --bg -- 'sleep 300; echo late-%s'", tag)),
		mockmodel.Func(func(mockmodel.Request) mockmodel.Turn {
			lastTurn.Store(time.Now().UnixNano())
			return mockmodel.Text("Started; it runs on.")
		}),
	)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := agenttest.Command(ctx, t, &agenttest.Run{Agent: agenttest.Claude, Prompt: "start the task", Model: mock.URL(),
		Dir: proj, Env: h.agentEnv(), Args: []string{"--allowedTools", "Bash"}})
	t.Cleanup(func() { syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) })
	out, err := agenttest.Output(ctx, cmd)
	ended := time.Now()
	if err != nil {
		t.Fatalf("claude -p: %v\nrequests:\n%s\nstdout tail:\n%s", err, mock.Summary(), lastBytes(out, 4000))
	}
	if lastTurn.Load() == 0 {
		t.Fatalf("the model's last turn was never asked for\nrequests:\n%s", mock.Summary())
	}
	// Claude's own exit takes a second or two; the waiter held it ~30 s.
	took := ended.Sub(time.Unix(0, lastTurn.Load()))
	t.Logf("claude -p exited %s after its last turn was asked for", took.Round(100*time.Millisecond))
	if took > 15*time.Second {
		t.Errorf("claude -p exited %s after its last turn, with a task still running: the rewake waiter held it", took.Round(time.Second))
	}
	runningTaskOf(t, h, proj, "sleep 300; echo late-"+tag, "claude:")
}
