package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"unicode"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/qtask/qtask/internal/testenv"
)

// mcpClient starts `qtask mcp` in the harness's world with the official Go
// SDK's client over stdio, and closes it when the test ends. opts may carry
// handlers (progress). The server shares scope "default" with the harness's
// own qtask commands, as a person shares a scope with an MCP client by
// setting QTASK_SCOPE: without it, the server has a scope of its own.
func (h *harness) mcpClient(opts *mcp.ClientOptions) (*mcp.ClientSession, *exec.Cmd) {
	h.t.Helper()
	cmd := exec.Command(qtaskBin, "mcp")
	cmd.Env = append(h.env[:len(h.env):len(h.env)], "QTASK_SCOPE=default")
	cmd.Dir = h.root
	cmd.Stderr = os.Stderr
	client := mcp.NewClient(&mcp.Implementation{Name: "qtask-test", Version: "1"}, opts)
	ctx, cancel := context.WithTimeout(context.Background(), qtaskDeadline)
	defer cancel()
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		h.t.Fatalf("connect to qtask mcp: %v", err)
	}
	h.t.Cleanup(func() { cs.Close() })
	return cs, cmd
}

// callTool calls a tool and returns its text and whether it is an error.
func callTool(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) (string, bool) {
	t.Helper()
	return callToolParams(t, cs, &mcp.CallToolParams{Name: name, Arguments: args})
}

func callToolParams(t *testing.T, cs *mcp.ClientSession, p *mcp.CallToolParams) (string, bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), qtaskDeadline)
	defer cancel()
	res, err := cs.CallTool(ctx, p)
	if err != nil {
		t.Fatalf("call %s: %v", p.Name, err)
	}
	if res.StructuredContent != nil {
		t.Errorf("%s returned structured content %v: Claude would drop the text", p.Name, res.StructuredContent)
	}
	var b strings.Builder
	for _, c := range res.Content {
		tc, ok := c.(*mcp.TextContent)
		if !ok {
			t.Fatalf("%s returned %T content, want text only", p.Name, c)
		}
		b.WriteString(tc.Text)
	}
	return b.String(), res.IsError
}

var taskIDPattern = regexp.MustCompile(`(?i)task ([0-9a-f]{8})\b`)

// taskIDIn is the first "task ID" a result names.
func taskIDIn(t *testing.T, text string) string {
	t.Helper()
	m := taskIDPattern.FindStringSubmatch(text)
	if m == nil {
		t.Fatalf("no task id in %q", text)
	}
	return m[1]
}

// envelopesOf counts the notifications of id in a result.
func envelopesOf(text, id string) int {
	return strings.Count(text, "<task-id>"+id+"</task-id>")
}

// TestMCPToolsList: the server offers its seven tools, none with an output
// schema (Claude would hand the model only structured content).
func TestMCPToolsList(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	cs, _ := h.mcpClient(nil)
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
		if tool.OutputSchema != nil {
			t.Errorf("tool %s declares an output schema", tool.Name)
		}
	}
	if got, want := strings.Join(names, " "), "monitor shell task_list task_output task_status task_stop task_wait"; got != want {
		t.Errorf("tools = %s, want %s", got, want)
	}
}

