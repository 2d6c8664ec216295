package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	neturl "net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/qtask/qtask/internal/agenttest"
	"github.com/qtask/qtask/internal/mockmodel"
)

// mcpServer is `qtask mcp` as an agent or the inspector starts it: in the
// harness's world, with its own scope (agents pass their servers only the
// environment they are given).
func (h *harness) mcpServer(scope string) agenttest.MCPServer {
	return agenttest.MCPServer{Name: "qtask", Command: qtaskBin, Args: []string{"mcp"}, Env: map[string]string{
		"QTASK_STATE_DIR": h.state, "QTASK_CONFIG": h.config, "QTASK_TMUX_SOCKET": h.socket, "QTASK_SCOPE": scope,
	}}
}

// TestRealAgentMCPInspector: the official MCP inspector CLI lists qtask's tools,
// calls them with valid and invalid arguments, and gets exit 5 for a tool
// that does not exist.
func TestRealAgentMCPInspector(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.writeConfig("shell = \"sh\"\n")
	server := h.mcpServer("inspector")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	inspect := func(args ...string) (string, int) {
		cmd := agenttest.InspectorCommand(ctx, t, server, args...)
		out, _ := agenttest.Output(ctx, cmd)
		return string(out), cmd.ProcessState.ExitCode()
	}
	out, code := inspect("--method", "tools/list")
	for _, tool := range []string{"shell", "task_list", "task_status", "task_output", "task_stop", "task_wait"} {
		if !strings.Contains(out, fmt.Sprintf(`"name": %q`, tool)) {
			t.Errorf("tools/list (exit %d) lacks %s:\n%s", code, tool, out)
		}
	}
	if strings.Contains(out, "outputSchema") {
		t.Errorf("a tool declares an output schema:\n%s", out)
	}
	out, code = inspect("--method", "tools/call", "--tool-name", "shell", "--tool-arg", "command=echo inspected-$((6*7))")
	if code != 0 || !strings.Contains(out, "inspected-42") || !strings.Contains(out, "completed (exit 0)") || strings.Contains(out, `"isError": true`) {
		t.Errorf("shell through the inspector: exit %d\n%s", code, out)
	}
	id := taskIDPattern.FindStringSubmatch(out)
	if id == nil {
		t.Fatalf("no task id in %s", out)
	}
	// The inspector reads each --tool-arg value as JSON if it parses: an
	// id of decimal digits only, or of digits around one e (88902e80, seen
	// in CI), would go as a number. Quoted, it is always the string it is.
	taskID := "task_id=" + strconv.Quote(id[1])
	out, code = inspect("--method", "tools/call", "--tool-name", "task_output", "--tool-arg", taskID, "--tool-arg", "tail_lines=1")
	if code != 0 || !strings.Contains(out, "inspected-42") {
		t.Errorf("task_output through the inspector: exit %d\n%s", code, out)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--tool-name", "task_list"}, id[1] + "  completed (exit 0)"},
		{[]string{"--tool-name", "task_list", "--tool-arg", "status=failed"}, "No tasks."},
		{[]string{"--tool-name", "task_status", "--tool-arg", taskID}, "status: completed (exit 0)"},
		{[]string{"--tool-name", "task_wait", "--tool-arg", "task_ids=[\"" + id[1] + "\"]", "--tool-arg", "timeout_ms=1000"}, id[1] + " completed (exit 0)"},
		{[]string{"--tool-name", "task_stop", "--tool-arg", taskID}, "is not running: it already ended"},
		{[]string{"--tool-name", "shell", "--tool-arg", "command=echo bg", "--tool-arg", "is_background=true"}, "in the background"},
	} {
		out, code = inspect(append([]string{"--method", "tools/call"}, c.args...)...)
		if code != 0 || !strings.Contains(out, c.want) || strings.Contains(out, `"isError": true`) {
			t.Errorf("%v: exit %d, want a result containing %q:\n%s", c.args, code, c.want, out)
		}
	}
	for _, args := range [][]string{
		{"--tool-name", "task_status", "--tool-arg", "task_id=ffffffff"},
		{"--tool-name", "task_wait", "--tool-arg", "task_ids=[]", "--tool-arg", "timeout_ms=5"},
		{"--tool-name", "task_output", "--tool-arg", taskID, "--tool-arg", "offset=-1"},
		{"--tool-name", "task_list", "--tool-arg", "status=done"},
		{"--tool-name", "task_stop", "--tool-arg", "task_id=ffffffff"},
		{"--tool-name", "shell", "--tool-arg", "command=sleep 9"},
	} {
		out, code = inspect(append([]string{"--method", "tools/call"}, args...)...)
		if !strings.Contains(out, `"isError": true`) || !strings.Contains(out, "Error: ") {
			t.Errorf("%v: exit %d, want a tool error:\n%s", args, code, out)
		}
	}
	if _, code = inspect("--method", "tools/call", "--tool-name", "nope"); code != 5 {
		t.Errorf("an unknown tool: exit %d, want 5", code)
	}
}

