package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/qtask/qtask/internal/agenttest"
	"github.com/qtask/qtask/internal/mockmodel"
	"github.com/qtask/qtask/internal/testenv"
)

// serveMCP starts `qtask mcp` with args (--http … or --unix) in h's world
// and returns the first line it printed on stderr with what it printed
// after it, read on demand. It is stopped (SIGTERM) when the test ends.
func (h *harness) serveMCP(args ...string) (first string, rest *bufio.Reader) {
	h.t.Helper()
	server := exec.Command(qtaskBin, append([]string{"mcp"}, args...)...)
	server.Env, server.Dir = h.env, h.root
	stderr, err := server.StderrPipe()
	if err != nil {
		h.t.Fatal(err)
	}
	if err := server.Start(); err != nil {
		h.t.Fatal(err)
	}
	h.t.Cleanup(func() { server.Process.Signal(syscall.SIGTERM); server.Wait() })
	rest = bufio.NewReader(stderr)
	first, err = rest.ReadString('\n')
	if err != nil {
		h.t.Fatalf("qtask mcp %q printed %q, then %v", args, first, err)
	}
	return strings.TrimSpace(first), rest
}

// serveMCPHTTP starts `qtask mcp --http 127.0.0.1:0` with more args and
// returns the URL it serves.
func (h *harness) serveMCPHTTP(args ...string) (url string, rest *bufio.Reader) {
	h.t.Helper()
	first, rest := h.serveMCP(append([]string{"--http", "127.0.0.1:0"}, args...)...)
	url, ok := strings.CutPrefix(first, "qtask mcp: serving ")
	if !ok {
		h.t.Fatalf("qtask mcp --http printed %q, want the URL it serves", first)
	}
	return url, rest
}

// mcpToken is the token `qtask mcp --http` keeps in h's state directory.
func (h *harness) mcpToken() string {
	h.t.Helper()
	data, err := os.ReadFile(filepath.Join(h.state, "mcp-token"))
	if err != nil {
		h.t.Fatal(err)
	}
	return strings.TrimSpace(string(data))
}

// withHeader sends every request with header set to value, as an MCP
// client configured with headers does.
type withHeader struct {
	header, value string
	base          http.RoundTripper
}

func (w withHeader) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set(w.header, w.value)
	return w.base.RoundTrip(r)
}

