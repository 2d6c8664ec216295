package agenttest_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/qtask/qtask/agent/agenttest"
	"github.com/qtask/qtask/agent/mockmodel"
)

// TestSmokeShellToolResultReachesModel proves the harness with each pinned
// agent: run headless against the mock, the agent gets a scripted call of its
// own shell tool, runs the command, and its next request to the model
// carries the command's output as that call's result. The agents run one
// after another: each is a heavy node or native process.
//
// AGENTTEST_DUMP=DIR writes every request body and the agent's stdout there.
func TestSmokeShellToolResultReachesModel(t *testing.T) {
	tests := []struct {
		agent agenttest.Agent
		shell string   // the agent's shell tool, as the model sees it
		args  []string // extra arguments
	}{
		// Claude keeps its permission checks in -p mode; echo is read-only
		// and would run anyway, the rule keeps the test independent of that.
		{agenttest.Claude, "Bash", []string{"--allowedTools", "Bash(echo:*)"}},
		{agenttest.Qwen, "run_shell_command", nil},
		{agenttest.Gemini, "run_shell_command", nil},
	}
	for _, tt := range tests {
		t.Run(tt.agent.Name, func(t *testing.T) {
			marker := fmt.Sprintf("qtask-smoke-%d", rand.Uint32())
			mock, err := mockmodel.Start(mockmodel.Shell("echo "+marker), mockmodel.Text("done"))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(mock.Close)
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			run := &agenttest.Run{Agent: tt.agent, Prompt: "run the smoke command", Model: mock.URL(), Args: tt.args}
			cmd := agenttest.Command(ctx, t, run)
			start := time.Now()
			out, err := agenttest.Output(ctx, cmd)
			t.Logf("%s ran in %v", tt.agent.Name, time.Since(start).Round(time.Millisecond))
			dump(t, tt.agent.Name, mock, out)
			if err != nil {
				t.Fatalf("%v\nrequests:\n%s", err, mock.Summary())
			}

			turns := mock.MainTurns()
			if len(turns) != 2 {
				t.Fatalf("%d main turns reached the model, want 2 (the call, then its result)\nrequests:\n%s", len(turns), mock.Summary())
			}
			call := turns[0].Reply.Calls
			if len(call) != 1 || call[0].Name != tt.shell {
				t.Fatalf("scripted call = %v, want one call of %s (tools offered: %q)", turns[0].Reply, tt.shell, turns[0].ToolNames())
			}
			results := turns[1].ToolResults()
			if len(results) != 1 || !strings.Contains(results[0], marker) {
				t.Fatalf("tool results in the request after the call = %q, want one carrying %q\nrequests:\n%s", results, marker, mock.Summary())
			}
		})
	}
}

// dump writes what reached the model and what the agent printed to
// $AGENTTEST_DUMP, for reading real traffic when extending the mock.
func dump(t *testing.T, name string, mock *mockmodel.Server, stdout []byte) {
	dir := os.Getenv("AGENTTEST_DUMP")
	if dir == "" {
		return
	}
	for _, r := range mock.Requests() {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("%s-%02d.json", name, r.Seq)), r.Body, 0o600); err != nil {
			t.Error(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, name+"-stdout.jsonl"), stdout, 0o600); err != nil {
		t.Error(err)
	}
}