// TestRealAgentMCPTools: `qtask agent install` registers qtask's MCP server
// where each pinned agent reads it (Claude: the project's .mcp.json, by
// the bare name qtask, which the agent's PATH finds; qwen
// and gemini: their settings, gemini with trust), and the agent, given
// nothing else, starts it. The model (scripted) lists the tasks (none yet),
// starts a background task with the shell tool, then waits for it with
// task_wait. What reaches the model: the list's result, the shell result
// with the task id and output file, then the wait result with the task's
// end and its notification, exactly once in the whole conversation.
// Uninstall takes the registration out again. One agent run carries both
// the install's and the MCP server's checks (each run costs seconds of
// CPU); the installed hooks are set aside for it (setHooksAside).
func TestRealAgentMCPTools(t *testing.T) {
	t.Parallel()
	eachAgent(t, func(t *testing.T, a agenttest.Agent, h *harness) {
		proj := filepath.Join(h.root, "proj")
		os.MkdirAll(proj, 0o755)
		if r := h.qtaskIn(proj, nil, "agent", "install", a.Name); r.code != 0 || !strings.Contains(r.stdout, "MCP server") {
			t.Fatalf("agent install %s: exit %d %q %q", a.Name, r.code, r.stdout, r.stderr)
		}
		// Claude's .mcp.json (committed, as Claude means it) names qtask
		// by its bare name when the PATH finds this binary, as here.
		if data, _ := os.ReadFile(filepath.Join(proj, ".mcp.json")); a == agenttest.Claude && !strings.Contains(string(data), `"command": "qtask",`) {
			t.Fatalf(".mcp.json names qtask by a path:\n%s", data)
		}
		restore := setHooksAside(t, installedSettings(proj, a))
		gate := filepath.Join(h.root, "gate")
		marker := fmt.Sprintf("mcp-agent-%d", rand.Uint32())
		list, shell, wait := a.MCPTool("qtask", "task_list"), a.MCPTool("qtask", "shell"), a.MCPTool("qtask", "task_wait")
		var mu sync.Mutex // id is set by the mock's handler
		var id string
		idIn := regexp.MustCompile(`Started task ([0-9a-f]{8}) in the background`)
		mock := mockmodel.StartForTest(t,
			mockmodel.Tool(list, map[string]any{}),
			mockmodel.Tool(shell, map[string]any{"is_background": true,
				"command": fmt.Sprintf("while [ ! -e %s ]; do sleep 0.05; done; echo %s; exit 3", gate, marker)}),
			mockmodel.Func(func(r mockmodel.Request) mockmodel.Turn {
				results := r.ToolResults()
				mu.Lock()
				defer mu.Unlock()
				if m := idIn.FindStringSubmatch(strings.Join(results, "\n")); m != nil {
					id = m[1]
				}
				os.WriteFile(gate, nil, 0o600) // after the shell result: the end goes to task_wait's
				return mockmodel.Tool(wait, map[string]any{"task_ids": []string{id}, "timeout_ms": 60000})
			}),
			mockmodel.Text("done"))
		ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
		defer cancel()
		scope := "agent-" + a.Name
		run := &agenttest.Run{Agent: a, Prompt: "list the tasks, run one in the background and wait for it", Model: mock.URL(), Dir: proj,
			Env: h.agentEnv("QTASK_SCOPE=" + scope)}
		if a == agenttest.Claude {
			run.Args = []string{"--allowedTools", list + "," + shell + "," + wait}
		}
		start := time.Now()
		out, err := agenttest.Output(ctx, agenttest.Command(ctx, t, run))
		t.Logf("%s ran in %v", a.Name, time.Since(start).Round(time.Millisecond))
		if err != nil {
			t.Fatalf("%v\n%s\nrequests:\n%s", err, out, mock.Summary())
		}
		mu.Lock()
		defer mu.Unlock()
		checkMCPConversation(t, h, mock, id, marker)
		if ids, _ := h.inboxIDs(scope); len(ids) != 0 {
			t.Errorf("the inbox still had %q after the MCP result delivered it", ids)
		}
		restore()
		if r := h.qtaskIn(proj, nil, "agent", "uninstall", a.Name); r.code != 0 {
			t.Fatalf("agent uninstall: exit %d %q", r.code, r.stderr)
		}
		for _, f := range []string{".mcp.json", ".claude/settings.local.json", ".qwen/settings.json", ".gemini/settings.json"} {
			if data, _ := os.ReadFile(filepath.Join(proj, f)); strings.Contains(string(data), "mcpServers") {
				t.Errorf("after uninstall %s still has:\n%s", f, data)
			}
		}
	})
}

