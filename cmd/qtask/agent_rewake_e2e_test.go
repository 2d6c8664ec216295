package main

import (
	"bufio"
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

// TestRealAgentClaudeRewakesWhenIdle is issue 12's wake check for Claude Code: in a
// streaming-input session (the kind where async hooks run) the model starts
// a background task and ends its turn; the session sits idle; when the task
// ends, qtask's asyncRewake hook (armed at the end of the turn by `qtask
// agent install claude`) wakes the model, whose next request carries the
// task's notification exactly once.
func TestRealAgentClaudeRewakesWhenIdle(t *testing.T) {
	t.Parallel()
	agenttest.Require(t, agenttest.Claude)
	h := newHarness(t)
	proj := h.installedProject("claude")
	gate := filepath.Join(proj, "gate")
	if err := syscall.Mkfifo(gate, 0o600); err != nil {
		t.Fatal(err)
	}
	tag := fmt.Sprintf("%08x", rand.Uint32())
	out := "out-w-42-" + tag
	mock := mockmodel.StartForTest(t,
		mockmodel.Shell(fmt.Sprintf("qtask run --bg -- 'cat %s >/dev/null; echo out-w-$((6*7))-%s; exit 4'", gate, tag)),
		mockmodel.Text("Started; I will be told when it ends."),
		mockmodel.Text("The task failed with exit 4."),
	)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	env := h.agentEnv()
	run := &agenttest.Run{Agent: agenttest.Claude, Model: mock.URL(), Dir: proj, Env: env,
		Args: []string{"--input-format", "stream-json", "--allowedTools", "Bash"}}
	cmd := agenttest.Command(ctx, t, run)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// The waiter Claude left running goes with Claude's process group.
	t.Cleanup(func() { syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); cmd.Wait() })
	results := make(chan string, 8)
	go readClaudeResults(stdout, results)

	line, _ := json.Marshal(map[string]any{"type": "user", "message": map[string]any{"role": "user", "content": "start the task"}})
	if _, err := fmt.Fprintf(stdin, "%s\n", line); err != nil {
		t.Fatal(err)
	}
	select {
	case got := <-results:
		if !strings.HasPrefix(got, "Started") {
			t.Fatalf("first result %q\nrequests:\n%s", got, mock.Summary())
		}
	case <-ctx.Done():
		t.Fatalf("no result for the first prompt\nrequests:\n%s", mock.Summary())
	}
	// Idle: the turn is over and nothing is typed. The task ends now.
	if f, err := os.OpenFile(gate, os.O_WRONLY, 0); err == nil {
		f.WriteString("go\n")
		f.Close()
	}
	woken, err := mock.WaitFor(ctx, func(r mockmodel.Request) bool { return r.Main && r.Count(out) > 0 })
	if err != nil {
		t.Fatalf("the idle session was not woken: %v\nrequests:\n%s", err, mock.Summary())
	}
	if n := woken.Count(out); n != 1 {
		t.Errorf("the waking request carries the notification %d times, want 1\nrequests:\n%s", n, mock.Summary())
	}
	if n := woken.Count("exited with code 4"); n != 1 {
		t.Errorf("the waking request says %d times how the task ended, want 1", n)
	}
	select {
	case got := <-results:
		if got != "The task failed with exit 4." {
			t.Errorf("result after the wake %q", got)
		}
	case <-ctx.Done():
		t.Fatalf("no result after the wake\nrequests:\n%s", mock.Summary())
	}
	stdin.Close()
	// Every request after the wake still carries it once (the hooks that
	// fire on the wake turn must not repeat it).
	for i, r := range mock.MainTurns() {
		if n := r.Count(out); i >= 2 && n != 1 || i < 2 && n != 0 {
			t.Errorf("request %d carries the notification %d times\nrequests:\n%s", i+1, n, mock.Summary())
		}
	}
}

// readClaudeResults sends the text of each "result" event Claude prints
// in stream-json output, and closes results when the output ends.
func readClaudeResults(stdout io.Reader, results chan<- string) {
	defer close(results)
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var ev struct {
			Type   string `json:"type"`
			Result string `json:"result"`
		}
		if json.Unmarshal(sc.Bytes(), &ev) == nil && ev.Type == "result" {
			results <- ev.Result
		}
	}
}