// httpMCPClient connects the Go SDK's client to the streamable HTTP
// server at url through hc, and closes it when the test ends.
func httpMCPClient(t *testing.T, url string, hc *http.Client) *mcp.ClientSession {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), qtaskDeadline)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "qtask-test", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: hc, DisableStandaloneSSE: true}, nil)
	if err != nil {
		t.Fatalf("connect to %s: %v", url, err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// otherUser creates the local user name (no home) for a test that acts as
// it with runuser, and removes it when the test ends.
func otherUser(t *testing.T, name string) string {
	t.Helper()
	if os.Geteuid() != 0 {
		testenv.Unavailable(t, "acting as another local user needs root")
	}
	testenv.NeedProgram(t, "useradd")
	testenv.NeedProgram(t, "runuser")
	if out, err := exec.Command("useradd", "-M", name).CombinedOutput(); err != nil && !strings.Contains(string(out), "already exists") {
		t.Fatalf("useradd -M %s: %v %s", name, err, out)
	}
	t.Cleanup(func() { exec.Command("userdel", name).Run() })
	return name
}

// mcpCallScript posts, with curl, what a client sends to run a command:
// initialize, notifications/initialized, then tools/call shell {"command":
// $2}, with the session id it got, if any. $1 is the URL, the rest are
// more curl arguments (a header, a unix socket). It prints each answer's
// HTTP status and body.
const mcpCallScript = `url=$1 command=$2
shift 2
post() {
	curl -sS --max-time 60 -D headers -o body -w '%{http_code}' "$@" \
		-H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' \
		-H 'MCP-Protocol-Version: 2025-06-18' ${session:+-H "Mcp-Session-Id: $session"} "$url"
	echo; cat body; echo
}
cd "$(mktemp -d)"
init='{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"intruder","version":"1"}}}'
post "$@" -d "$init"
session=$(sed -n 's/^Mcp-Session-Id: *//ip' headers | tr -d '\r')
post "$@" -d '{"jsonrpc":"2.0","method":"notifications/initialized"}'
post "$@" -d '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"shell","arguments":{"command":"'"$command"'"}}}'
`

// mcpCall runs mcpCallScript as user ("" for the test's own) with curl
// arguments curlArgs, and returns its output.
func mcpCall(t *testing.T, user, url, command string, curlArgs ...string) string {
	t.Helper()
	argv := append([]string{"sh", "-c", mcpCallScript, "sh", url, command}, curlArgs...)
	if user != "" {
		argv = append([]string{"runuser", "-u", user, "--"}, argv...)
	}
	out, err := exec.Command(argv[0], argv[1:]...).CombinedOutput()
	if err != nil {
		t.Logf("%q: %v", argv, err)
	}
	return string(out)
}

// taskCount is how many tasks h's state holds, in any scope.
func (h *harness) taskCount() int {
	h.t.Helper()
	var list []json.RawMessage
	if err := json.Unmarshal([]byte(h.mustQtask("ls", "--json")), &list); err != nil {
		h.t.Fatal(err)
	}
	return len(list)
}

// TestMCPHTTPRefusesAnotherUser: `qtask mcp --http` on a loopback port ran
// commands for any local user (issue 24): loopback does not tell users
// apart. Now another user's initialize and tools/call shell, the very
// requests that ran `id` as root, get 401 and run nothing: no task, no
// marker file. The same requests with the token the server printed (and
// keeps 0600 in the state directory) run the command; a wrong token is
// refused like none.
func TestMCPHTTPRefusesAnotherUser(t *testing.T) {
	t.Parallel()
	testenv.NeedProgram(t, "curl")
	user := otherUser(t, "qtmcpintruder")
	h := newHarness(t)
	h.writeConfig("shell = \"sh\"\n")
	url, rest := h.serveMCPHTTP()
	marker := filepath.Join(os.TempDir(), fmt.Sprintf("qtask-intruder-%d", os.Getpid()))
	os.Remove(marker)
	t.Cleanup(func() { os.Remove(marker) })
	command := "id; touch " + marker
	for _, c := range []struct {
		who      string
		curlArgs []string
	}{
		{"another user", nil},
		{"another user with a wrong token", []string{"-H", "Authorization: Bearer ABCDEFGHIJKLMNOPQRSTUVWXYZ"}},
	} {
		out := mcpCall(t, user, url, command, c.curlArgs...)
		if strings.Count(out, "401\n") != 3 || strings.Contains(out, "uid=") {
			t.Errorf("%s: want 401 for initialize, initialized and tools/call, got:\n%s", c.who, out)
		}
	}
	if n := h.taskCount(); n != 0 {
		t.Fatalf("%d tasks after the refused calls, want none", n)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("the refused tools/call ran its command")
	}
	token := h.mcpToken()
	if line, _ := rest.ReadString('\n'); !strings.Contains(line, `"Authorization: Bearer `+token+`"`) || !strings.Contains(line, filepath.Join(h.state, "mcp-token")) {
		t.Errorf("qtask mcp --http printed %q, want the header to send with its token and where the token is kept", line)
	}
	if fi, err := os.Stat(filepath.Join(h.state, "mcp-token")); err != nil || fi.Mode().Perm() != 0o600 || len(token) < 26 {
		t.Fatalf("token file: %v %v, token %q; want 0600 and at least 128 random bits", fi, err, token)
	}
	out := mcpCall(t, "", url, command, "-H", "Authorization: Bearer "+token)
	if !strings.HasPrefix(out, "200\n") || !strings.Contains(out, "uid=0") {
		t.Errorf("with the token: want the command's output, got:\n%s", out)
	}
	if _, err := os.Stat(marker); err != nil || h.taskCount() != 1 {
		t.Errorf("with the token the command did not run as a task: %v, %d tasks", err, h.taskCount())
	}
	// The Go SDK's client, given the header as clients are configured.
	cs := httpMCPClient(t, url, &http.Client{Transport: withHeader{"Authorization", "Bearer " + token, http.DefaultTransport}})
	if text, isErr := callTool(t, cs, "shell", map[string]any{"command": "echo over-http-$((6*7))"}); isErr || !strings.Contains(text, "over-http-42") {
		t.Errorf("shell through the SDK client with the token: %q", text)
	}
}

// TestMCPHTTPKeepsItsToken: the token survives a restart, so a client
// configured once keeps working; a token file others could read, or a
// symlink in its place, is refused with one line saying what to do,
// before anything listens.
func TestMCPHTTPKeepsItsToken(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.serveMCPHTTP()
	token := h.mcpToken()
	_, rest := h.serveMCPHTTP()
	if line, _ := rest.ReadString('\n'); !strings.Contains(line, "Bearer "+token+`" (kept in`) {
		t.Errorf("a second server printed %q, want the same token %s, not a new one", line, token)
	}
	file := filepath.Join(h.state, "mcp-token")
	os.Chmod(file, 0o644)
	r := h.qtask("mcp", "--http", "127.0.0.1:0")
	if r.code != 1 || !strings.Contains(r.stderr, "has mode 0644: others may read the token; chmod 600 it") || strings.Count(r.stderr, "\n") != 1 {
		t.Errorf("a 0644 token file: exit %d %q, want exit 1 saying to chmod it", r.code, r.stderr)
	}
	os.Remove(file)
	os.Symlink(filepath.Join(h.root, "elsewhere"), file)
	if r := h.qtask("mcp", "--http", "127.0.0.1:0"); r.code != 1 || !strings.Contains(r.stderr, "it is a symlink") {
		t.Errorf("a symlink for the token file: exit %d %q, want exit 1 saying so", r.code, r.stderr)
	}
	if _, err := os.Lstat(filepath.Join(h.root, "elsewhere")); err == nil {
		t.Error("the token was written through the symlink")
	}
}

// TestMCPNoAuth: --no-auth is refused (exit 2, one line) unless --http
// names a loopback IP address; with one, the server answers without a
// token and warns that every local user can run commands through it.
func TestMCPNoAuth(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"mcp", "--no-auth"}, "--no-auth applies to --http"},
		{[]string{"mcp", "--unix", "--no-auth"}, "--no-auth applies to --http"},
		{[]string{"mcp", "--http", "localhost:0", "--no-auth"}, `--no-auth needs --http with a loopback IP address, e.g. --http 127.0.0.1:8765 (got "localhost:0")`},
		{[]string{"mcp", "--http", "0.0.0.0:0", "--listen-any", "--no-auth"}, "--no-auth cannot go with --listen-any"},
		{[]string{"mcp", "--http", "127.0.0.1:0", "--unix"}, "--unix and --http"},
	} {
		if r := h.qtask(c.args...); r.code != exitUsage || !strings.Contains(r.stderr, c.want) || strings.Count(r.stderr, "\n") != 1 {
			t.Errorf("qtask %q: exit %d %q, want exit %d, one line saying %q", c.args, r.code, r.stderr, exitUsage, c.want)
		}
	}
	url, rest := h.serveMCPHTTP("--no-auth")
	if line, _ := rest.ReadString('\n'); !strings.Contains(line, "warning: --no-auth: every user and program on this machine can run commands as you through "+url) {
		t.Errorf("qtask mcp --no-auth printed %q, want the warning", line)
	}
	if _, err := os.Stat(filepath.Join(h.state, "mcp-token")); err == nil {
		t.Error("--no-auth made a token file")
	}
	cs := httpMCPClient(t, url, http.DefaultClient)
	if text, isErr := callTool(t, cs, "shell", map[string]any{"command": "echo open-$((6*7))"}); isErr || !strings.Contains(text, "open-42") {
		t.Errorf("shell without a token under --no-auth: %q", text)
	}
}