// TestMCPBackgroundShellThenWait: a background shell call returns the id
// and output file at once; task_wait blocks until it ends and gives its
// end; the notification arrives once, in that result, and never again
// (not in the next result, not in the inbox); task_output reads the ended
// task's output.
func TestMCPBackgroundShellThenWait(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.writeConfig("shell = \"sh\"\n")
	cs, _ := h.mcpClient(nil)
	gate := filepath.Join(h.root, "gate")
	text, isErr := callTool(t, cs, "shell", map[string]any{
		"command":       fmt.Sprintf("echo bg-out; while [ ! -e %s ]; do sleep 0.05; done; exit 3", gate),
		"is_background": true,
	})
	if isErr || !strings.Contains(text, "in the background") || !strings.Contains(text, "Output file: ") {
		t.Fatalf("background shell: %q (error %v)", text, isErr)
	}
	id := taskIDIn(t, text)
	if st := h.status(id); st.Status != "running" || !st.Background {
		t.Fatalf("right after a background shell call the task is %s (background %v)", st.Status, st.Background)
	}
	text, _ = callTool(t, cs, "task_wait", map[string]any{"task_ids": []string{id}, "timeout_ms": 0})
	if !strings.Contains(text, id+" still running") {
		t.Errorf("task_wait with timeout 0 on a running task: %q", text)
	}
	os.WriteFile(gate, nil, 0o600)
	text, isErr = callTool(t, cs, "task_wait", map[string]any{"task_ids": []string{id}, "timeout_ms": 60000})
	if isErr || !strings.Contains(text, id+" failed: exited with code 3") {
		t.Fatalf("task_wait: %q (error %v)", text, isErr)
	}
	if n := envelopesOf(text, id); n != 1 || !strings.Contains(text, "bg-out") {
		t.Errorf("task_wait result carries %d notifications of %s, want 1 with its output:\n%s", n, id, text)
	}
	text, _ = callTool(t, cs, "task_output", map[string]any{"task_id": id})
	if !strings.HasPrefix(text, "bg-out\n") || !strings.Contains(text, "failed: exited with code 3") || envelopesOf(text, id) != 0 {
		t.Errorf("task_output of the ended task: %q", text)
	}
	if ids, _ := h.inboxIDs("default"); len(ids) != 0 {
		t.Errorf("the inbox got %q after the MCP result delivered them", ids)
	}
}

// TestMCPForegroundShell: a foreground call returns the command's output
// and end; the task's own notification is not repeated anywhere.
func TestMCPForegroundShell(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.writeConfig("shell = \"sh\"\n")
	cs, _ := h.mcpClient(nil)
	os.Mkdir(filepath.Join(h.root, "sub"), 0o700)
	text, isErr := callTool(t, cs, "shell", map[string]any{"command": "pwd; echo fg-out; exit 3", "cwd": "sub", "name": "fg"})
	if isErr {
		t.Fatalf("foreground shell: %q", text)
	}
	id := taskIDIn(t, text)
	if !strings.HasPrefix(text, filepath.Join(h.root, "sub")+"\nfg-out\n") || !strings.Contains(text, "failed: exited with code 3") {
		t.Errorf("foreground shell result: %q", text)
	}
	if envelopesOf(text, id) != 0 {
		t.Errorf("the foreground result repeats its own notification:\n%s", text)
	}
	text, _ = callTool(t, cs, "task_list", nil)
	if !strings.Contains(text, id+"  failed: exited with code 3") || envelopesOf(text, id) != 0 {
		t.Errorf("task_list after the foreground call: %q", text)
	}
	if ids, _ := h.inboxIDs("default"); len(ids) != 0 {
		t.Errorf("the inbox got %q: the foreground result was its notification", ids)
	}
}

// TestMCPForegroundTimeoutAndProgress: a foreground call given a progress
// token reports the latest output line while it runs; at its timeout the
// task moves to the background, still running, and the result says so
// with the id; its end then arrives as a notification, once.
func TestMCPForegroundTimeoutAndProgress(t *testing.T) {
	testenv.SkipShort(t, "waits out a 4 s foreground timeout")
	t.Parallel()
	h := newHarness(t)
	h.writeConfig("shell = \"sh\"\n")
	step := filepath.Join(h.root, "step")
	gate := filepath.Join(h.root, "gate")
	var mu sync.Mutex
	var messages []string
	cs, _ := h.mcpClient(&mcp.ClientOptions{ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
		mu.Lock()
		defer mu.Unlock()
		messages = append(messages, r.Params.Message)
		if r.Params.Message == "step-one" {
			os.WriteFile(step, nil, 0o600) // the second line waits for the first's report
		}
	}})
	p := &mcp.CallToolParams{Name: "shell", Arguments: map[string]any{
		"command": fmt.Sprintf("echo step-one; while [ ! -e %s ]; do sleep 0.05; done; echo step-two; "+
			"while [ ! -e %s ]; do sleep 0.05; done; echo done", step, gate),
		"timeout_ms": 4000,
	}}
	p.SetProgressToken("tok-1")
	text, isErr := callToolParams(t, cs, p)
	if isErr || !strings.Contains(text, "moved to the background as task") || !strings.Contains(text, "step-two") {
		t.Fatalf("foreground shell past its timeout: %q (error %v)", text, isErr)
	}
	id := taskIDIn(t, text)
	mu.Lock()
	got := strings.Join(messages, "|")
	mu.Unlock()
	if !strings.HasPrefix(got, "step-one|step-two") {
		t.Errorf("progress messages = %q, want step-one then step-two", got)
	}
	if st := h.status(id); st.Status != "running" || !st.Background {
		t.Fatalf("after the timeout the task is %s (background %v), want running in the background", st.Status, st.Background)
	}
	os.WriteFile(gate, nil, 0o600)
	h.wait(id)
	text, _ = callTool(t, cs, "task_list", map[string]any{"status": "completed"})
	if envelopesOf(text, id) != 1 || !strings.Contains(text, "<status>completed</status>") {
		t.Errorf("the next result should carry the task's notification once:\n%s", text)
	}
	text, _ = callTool(t, cs, "task_status", map[string]any{"task_id": id})
	if envelopesOf(text, id) != 0 || !strings.Contains(text, "status: completed (exit 0)") || !strings.HasSuffix(text, "done") {
		t.Errorf("task_status after delivery: %q", text)
	}
}

