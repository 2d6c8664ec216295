package agenttest_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/qtask/qtask/internal/agenttest"
	"github.com/qtask/qtask/internal/mockmodel"
)

// mcpServerEnv makes the test binary an MCP server instead of running tests:
// the agents start it as their stdio MCP server.
const mcpServerEnv = "AGENTTEST_MCP_SERVER"

func TestMain(m *testing.M) {
	if os.Getenv(mcpServerEnv) == "1" {
		os.Exit(serveEchoMCP())
	}
	os.Exit(m.Run())
}

// serveEchoMCP is the smallest stdio MCP server the agents accept: one tool,
// echo {text}, answering "echo: TEXT". It proves the MCP half of the
// harness on its own; qtask's server is tested with the agents in
// cmd/qtask (TestRealAgentMCPTools).
func serveEchoMCP() int {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<24)
	out := json.NewEncoder(os.Stdout)
	for in.Scan() {
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				ProtocolVersion string            `json:"protocolVersion"`
				Name            string            `json:"name"`
				Arguments       map[string]string `json:"arguments"`
			} `json:"params"`
		}
		if err := json.Unmarshal(in.Bytes(), &req); err != nil {
			fmt.Fprintln(os.Stderr, "echo mcp:", err)
			return 1
		}
		if req.ID == nil {
			continue // a notification: nothing to answer
		}
		var result any
		switch req.Method {
		case "initialize":
			result = map[string]any{
				"protocolVersion": req.Params.ProtocolVersion,
				"capabilities":    map[string]any{"tools": map[string]any{}},
				"serverInfo":      map[string]any{"name": "echo", "version": "1"},
			}
		case "tools/list":
			result = map[string]any{"tools": []any{map[string]any{
				"name":        "echo",
				"description": "Echoes its text.",
				"inputSchema": map[string]any{"type": "object",
					"properties": map[string]any{"text": map[string]any{"type": "string"}}, "required": []string{"text"}},
			}}}
		case "tools/call":
			result = map[string]any{"content": []any{map[string]any{"type": "text", "text": "echo: " + req.Params.Arguments["text"]}}}
		case "ping":
			result = map[string]any{}
		default:
			if err := out.Encode(map[string]any{"jsonrpc": "2.0", "id": req.ID,
				"error": map[string]any{"code": -32601, "message": "method not found: " + req.Method}}); err != nil {
				return 1
			}
			continue
		}
		if err := out.Encode(map[string]any{"jsonrpc": "2.0", "id": req.ID, "result": result}); err != nil {
			return 1
		}
	}
	return 0
}

// TestRealAgentMCPToolResultReachesModel proves the MCP half of the harness with each
// pinned agent: a stdio MCP server given in Run.MCP is started by the agent,
// the model is told of its tool under the agent's name for it
// (Agent.MCPTool), a scripted call of it reaches the server, and the result
// reaches the model.
func TestRealAgentMCPToolResultReachesModel(t *testing.T) {
	t.Parallel()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range []agenttest.Agent{agenttest.Claude, agenttest.Qwen, agenttest.Gemini} {
		t.Run(a.Name, func(t *testing.T) {
			t.Parallel() // each run has its own mock, home and project
			tool := a.MCPTool("echo", "echo")
			marker := fmt.Sprintf("qtask-mcp-%d", rand.Uint32())
			mock := mockmodel.StartForTest(t, mockmodel.Tool(tool, map[string]any{"text": marker}), mockmodel.Text("done"))
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			run := &agenttest.Run{Agent: a, Prompt: "call the echo tool", Model: mock.URL(),
				MCP: []agenttest.MCPServer{{Name: "echo", Command: self, Env: map[string]string{mcpServerEnv: "1"}}}}
			if a == agenttest.Claude {
				run.Args = []string{"--allowedTools", tool}
			}
			start := time.Now()
			out, err := agenttest.Output(ctx, agenttest.Command(ctx, t, run))
			t.Logf("%s ran in %v", a.Name, time.Since(start).Round(time.Millisecond))
			dump(t, "mcp-"+a.Name, mock, out)
			if err != nil {
				t.Fatalf("%v\nrequests:\n%s", err, mock.Summary())
			}
			turns := mock.MainTurns()
			if len(turns) != 2 {
				t.Fatalf("%d main turns reached the model, want 2\nrequests:\n%s", len(turns), mock.Summary())
			}
			// Claude and qwen defer MCP tools: the model reads their names in
			// the prompt and loads schemas through a search tool; a direct
			// call works all the same. gemini lists them with the others.
			if turns[0].Count(tool) == 0 {
				t.Fatalf("the model was not told of %s; tools: %q", tool, turns[0].ToolNames())
			}
			results := turns[1].ToolResults()
			if len(results) != 1 || !strings.Contains(results[0], "echo: "+marker) {
				t.Fatalf("tool results after the MCP call = %q, want one carrying %q\nrequests:\n%s", results, "echo: "+marker, mock.Summary())
			}
		})
	}
}

// TestRealAgentInspectorCallsMCPTool proves the inspector half of the harness: the
// pinned MCP inspector CLI lists and calls the tools of a stdio server, and
// an unknown tool is its exit 5.
func TestRealAgentInspectorCallsMCPTool(t *testing.T) {
	t.Parallel()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	server := agenttest.MCPServer{Command: self, Env: map[string]string{mcpServerEnv: "1"}}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	out, err := agenttest.Output(ctx, agenttest.InspectorCommand(ctx, t, server, "--method", "tools/list"))
	if err != nil || !strings.Contains(string(out), `"name": "echo"`) {
		t.Fatalf("tools/list = %s, %v; want the echo tool", out, err)
	}
	out, err = agenttest.Output(ctx, agenttest.InspectorCommand(ctx, t, server,
		"--method", "tools/call", "--tool-name", "echo", "--tool-arg", "text=hi there"))
	if err != nil || !strings.Contains(string(out), "echo: hi there") {
		t.Fatalf("tools/call echo = %s, %v; want its text", out, err)
	}
	cmd := agenttest.InspectorCommand(ctx, t, server, "--method", "tools/call", "--tool-name", "nope")
	_, err = agenttest.Output(ctx, cmd)
	if code := cmd.ProcessState.ExitCode(); code != 5 {
		t.Fatalf("calling an unknown tool: exit %d (%v), want 5", code, err)
	}
}