// TestMCPUnixSocket: `qtask mcp --unix` serves on mcp.sock in the state
// directory, mode 0600: its user's client connects (no token), another
// user is refused by the socket's own permission bits (tried through a
// hard link in a directory anyone may enter, so the state directory's
// 0700 is not what stops it) and runs nothing. A stale socket left by a
// killed server is replaced; a live one is not taken over.
func TestMCPUnixSocket(t *testing.T) {
	t.Parallel()
	testenv.NeedProgram(t, "curl")
	user := otherUser(t, "qtmcpsockuser")
	h := newHarness(t)
	h.writeConfig("shell = \"sh\"\n")
	sock := filepath.Join(h.state, "mcp.sock")
	os.MkdirAll(h.state, 0o700)
	stale, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	stale.(*net.UnixListener).SetUnlinkOnClose(false)
	stale.Close() // a socket file nobody answers on, as a SIGKILL leaves it
	first, _ := h.serveMCP("--unix")
	if want := "qtask mcp: serving http://localhost/mcp on the unix socket " + sock; !strings.HasPrefix(first, want) {
		t.Fatalf("qtask mcp --unix printed %q, want %q", first, want)
	}
	fi, err := os.Lstat(sock)
	if err != nil || fi.Mode().Type() != os.ModeSocket || fi.Mode().Perm() != 0o600 {
		t.Fatalf("the socket: %v %v, want a socket with mode 0600", fi, err)
	}
	if r := h.qtask("mcp", "--unix"); r.code != 1 || !strings.Contains(r.stderr, "another qtask mcp --unix serves on it already") {
		t.Errorf("a second --unix server: exit %d %q", r.code, r.stderr)
	}
	open, err := os.MkdirTemp("", "qtpub")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(open) })
	os.Chmod(open, 0o755)
	link := filepath.Join(open, "mcp.sock")
	if err := os.Link(sock, link); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{sock, link} {
		out := mcpCall(t, user, "http://localhost/mcp", "id", "-v", "--unix-socket", path)
		if !strings.Contains(out, "Permission denied") || strings.Contains(out, "uid=") {
			t.Errorf("another user through %s: want permission denied, got:\n%s", path, out)
		}
	}
	if n := h.taskCount(); n != 0 {
		t.Fatalf("%d tasks after another user's calls, want none", n)
	}
	hc := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, "unix", sock)
	}}}
	cs := httpMCPClient(t, "http://localhost/mcp", hc)
	if text, isErr := callTool(t, cs, "shell", map[string]any{"command": "echo by-socket-$((6*7))"}); isErr || !strings.Contains(text, "by-socket-42") {
		t.Errorf("shell over the socket: %q", text)
	}
}