// TestMCPToolErrors: bad arguments, unknown tasks and refused commands are
// tool errors of one line; an unknown tool is a protocol error; the server
// keeps serving after each.
func TestMCPToolErrors(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	cs, _ := h.mcpClient(nil)
	for _, c := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{"task_status", map[string]any{"task_id": "deadbeef"}, `no task with id "deadbeef"`},
		{"task_output", map[string]any{"task_id": "deadbeef", "tail_lines": 3, "offset": 1}, "give either tail_lines or offset/limit"},
		{"task_stop", map[string]any{"task_id": "deadbeef"}, `no task with id "deadbeef"`},
		{"task_wait", map[string]any{"task_ids": []string{}, "timeout_ms": 10}, "task_ids is empty"},
		{"task_wait", map[string]any{"task_ids": []string{"deadbeef"}}, "timeout_ms"},
		{"task_list", map[string]any{"status": "done"}, `unknown status "done"`},
		{"shell", map[string]any{"command": "  "}, "command is empty"},
		{"shell", map[string]any{"command": "make &", "is_background": true}, "ends with a bare '&'"},
		{"shell", map[string]any{"command": "true", "timeout_ms": -1}, "timeout_ms must not be negative"},
		{"shell", map[string]any{"command": "true", "cwd": "/nonexistent/dir"}, "does not exist"},
		{"shell", map[string]any{"is_background": true}, `bad arguments for shell: required: missing properties: ["command"]`},
		{"task_output", map[string]any{"task_id": 7}, "bad arguments for task_output:"},
		// Integers the schema takes but an int64 cannot hold: the SDK's
		// decoding error, reworded like a schema error.
		{"task_output", map[string]any{"task_id": "deadbeef", "offset": uint64(math.MaxUint64)}, "bad arguments for task_output: offset is out of range"},
		{"task_wait", map[string]any{"task_ids": []string{"deadbeef"}, "timeout_ms": 1e30}, "bad arguments for task_wait: timeout_ms is out of range"},
		{"shell", map[string]any{"command": "sleep 30 && make"}, "starts by sleeping for 30s"},
		// JSON can carry a NUL that argv cannot: refused before a task exists.
		{"shell", map[string]any{"command": "echo a\x00b"}, "NUL byte"},
		{"monitor", map[string]any{"command": "echo a\x00b"}, "NUL byte"},
	} {
		text, isErr := callTool(t, cs, c.tool, c.args)
		if !isErr || !strings.HasPrefix(text, "Error: ") || !strings.Contains(text, c.want) || strings.Contains(text, "\n") {
			t.Errorf("%s %v: %q (error %v), want one error line containing %q", c.tool, c.args, text, isErr, c.want)
		}
	}
	_, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "nope"})
	if err == nil || !strings.Contains(err.Error(), "nope") {
		t.Errorf("an unknown tool: %v, want a protocol error naming it", err)
	}
	if text, isErr := callTool(t, cs, "task_list", nil); isErr || text != "No tasks." {
		t.Errorf("after the errors, task_list = %q (error %v)", text, isErr)
	}
}

