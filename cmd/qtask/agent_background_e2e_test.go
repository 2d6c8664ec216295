package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/qtask/qtask/agent"
	"github.com/qtask/qtask/internal/agenttest"
	"github.com/qtask/qtask/internal/mockmodel"
	"github.com/qtask/qtask/tasks"
)

// TestRealAgentOwnBackgroundIsDenied is issue 25's check of qwen's and
// gemini's own background option, which qtask does not route: a
// run_shell_command call with is_background started an untracked process
// outside tmux that died with the agent and whose end the model was never
// told. With `qtask agent install AGENT` (here with --hold, for the
// headless run) the pinned agent, driven by the mock model, makes such a
// call: it is denied, and starts nothing; the model's next request carries
// the reason with the exact `qtask run --agent --bg -- '…'` line; a model
// that runs that line gets one task, and its notification exactly once.
func TestRealAgentOwnBackgroundIsDenied(t *testing.T) {
	t.Parallel()
	for _, a := range []agenttest.Agent{agenttest.Qwen, agenttest.Gemini} {
		t.Run(a.Name, func(t *testing.T) { testOwnBackgroundIsDenied(t, a) })
	}
}

func testOwnBackgroundIsDenied(t *testing.T, a agenttest.Agent) {
	agenttest.Require(t, a)
	h := newHarness(t)
	proj := h.installedProject(a.Name, "--hold", "60s")
	gate := filepath.Join(proj, "gate")
	if err := syscall.Mkfifo(gate, 0o600); err != nil {
		t.Fatal(err)
	}
	// Whatever still reads the gate when the test ends is let go.
	t.Cleanup(func() {
		if f, err := os.OpenFile(gate, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			f.Close()
		}
	})
	tag := fmt.Sprintf("%08x", rand.Uint32())
	ran := filepath.Join(proj, "ran-"+tag)
	out := "out-bg-42-" + tag
	// Every start of the command leaves a line in ran; its output marker
	// is put together by the shell (not with $((…)): gemini refuses that
	// in a command), so it shows in a request only where its output does.
	command := fmt.Sprintf(`echo started >> %s; cat %s >/dev/null; echo out-bg-4""2-%s; exit 4`, ran, gate, tag)
	want := "run --agent --bg -- " + agent.ShellQuote(command)
	// followed is the line the model ran, taken from the denial.
	followed := make(chan string, 1)
	mock := mockmodel.StartForTest(t,
		mockmodel.ShellBackground(command),
		mockmodel.Func(func(r mockmodel.Request) mockmodel.Turn {
			results := r.ToolResults()
			for _, line := range strings.Split(results[len(results)-1], "\n") {
				if strings.Contains(line, want) {
					followed <- strings.TrimSpace(line)
					return mockmodel.Shell(strings.TrimSpace(line))
				}
			}
			return mockmodel.Text("No qtask line came back.")
		}),
		mockmodel.Text("Started it as a task; I will be told when it ends."),
		mockmodel.Text("The task failed with exit 4."),
	)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	run := &agenttest.Run{Agent: a, Prompt: "start the server in the background", Model: mock.URL(), Dir: proj, Env: h.agentEnv()}
	cmd := agenttest.Command(ctx, t, run)
	// Once the model's qtask line has run (its result is in a request),
	// the task it started may end.
	go func() {
		if _, err := mock.WaitFor(ctx, func(r mockmodel.Request) bool { return r.Main && len(r.ToolResults()) >= 2 }); err != nil {
			return
		}
		if f, err := os.OpenFile(gate, os.O_WRONLY, 0); err == nil {
			f.WriteString("go\n")
			f.Close()
		}
	}()
	stdout, err := agenttest.Output(ctx, cmd)
	if err != nil {
		t.Fatalf("%v\nrequests:\n%s\nstdout tail:\n%s", err, mock.Summary(), lastBytes(stdout, 4000))
	}
	turns := mock.MainTurns()
	if d := os.Getenv("AGENTTEST_DUMP"); d != "" {
		for i, r := range turns {
			os.WriteFile(filepath.Join(d, fmt.Sprintf("bg-%s-%d.json", a.Name, i+1)), r.Body, 0o600)
		}
	}
	if len(turns) < 2 || len(turns[1].ToolResults()) != 1 {
		t.Fatalf("no request carries the background call's result\nrequests:\n%s", mock.Summary())
	}
	denial := turns[1].ToolResults()[0]
	select {
	case line := <-followed:
		t.Logf("%s's model read: %q", a.Name, denial)
		t.Logf("and ran: %s", line)
	default:
		t.Fatalf("the background call's result gives no `qtask %s` line to run:\n%s\nrequests:\n%s", want, denial, mock.Summary())
	}
	if len(turns) != 4 {
		t.Fatalf("%d main turns reached the model, want 4\nrequests:\n%s\nstdout tail:\n%s", len(turns), mock.Summary(), lastBytes(stdout, 4000))
	}
	// The denied call started nothing: only the task ran the command.
	if data, _ := os.ReadFile(ran); strings.Count(string(data), "started") != 1 {
		t.Errorf("the command started %d times, want once (as the task):\n%s", strings.Count(string(data), "started"), data)
	}
	task := h.lastTask()
	if task.Command != command {
		t.Fatalf("the last task runs %q, want the model's command %q", task.Command, command)
	}
	if st := h.wait(task.ID); st.Status != tasks.StatusFailed || !strings.Contains(st.StatusText(), "code 4") {
		t.Errorf("the task ended %s, want failed with code 4", st.StatusText())
	}
	for i, n := range []int{0, 0, 0, 1} {
		if got := turns[i].Count(out); got != n {
			t.Errorf("request %d carries the task's output %d times, want %d\nrequests:\n%s", i+1, got, n, mock.Summary())
		}
	}
}