// setHooksAside takes the hooks that `qtask agent install` wrote out of the
// agent's settings file, keeping the rest (the MCP server, for qwen and
// gemini), and returns the function that puts the file back as installed.
// With its hooks the agent could be told of a task's end by them: the MCP
// server's own delivery (and its consuming the inbox) would go unproven.
// The hooks have tests of their own (TestRealAgentsHearTheirTasksEnd).
func setHooksAside(t *testing.T, settings string) (restore func()) {
	t.Helper()
	installed, err := os.ReadFile(settings)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(installed, &doc); err != nil || doc["hooks"] == nil {
		t.Fatalf("%s: %v, want installed hooks:\n%s", settings, err, installed)
	}
	delete(doc, "hooks")
	rest, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(settings, rest, 0o644); err != nil {
		t.Fatal(err)
	}
	return func() {
		t.Helper()
		if err := os.WriteFile(settings, installed, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// checkMCPConversation checks what reached the model in
// TestRealAgentMCPTools: four main turns, the empty task list, the shell
// result naming the output file of task id, task_wait's result with the
// task's failure and output, and the task's notification once.
func checkMCPConversation(t *testing.T, h *harness, mock *mockmodel.Server, id, marker string) {
	t.Helper()
	turns := mock.MainTurns()
	if len(turns) != 4 || id == "" {
		t.Fatalf("%d main turns, task id %q; want 4 and an id\nrequests:\n%s", len(turns), id, mock.Summary())
	}
	if results := turns[1].ToolResults(); len(results) != 1 || !strings.Contains(results[0], "No tasks.") {
		t.Errorf("the task_list result the model read: %q\nrequests:\n%s", results, mock.Summary())
	}
	results := turns[3].ToolResults()
	if len(results) != 3 {
		t.Fatalf("tool results in the last turn: %q, want task_list's, the shell's and task_wait's", results)
	}
	if !strings.Contains(results[1], "Output file: "+filepath.Join(h.state, "output", id+".log")) {
		t.Errorf("the shell result the model read: %q", results[1])
	}
	if !strings.Contains(results[2], id+" failed: exited with code 3") || !strings.Contains(results[2], marker) {
		t.Errorf("the task_wait result the model read: %q", results[2])
	}
	// The notification: in task_wait's result, once in the whole
	// conversation the last request carries.
	if n := turns[3].Count("<task-id>" + id + "</task-id>"); n != 1 {
		t.Errorf("the task's notification reached the model %d times, want 1\nresults: %q", n, results)
	}
}

// eachAgent runs test once per pinned agent, each in a harness of its own.
func eachAgent(t *testing.T, test func(t *testing.T, a agenttest.Agent, h *harness)) {
	for _, a := range []agenttest.Agent{agenttest.Claude, agenttest.Qwen, agenttest.Gemini} {
		t.Run(a.Name, func(t *testing.T) {
			t.Parallel() // each agent has its own server, state and mock
			agenttest.Require(t, a)
			h := newHarness(t)
			h.writeConfig("shell = \"sh\"\n")
			test(t, a, h)
		})
	}
}

// TestRealAgentMCPConformance: `qtask mcp --http` on a loopback port passes the MCP
// conformance suite's server-initialize, ping, tools-list and
// dns-rebinding-protection scenarios with its token; a non-loopback
// address is refused without --listen-any. The suite cannot send a
// header, so it reaches the server through a proxy that adds the token
// and passes everything else (the Host header too) as it came; straight,
// without the token, its first scenario fails.
func TestRealAgentMCPConformance(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"mcp", "--http", "0.0.0.0:0"}, "not a loopback address"},
		{[]string{"mcp", "--http", "8080"}, "want HOST:PORT"},
		{[]string{"mcp", "--listen-any"}, "--listen-any applies to --http"},
	} {
		if r := h.qtask(c.args...); r.code != exitUsage || !strings.Contains(r.stderr, c.want) {
			t.Errorf("qtask %v: exit %d %q, want exit %d saying %q", c.args, r.code, r.stderr, exitUsage, c.want)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	url, _ := h.serveMCPHTTP()
	conformance := func(url, scenario string) (string, bool) {
		out, err := agenttest.Output(ctx, agenttest.ConformanceCommand(ctx, t, url, "--scenario", scenario))
		return string(out), err == nil && strings.Contains(string(out), " 0 failed")
	}
	if out, ok := conformance(url, "server-initialize"); ok || !strings.Contains(out, "no bearer token") {
		t.Errorf("conformance without the token passed, or failed for another reason than the missing token:\n%s", out)
	}
	proxied := bearerProxy(t, url, h.mcpToken())
	for _, scenario := range []string{"server-initialize", "ping", "tools-list", "dns-rebinding-protection"} {
		if out, ok := conformance(proxied, scenario); !ok {
			t.Errorf("conformance %s: \n%s", scenario, out)
		}
	}
}

// bearerProxy serves, on a loopback port until the test ends, a proxy to
// the MCP server at target that adds "Authorization: Bearer token" to each
// request, as a configured client sends it, and keeps the rest (the Host
// header too: the server's DNS-rebinding check must see the client's). It
// returns the URL to use instead of target.
func bearerProxy(t *testing.T, target, token string) string {
	t.Helper()
	to, err := neturl.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	// A connection pool of its own: every httptest server the package's
	// parallel tests close also closes http.DefaultTransport's idle
	// connections, which the proxy would otherwise share.
	upstream := http.DefaultTransport.(*http.Transport).Clone()
	proxy := httptest.NewServer(&httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) {
		r.SetURL(&neturl.URL{Scheme: to.Scheme, Host: to.Host})
		r.Out.Host = r.In.Host
		r.Out.Header.Set("Authorization", "Bearer "+token)
	}, Transport: upstream})
	t.Cleanup(func() {
		proxy.Close()
		upstream.CloseIdleConnections()
	})
	return proxy.URL + to.Path
}