// TestMCPMalformedRequest: a line that is not JSON-RPC gets a JSON-RPC
// error and the server answers the next request.
func TestMCPMalformedRequest(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	cmd := exec.Command(qtaskBin, "mcp")
	cmd.Env, cmd.Dir, cmd.Stderr = h.env, h.root, os.Stderr
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stdin.Close(); cmd.Process.Kill(); cmd.Wait() })
	lines := make(chan string)
	go func() {
		defer close(lines)
		out := bufio.NewScanner(stdout)
		out.Buffer(nil, 1<<20)
		for out.Scan() {
			lines <- out.Text()
		}
	}()
	send := func(line string) map[string]any {
		t.Helper()
		if _, err := stdin.Write([]byte(line + "\n")); err != nil {
			t.Fatal(err)
		}
		var reply string
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("after %s the server ended", line)
			}
			reply = l
		case <-time.After(time.Minute):
			t.Fatalf("after %s the server said nothing for a minute", line)
		}
		var msg map[string]any
		if err := json.Unmarshal([]byte(reply), &msg); err != nil {
			t.Fatalf("server printed %q: %v", reply, err)
		}
		return msg
	}
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	stdin.Write([]byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n"))
	for _, bad := range []string{`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":`, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":"nope"}`,
		`{"jsonrpc":"1.0","id":5,"method":"tools/list"}`, `[1,2]`,
		// A well-formed batch, which 2025-06-18 and later forbid: the SDK
		// ends the session on one, so it must be answered here.
		`[{"jsonrpc":"2.0","id":6,"method":"tools/list"}]`} {
		if msg := send(bad); msg["error"] == nil {
			t.Errorf("%s got %v, want a JSON-RPC error", bad, msg)
		}
	}
	// A response to nothing the server asked: no answer, and no harm.
	stdin.Write([]byte(`{"jsonrpc":"2.0","id":"stray","result":{}}` + "\n"))
	msg := send(`{"jsonrpc":"2.0","id":4,"method":"tools/list"}`)
	if res, _ := msg["result"].(map[string]any); res == nil || res["tools"] == nil {
		t.Errorf("tools/list after malformed requests: %v", msg)
	}
}

// TestMCPTasksOutliveServer: a background task started through one server
// runs on after that server is gone; a new server lists it and delivers
// the notification that was pending, once.
func TestMCPTasksOutliveServer(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.writeConfig("shell = \"sh\"\n")
	gate := filepath.Join(h.root, "gate")
	cs, cmd := h.mcpClient(nil)
	text, _ := callTool(t, cs, "shell", map[string]any{
		"command": fmt.Sprintf("while [ ! -e %s ]; do sleep 0.05; done; echo survived", gate), "is_background": true})
	id := taskIDIn(t, text)
	cs.Close()
	cmd.Wait()
	os.WriteFile(gate, nil, 0o600)
	if st := h.wait(id); st.Status != "completed" {
		t.Fatalf("the task ended %s after its server exited", st.Status)
	}
	cs2, _ := h.mcpClient(nil)
	// A call with bad arguments is an error, which carries nothing (a
	// client may show it twice); the next result carries what is pending.
	text, isErr := callTool(t, cs2, "task_status", map[string]any{})
	if !isErr || envelopesOf(text, id) != 0 {
		t.Errorf("a new server's first result (bad arguments):\n%s\nwant an error without the notification", text)
	}
	text, _ = callTool(t, cs2, "task_list", nil)
	if !strings.Contains(text, id+"  completed (exit 0)") || envelopesOf(text, id) != 1 || !strings.Contains(text, "survived") {
		t.Errorf("a new server's task_list:\n%s\nwant the task, completed, and its notification once", text)
	}
	text, _ = callTool(t, cs2, "task_list", nil)
	if envelopesOf(text, id) != 0 {
		t.Errorf("a second task_list repeats the notification:\n%s", text)
	}
}

// TestMCPServerKilledMidCall: a server killed while a foreground call
// waits leaves the task running in the background (not attended by
// nobody, not running forever): it ends and its end is queued.
func TestMCPServerKilledMidCall(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.writeConfig("shell = \"sh\"\n")
	gate := filepath.Join(h.root, "gate")
	cs, cmd := h.mcpClient(nil)
	called := make(chan struct{})
	go func() {
		defer close(called)
		cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "shell", Arguments: map[string]any{
			"command": fmt.Sprintf("while [ ! -e %s ]; do sleep 0.05; done", gate), "name": "killed-mid-call"}})
	}()
	var id string
	eventually(t, "the foreground task to start", func() bool {
		r := h.qtask("ls", "--json")
		var list []struct{ ID, Name string }
		json.Unmarshal([]byte(r.stdout), &list)
		for _, task := range list {
			if task.Name == "killed-mid-call" {
				id = task.ID
			}
		}
		return id != ""
	})
	cmd.Process.Signal(syscall.SIGKILL)
	<-called
	eventually(t, "the orphaned foreground task to count as background", func() bool { return h.status(id).Background })
	os.WriteFile(gate, nil, 0o600)
	if st := h.wait(id); st.Status != "completed" {
		t.Fatalf("the task ended %s", st.Status)
	}
	if ids, _ := h.inboxIDs("default"); len(ids) != 1 || ids[0] != id {
		t.Errorf("inbox after the server died = %q, want the task's end", ids)
	}
}