// httpMCPServer is `qtask mcp --http` as a client configured for it sees
// it: its URL, and the token header, when withToken.
func (h *harness) httpMCPServer(url string, withToken bool) agenttest.MCPServer {
	s := agenttest.MCPServer{Name: "qtask", URL: url}
	if withToken {
		s.Headers = map[string]string{"Authorization": "Bearer " + h.mcpToken()}
	}
	return s
}

// TestRealAgentMCPInspectorOverHTTP: the official MCP inspector CLI, given the
// token header as docs/AGENTS.md shows, lists qtask's tools and runs a
// command through `qtask mcp --http`; without the header it gets nothing
// and runs nothing.
func TestRealAgentMCPInspectorOverHTTP(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.writeConfig("shell = \"sh\"\n")
	url, _ := h.serveMCPHTTP()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	inspect := func(server agenttest.MCPServer, args ...string) (string, int) {
		cmd := agenttest.InspectorCommand(ctx, t, server, args...)
		out, _ := agenttest.Output(ctx, cmd)
		return string(out), cmd.ProcessState.ExitCode()
	}
	shell := []string{"--method", "tools/call", "--tool-name", "shell", "--tool-arg", "command=echo inspected-$((6*7))"}
	if out, code := inspect(h.httpMCPServer(url, false), shell...); code == 0 || strings.Contains(out, "inspected-42") {
		t.Errorf("without the token: exit %d\n%s", code, out)
	}
	if n := h.taskCount(); n != 0 {
		t.Fatalf("%d tasks after a call without the token, want none", n)
	}
	server := h.httpMCPServer(url, true)
	if out, code := inspect(server, "--method", "tools/list"); code != 0 || !strings.Contains(out, `"name": "task_wait"`) {
		t.Errorf("tools/list with the token: exit %d\n%s", code, out)
	}
	if out, code := inspect(server, shell...); code != 0 || !strings.Contains(out, "inspected-42") || !strings.Contains(out, "completed (exit 0)") {
		t.Errorf("shell with the token: exit %d\n%s", code, out)
	}
}

// TestRealAgentMCPOverHTTP: each pinned agent, configured for `qtask
// mcp --http` with the token header as docs/AGENTS.md shows (Claude
// {"type": "http", "url", "headers"}, qwen and gemini {"httpUrl",
// "headers"}), runs a command with qtask's shell tool, and the model reads
// its output.
func TestRealAgentMCPOverHTTP(t *testing.T) {
	t.Parallel()
	eachAgent(t, func(t *testing.T, a agenttest.Agent, h *harness) {
		url, _ := h.serveMCPHTTP()
		shell := a.MCPTool("qtask", "shell")
		marker := fmt.Sprintf("over-http-%d", rand.Uint32())
		mock := mockmodel.StartForTest(t, mockmodel.Tool(shell, map[string]any{"command": "echo " + marker}), mockmodel.Text("done"))
		ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
		defer cancel()
		run := &agenttest.Run{Agent: a, Prompt: "run the command", Model: mock.URL(), MCP: []agenttest.MCPServer{h.httpMCPServer(url, true)}}
		if a == agenttest.Claude {
			run.Args = []string{"--allowedTools", shell}
		}
		out, err := agenttest.Output(ctx, agenttest.Command(ctx, t, run))
		if err != nil {
			t.Fatalf("%v\n%s\nrequests:\n%s", err, out, mock.Summary())
		}
		last, ok := mock.LastMain()
		if results := last.ToolResults(); !ok || len(results) != 1 || !strings.Contains(results[0], marker) || !strings.Contains(results[0], "completed (exit 0)") {
			t.Errorf("the shell result the model read: %q\nrequests:\n%s", results, mock.Summary())
		}
	})
}