// TestRealAgentQwenHearsAnMCPErrorOnce: qwen-code shows the model an MCP
// tool error's text twice (its error and its result), so a notification
// riding on an error result reached the model twice, breaking "exactly
// once" (found by an agent author's trial). Errors carry none: with a
// task's end pending, the model calls task_status with an unknown id (an
// error), then task_list, and the whole conversation holds the task's
// notification once, in task_list's result.
func TestRealAgentQwenHearsAnMCPErrorOnce(t *testing.T) {
	t.Parallel()
	agenttest.Require(t, agenttest.Qwen)
	h := newHarness(t)
	h.writeConfig("shell = \"sh\"\n")
	scope := "mcp-error"
	marker := fmt.Sprintf("ended-%d", rand.Uint32())
	task := decodeTask(t, h.qtaskIn(h.root, []string{"QTASK_SCOPE=" + scope}, "run", "--bg", "--json", "--", "echo "+marker).stdout)
	h.wait(task.ID)
	a := agenttest.Qwen
	mock := mockmodel.StartForTest(t,
		mockmodel.Tool(a.MCPTool("qtask", "task_status"), map[string]any{"task_id": "ffffffff"}),
		mockmodel.Tool(a.MCPTool("qtask", "task_list"), map[string]any{}),
		mockmodel.Text("done"))
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	run := &agenttest.Run{Agent: a, Prompt: "look at the tasks", Model: mock.URL(), MCP: []agenttest.MCPServer{h.mcpServer(scope)}}
	if out, err := agenttest.Output(ctx, agenttest.Command(ctx, t, run)); err != nil {
		t.Fatalf("%v\n%s\nrequests:\n%s", err, lastBytes(out, 4000), mock.Summary())
	}
	turns := mock.MainTurns()
	if len(turns) != 3 {
		t.Fatalf("%d main turns, want 3\nrequests:\n%s", len(turns), mock.Summary())
	}
	if results := turns[2].ToolResults(); len(results) != 2 || !strings.Contains(results[0], "no task with id") {
		t.Errorf("the tool results the model read: %q", results)
	}
	if n := turns[2].Count("<task-id>" + task.ID + "</task-id>"); n != 1 {
		t.Errorf("the task's notification reached the model %d times, want once\nresults: %q", n, turns[2].ToolResults())
	}
}