// TestMCPNotificationsRaceInbox: 20 tasks end while an MCP client and an
// inbox reader both read the scope's queue: every notification is
// delivered exactly once in total.
func TestMCPNotificationsRaceInbox(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.writeConfig("shell = \"sh\"\n")
	gate := filepath.Join(h.root, "gate")
	cs, _ := h.mcpClient(nil)
	want := map[string]bool{}
	for i := range 20 {
		text, _ := callTool(t, cs, "shell", map[string]any{
			"command": fmt.Sprintf("while [ ! -e %s ]; do sleep 0.05; done; echo n%d", gate, i), "is_background": true})
		want[taskIDIn(t, text)] = true
	}
	os.WriteFile(gate, nil, 0o600)
	var mu sync.Mutex
	seen := map[string]int{}
	note := func(ids []string) {
		mu.Lock()
		defer mu.Unlock()
		for _, id := range ids {
			seen[id]++
		}
	}
	total := func() int {
		mu.Lock()
		defer mu.Unlock()
		n := 0
		for _, c := range seen {
			n += c
		}
		return n
	}
	deadline := time.Now().Add(90 * time.Second)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for total() < len(want) && time.Now().Before(deadline) {
			ids, _ := h.inboxIDs("default")
			note(ids)
		}
	}()
	envelope := regexp.MustCompile(`<task-id>([0-9a-f]+)</task-id>`)
	for total() < len(want) && time.Now().Before(deadline) {
		text, _ := callTool(t, cs, "task_list", map[string]any{"status": "running"})
		var ids []string
		for _, m := range envelope.FindAllStringSubmatch(text, -1) {
			ids = append(ids, m[1])
		}
		note(ids)
	}
	wg.Wait()
	for id := range want {
		if seen[id] != 1 {
			t.Errorf("task %s was delivered %d times", id, seen[id])
		}
	}
	if len(seen) != len(want) {
		t.Errorf("delivered %d distinct tasks, want %d", len(seen), len(want))
	}
}

// TestMCPForegroundRules: agent mode's rules hold for MCP foreground
// calls: a leading sleep is refused (above), a background one is not, and
// a long foreground command that ended by itself gets the long-running
// hint, worded for an agent.
func TestMCPForegroundRules(t *testing.T) {
	testenv.SkipShort(t, "runs a 5 s foreground sleep")
	t.Parallel()
	h := newHarness(t)
	h.writeConfig("shell = \"sh\"\n")
	cs, _ := h.mcpClient(nil)
	text, isErr := callTool(t, cs, "shell", map[string]any{"command": "sleep 30 && true", "is_background": true})
	if isErr || !strings.Contains(text, "in the background") {
		t.Errorf("a background sleep: %q (error %v)", text, isErr)
	}
	callTool(t, cs, "task_stop", map[string]any{"task_id": taskIDIn(t, text)})
	text, isErr = callTool(t, cs, "shell", map[string]any{"command": "true; sleep 5; echo slept", "timeout_ms": 10000})
	if isErr || !strings.Contains(text, "slept\n") || !strings.Contains(text, "completed (exit 0)") ||
		!regexp.MustCompile(`This command ran for \d+s\. Next time, run similar long commands in the background`).MatchString(text) {
		t.Errorf("a long foreground call: %q (error %v), want the long-running hint", text, isErr)
	}
	text, _ = callTool(t, cs, "shell", map[string]any{"command": "echo quick"})
	if strings.Contains(text, "This command ran for") {
		t.Errorf("a quick foreground call got the hint: %q", text)
	}
}

