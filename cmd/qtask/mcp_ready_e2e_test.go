package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/qtask/qtask/internal/testenv"
)

// callToolAsync is callTool for a goroutine other than the test's: it
// returns what went wrong instead of failing the test.
func callToolAsync(cs *mcp.ClientSession, name string, args map[string]any) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), qtaskDeadline)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		return "", err
	}
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String(), nil
}

// TestMCPShellReadyPattern: shell with ready_pattern returns once the line
// is printed (ready, the task running), says when the task dies first (its
// status and last lines) and when the timeout passes (it keeps running).
func TestMCPShellReadyPattern(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.writeConfig("shell = \"sh\"\n")
	cs, _ := h.mcpClient(nil)
	gate := filepath.Join(h.root, "gate")
	done := make(chan string, 1)
	go func() {
		text, err := callToolAsync(cs, "shell", map[string]any{
			"command":       gateCommand(gate, "booting", "listening on :8080"),
			"ready_pattern": "listening on :[0-9]+",
		})
		if err != nil {
			text = "call failed: " + err.Error()
		}
		done <- text
	}()
	id := h.onlyTask()
	eventually(t, "the task to print its first line", func() bool { return strings.Contains(h.output(id), "booting") })
	select {
	case text := <-done:
		t.Fatalf("shell with ready_pattern returned before the line was printed: %q", text)
	default:
	}
	if err := os.WriteFile(gate, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	text := <-done
	if !strings.Contains(text, fmt.Sprintf("Task %s is ready: its output line matched: listening on :8080", id)) {
		t.Fatalf("ready result %q: want it to say the task is ready, with the line", text)
	}
	if st := h.status(id); !st.Running() {
		t.Errorf("after a ready result the task is %s, want it running", st.StatusText())
	}

	text, isErr := callTool(t, cs, "shell", map[string]any{
		"command": "echo 'fatal: no config' >&2; exit 4", "ready_pattern": "listening",
	})
	if isErr || !strings.Contains(text, "ended before it was ready (failed: exited with code 4") || !strings.Contains(text, "fatal: no config") {
		t.Errorf("result for a task that dies first: %q (error %v); want its end and its last lines", text, isErr)
	}
	died := taskIDIn(t, text)
	if envelopesOf(text, died) != 0 {
		t.Errorf("the result reports the end, yet carries the task's notification too: %q", text)
	}

	text, isErr = callTool(t, cs, "shell", map[string]any{
		"command": "echo booting; exec sleep 300", "ready_pattern": "listening", "ready_timeout_ms": 500,
	})
	if isErr || !strings.Contains(text, "not ready after 500ms") || !strings.Contains(text, "keeps running") || !strings.Contains(text, "booting") {
		t.Errorf("result for a gate that times out: %q (error %v); want it to say so, that the task runs on, and its output", text, isErr)
	}
	if st := h.status(taskIDIn(t, text)); !st.Running() {
		t.Errorf("after a timed-out gate the task is %s, want it running", st.StatusText())
	}

	text, isErr = callTool(t, cs, "shell", map[string]any{"command": "true", "ready_pattern": "x", "ready_port": 8000})
	if !isErr || !strings.Contains(text, "two gates") {
		t.Errorf("ready_pattern with ready_port: %q (error %v); want an argument error", text, isErr)
	}
}

// TestMCPShellReadyPort: shell with ready_port returns once a real dev
// server accepts connections on it.
func TestMCPShellReadyPort(t *testing.T) {
	t.Parallel()
	python := testenv.NeedProgram(t, "python3")
	h := newHarness(t)
	cs, _ := h.mcpClient(nil)
	port := freePort(t)
	text, isErr := callTool(t, cs, "shell", map[string]any{
		"command":    fmt.Sprintf("%s -m http.server --bind 127.0.0.1 %d", python, port),
		"ready_port": port,
	})
	if isErr || !strings.Contains(text, fmt.Sprintf("is ready: 127.0.0.1:%d accepts connections", port)) {
		t.Fatalf("shell with ready_port: %q (error %v); want it ready", text, isErr)
	}
	conn, err := net.DialTimeout("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), time.Second)
	if err != nil {
		t.Fatalf("the ready result came but the server does not accept connections: %v", err)
	}
	conn.Close()
}