// TestMCPToolsTakeNames: a task's name works as its task_id in the task
// tools, as the tools' descriptions tell the model.
func TestMCPToolsTakeNames(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.writeConfig("shell = \"sh\"\n")
	cs, _ := h.mcpClient(nil)
	text, isErr := callTool(t, cs, "shell", map[string]any{"command": "sleep 30", "is_background": true, "name": "websrv"})
	if isErr {
		t.Fatalf("start: %q", text)
	}
	id := taskIDIn(t, text)
	text, isErr = callTool(t, cs, "task_status", map[string]any{"task_id": "websrv"})
	if isErr || !strings.Contains(text, "id: "+id) || !strings.Contains(text, "status: running") {
		t.Errorf("task_status by name: %q (error %v), want task %s running", text, isErr, id)
	}
	if text, isErr = callTool(t, cs, "task_stop", map[string]any{"task_id": "websrv"}); isErr {
		t.Fatalf("task_stop by name: %q", text)
	}
	text, isErr = callTool(t, cs, "task_wait", map[string]any{"task_ids": []string{"websrv"}, "timeout_ms": 10000})
	if isErr || !strings.HasPrefix(text, id+" cancelled") {
		t.Errorf("task_wait by name after its stop: %q (error %v), want %s cancelled", text, isErr, id)
	}
}

// TestMCPLongRunNoteOff: config long_run_note = "off" silences the note
// for MCP foreground calls too, not only for `qtask run`.
func TestMCPLongRunNoteOff(t *testing.T) {
	testenv.SkipShort(t, "runs a 1.2 s foreground sleep")
	t.Parallel()
	h := newHarness(t)
	h.writeConfig("shell = \"sh\"\nlong_run_note = \"off\"\n")
	cs, _ := h.mcpClient(nil)
	text, isErr := callTool(t, cs, "shell", map[string]any{"command": "true; sleep 1.2; echo slept", "timeout_ms": 2000})
	if isErr || !strings.Contains(text, "completed (exit 0)") {
		t.Fatalf("a foreground call that ran over half its timeout: %q (error %v), want it completed", text, isErr)
	}
	if strings.Contains(text, "This command ran for") {
		t.Errorf("with long_run_note = \"off\" the call still got the long-running note: %q", text)
	}
}

// TestMCPCancelledCallMovesTaskToBackground: a client that cancels a
// foreground shell call (notifications/cancelled) does not kill the
// command: it runs on in the background, and its end is notified.
func TestMCPCancelledCallMovesTaskToBackground(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.writeConfig("shell = \"sh\"\n")
	gate := filepath.Join(h.root, "gate")
	cs, _ := h.mcpClient(nil)
	ctx, cancel := context.WithCancel(context.Background())
	called := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "shell", Arguments: map[string]any{
			"command": fmt.Sprintf("while [ ! -e %s ]; do sleep 0.05; done; echo after-cancel", gate), "name": "cancelled-call"}})
		called <- err
	}()
	var id string
	eventually(t, "the foreground task to start", func() bool {
		var list []struct{ ID, Name string }
		json.Unmarshal([]byte(h.qtask("ls", "--json").stdout), &list)
		for _, task := range list {
			if task.Name == "cancelled-call" {
				id = task.ID
			}
		}
		return id != ""
	})
	cancel()
	if err := <-called; err == nil {
		t.Fatal("the cancelled call returned no error")
	}
	eventually(t, "the task to move to the background", func() bool { return h.status(id).Background })
	if st := h.status(id); st.Status != "running" {
		t.Fatalf("after the cancel the task is %s, want still running", st.Status)
	}
	os.WriteFile(gate, nil, 0o600)
	h.wait(id)
	text, _ := callTool(t, cs, "task_list", nil)
	if envelopesOf(text, id) != 1 || !strings.Contains(text, "after-cancel") {
		t.Errorf("the next result should carry the task's notification once:\n%s", text)
	}
}

// TestMCPResultsCarryNoControlCharacters: a command and name holding
// escape sequences and bidi controls (a hostile or careless caller's) reach
// the client as visible escapes in every result that echoes them, never as
// the characters a terminal or a reader would act on.
func TestMCPResultsCarryNoControlCharacters(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	cs, _ := h.mcpClient(nil)
	text, isErr := callTool(t, cs, "shell", map[string]any{
		"command": "true # \x1b[31mred\x1b]0;title\a \u202eevil", "name": "\u202ename\u2066", "is_background": true})
	m := regexp.MustCompile(`Started task ([0-9a-f]{8})`).FindStringSubmatch(text)
	if isErr || m == nil {
		t.Fatalf("start: %q (error %v)", text, isErr)
	}
	calls := []struct {
		tool string
		args map[string]any
	}{
		{"task_wait", map[string]any{"task_ids": []string{m[1]}, "timeout_ms": qtaskDeadline.Milliseconds()}},
		{"task_list", nil},
		{"task_status", map[string]any{"task_id": m[1]}},
	}
	if text, _ := callTool(t, cs, "task_status", map[string]any{"task_id": m[1]}); !strings.Contains(text, `# \u001b[31mred\u001b]0;title\u0007 \u202eevil`) {
		t.Errorf("task_status: %q; want the command with its controls as escapes", text)
	}
	for _, c := range calls {
		text, _ := callTool(t, cs, c.tool, c.args)
		if i := strings.IndexFunc(text, func(r rune) bool {
			return (unicode.IsControl(r) && r != '\n' && r != '\t') || unicode.Is(unicode.Bidi_Control, r)
		}); i >= 0 || !strings.Contains(text, `\u202ename\u2066`) {
			t.Errorf("%s: %q; want every control shown as an escape (\\u202e), none raw", c.tool, text)
		}
	}
}

// TestMCPHTTPAddressIsChecked: an empty --http (an unset variable) is not
// taken as "no --http", which would quietly serve stdio instead, and a
// port out of range is a usage error like any other bad --http value.
func TestMCPHTTPAddressIsChecked(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"mcp", "--http", ""}, `--http "": want HOST:PORT`},
		{[]string{"mcp", "--http", "127.0.0.1:99999"}, `port "99999" is not a number from 0 to 65535`},
		{[]string{"mcp", "--http", "127.0.0.1:"}, `--http "127.0.0.1:": no port`},
	} {
		if r := h.qtask(c.args...); r.code != exitUsage || !strings.Contains(r.stderr, c.want) || strings.Count(r.stderr, "\n") != 1 {
			t.Errorf("qtask %q: exit %d %q, want exit %d, one line saying %q", c.args, r.code, r.stderr, exitUsage, c.want)
		}
	}
}

// TestMCPProgressShowsControlsAsEscapes: a progress message is the last
// output line, which a client shows in its own terminal UI; a bidi
// override the output file keeps reaches it as an escape, as in results.
func TestMCPProgressShowsControlsAsEscapes(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.writeConfig("shell = \"sh\"\n")
	gate := filepath.Join(h.root, "gate")
	var mu sync.Mutex
	var first string
	cs, _ := h.mcpClient(&mcp.ClientOptions{ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
		mu.Lock()
		defer mu.Unlock()
		if first == "" {
			first = r.Params.Message
			os.WriteFile(gate, nil, 0o600) // the command ends once a report came
		}
	}})
	p := &mcp.CallToolParams{Name: "shell", Arguments: map[string]any{
		"command": fmt.Sprintf("printf 'step \\342\\200\\256evil\\n'; while [ ! -e %s ]; do sleep 0.05; done", gate),
	}}
	p.SetProgressToken("tok-1")
	if text, isErr := callToolParams(t, cs, p); isErr {
		t.Fatalf("shell: %q", text)
	}
	mu.Lock()
	defer mu.Unlock()
	if first != `step \u202eevil` {
		t.Errorf("progress message = %q, want the bidi override as an escape", first)
	}
}

// TestMCPOutputIsBounded: what task_output carries is bounded by 30,000
// bytes however it is asked: limit 0 is at most 0 bytes (the reader's 0
// means "no limit"), and a large tail_lines on a long output keeps the
// last lines that fit and says how to read the rest.
func TestMCPOutputIsBounded(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	cs, _ := h.mcpClient(nil)
	text, _ := callTool(t, cs, "shell", map[string]any{"command": "seq 1 100000"})
	id := taskIDIn(t, text)
	for _, c := range []struct {
		args map[string]any
		want func(string) bool
	}{
		{map[string]any{"offset": 0, "limit": 0}, func(s string) bool { return strings.HasPrefix(s, "[bytes 0-0 of 588895;") }},
		{map[string]any{"tail_lines": 1000000}, func(s string) bool {
			return strings.Contains(s, "\n100000\n[") && strings.Contains(s, "offset and limit")
		}},
	} {
		c.args["task_id"] = id
		text, isErr := callTool(t, cs, "task_output", c.args)
		if isErr || len(text) > 31000 || !c.want(text) {
			t.Errorf("task_output %v: %d bytes (error %v), starting %.200q, ending %q", c.args, len(text), isErr, text, text[max(len(text)-300, 0):])
		}
	}
}

// TestMCPTaskListIsBounded: with a thousand tasks in the scope, task_list
// (through the real stdio server) shows the newest 50, oldest first, and
// a last line saying how many older ones were left out, how many of those
// run, and how to see them (status, limit, qtask ls); limit shows more, up
// to 500, and is refused beyond; status narrows before the cut. Commands
// are escaped as in every result.
func TestMCPTaskListIsBounded(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.writeConfig("shell = \"sh\"\nkeep_finished = 0\n")
	running := h.start("sleep 300")
	const planted = 1000
	ids := make([]string, planted)
	for i := range planted {
		ids[i] = fmt.Sprintf("%08x", 0xa0000000+i)
		started := running.StartedAt.Add(time.Duration(i+1) * time.Millisecond).UTC()
		command := fmt.Sprintf("echo %d", i)
		if i == planted-1 {
			command = "echo \x1b[31mred\u202e"
		}
		h.plantRecord(ids[i], map[string]any{
			"id": ids[i], "name": "", "kind": "shell", "command": command, "cwd": h.root, "scope": "default",
			"status": "completed", "exit_code": 0, "error": "", "pid": 0, "pane_id": "",
			"started_at": started.Format(time.RFC3339Nano), "ended_at": started.Add(time.Second).Format(time.RFC3339Nano),
			"output_path": filepath.Join(h.state, "output", ids[i]+".log"), "background": true,
		})
	}
	cs, _ := h.mcpClient(nil)
	list := func(args map[string]any) (text string, entries []string) {
		t.Helper()
		text, isErr := callTool(t, cs, "task_list", args)
		if isErr {
			t.Fatalf("task_list %v: error %q", args, text)
		}
		for _, line := range strings.Split(text, "\n") {
			if id, _, ok := strings.Cut(line, "  "); ok && len(id) == 8 {
				entries = append(entries, id)
			}
		}
		return text, entries
	}
	text, entries := list(nil)
	if len(entries) != 50 || entries[0] != ids[planted-50] || entries[49] != ids[planted-1] {
		t.Errorf("task_list shows %d tasks %v…, want the newest 50, oldest first", len(entries), entries[:min(len(entries), 3)])
	}
	wantLine := "… 951 older tasks not shown, of 1001 in all (1 of them running: status \"running\" lists those). " +
		"To see them: status narrows the list, limit shows more (at most 500), `qtask ls --scope default` lists them all."
	if !strings.HasSuffix(text, "\n"+wantLine) {
		t.Errorf("task_list's last line:\n%s\nwant:\n%s", lastBytes([]byte(text), 400), wantLine)
	}
	if !strings.Contains(text, `echo \u001b[31mred\u202e`) || strings.ContainsAny(text, "\x1b\u202e") {
		t.Errorf("task_list does not escape the command: %q", lastBytes([]byte(text), 600))
	}
	if text, entries = list(map[string]any{"limit": 500}); len(entries) != 500 || !strings.Contains(text, "… 501 older tasks not shown, of 1001 in all (1 of them running") {
		t.Errorf("limit 500: %d tasks, last line %q", len(entries), lastBytes([]byte(text), 300))
	}
	if text, entries = list(map[string]any{"status": "running"}); len(entries) != 1 || entries[0] != running.ID || strings.Contains(text, "not shown") {
		t.Errorf("status running: %q", text)
	}
	if text, entries = list(map[string]any{"status": "completed", "limit": 3}); len(entries) != 3 || !strings.HasSuffix(text, "… 997 older tasks not shown, of 1000 in all. "+
		"To see them: status narrows the list, limit shows more (at most 500), `qtask ls --scope default` lists them all.") {
		t.Errorf("status completed, limit 3: %q", text)
	}
	for _, bad := range []int{0, 501} {
		if text, isErr := callTool(t, cs, "task_list", map[string]any{"limit": bad}); !isErr || !strings.Contains(text, "limit must be from 1 to 500") {
			t.Errorf("limit %d: error %v %q", bad, isErr, text)
		}
	}
}
