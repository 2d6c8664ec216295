// Package mcpserver is qtask's MCP server: the tools an MCP client (a coding
// agent without hooks, or one with them as a second path) uses to start,
// read, wait on and stop qtask tasks, and the delivery of the scope's task
// notifications in every tool result.
//
// Results are plain text and no tool declares an output schema: Claude
// shows the model only the structured content of a tool that declares one,
// gemini only the text, so text is the one place every client passes on.
package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"
	"unicode"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/qtask/qtask/agent"
	"github.com/qtask/qtask/tasks"
	"github.com/qtask/qtask/tasks/taskid"
)

// Options is what the server needs from its caller (the CLI), resolved once.
type Options struct {
	Store *tasks.Store
	// Start is the template of every start: environment, shell, session,
	// tmux server, qtask binary, output cap, stop grace and the caller's
	// pane. The server fills in the scope, the command and its flags.
	Start tasks.StartOptions
	// Scope is the scope of a call's tasks and notifications, asked at
	// each call: the agent's session may be noted only after the server
	// started (gemini-cli's hooks note it, tasks.Store.NoteAgentProcess).
	// Never a person's pane or "default": the server's tasks are the
	// agent's, and a person's are not told to it.
	Scope func() string
	// Dir is the directory a relative cwd is taken against (the server's).
	Dir string
	// ForegroundTimeout is how long a foreground shell call waits when the
	// call gives no timeout_ms (0: for as long as it runs).
	ForegroundTimeout time.Duration
	// NoLongRunNote leaves out the note after a long foreground call
	// (config long_run_note = "off", which silences it everywhere).
	NoLongRunNote bool
	// Started, if set, runs after each start (the CLI prunes old tasks).
	Started func()
	Version string
}

// maxWait bounds a blocking call (a foreground shell, task_wait): clients
// give up on a request after about ten minutes.
const maxWait = 10 * time.Minute

// maxTextBytes bounds the output a result carries, as agents' own shell
// tools do; the rest stays in the output file.
const maxTextBytes = 30000

const instructions = `qtask runs each shell command as a task in its own tmux window, where the user can watch it. ` +
	`Tasks outlive this server and this conversation. Run long commands with shell {is_background: true}, ` +
	`then task_wait, task_output or task_stop them by id. When a background task ends, ` +
	`a <task-notification> is added to the result of your next qtask call, once. ` +
	`To be told when output appears (a server ready, a build error), use monitor rather than sleeping and polling; ` +
	`to start a server and go on once it is up, give shell ready_pattern or ready_port.`

// New builds the server and its tools.
func New(opts Options) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "qtask", Version: opts.Version},
		&mcp.ServerOptions{Instructions: instructions})
	h := &handlers{opts: opts}
	addTool(s, h, &mcp.Tool{Name: "shell", Description: shellDescription}, h.shell)
	addTool(s, h, &mcp.Tool{Name: "task_list", Description: "List this session's qtask tasks (running and ended) with status, runtime, command and output file: the newest 50, or limit (at most 500); a last line says how many older ones were left out."}, h.list)
	addTool(s, h, &mcp.Tool{Name: "task_status", Description: "Show one task: status, exit code, command, cwd, times, output file, and the end of its output."}, h.status)
	addTool(s, h, &mcp.Tool{Name: "task_output", Description: taskOutputDescription}, h.output)
	addTool(s, h, &mcp.Tool{Name: "task_stop", Description: "Stop a running task: SIGTERM to its whole process group, SIGKILL after a grace period. Returns once it has ended."}, h.stop)
	addTool(s, h, &mcp.Tool{Name: "task_wait", Description: taskWaitDescription}, h.wait)
	addTool(s, h, &mcp.Tool{Name: "monitor", Description: monitorDescription}, h.monitor)
	s.AddReceivingMiddleware(h.argumentErrors)
	return s
}

// sdkArgumentError starts the SDK's own tool error for arguments that do
// not fit the tool's input schema; the handler never ran.
const sdkArgumentError = `validating "arguments": `

// sdkDecodeField finds the argument in the SDK's error for arguments that
// fit the schema but not the Go type (an integer past int64, 1e30): the
// SDK passes encoding/json's error through, naming the struct field.
var sdkDecodeField = regexp.MustCompile(`Go struct field \S*?\.?(\w+) of type (\w+)`)

// argumentErrors rewords the SDK's errors for arguments the handler never
// saw (schema errors, decoding errors) as qtask's others are worded (one
// line naming the tool); like every error, it carries no notifications
// (see addTool). Every error qtask's handlers return starts with
// "Error: ", so any other tool error came from the SDK.
func (h *handlers) argumentErrors(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		creq, isCall := req.(*mcp.CallToolRequest)
		tr, isResult := res.(*mcp.CallToolResult)
		if err != nil || !isCall || !isResult || !tr.IsError || len(tr.Content) != 1 {
			return res, err
		}
		text, ok := tr.Content[0].(*mcp.TextContent)
		if !ok || strings.HasPrefix(text.Text, "Error: ") {
			return res, err
		}
		text.Text = fmt.Sprintf("Error: bad arguments for %s: %s", creq.Params.Name, visible(sdkArgumentWhy(text.Text)))
		return res, nil
	}
}

// sdkArgumentWhy is the SDK's reason for refusing arguments, as one line
// without Go type names.
func sdkArgumentWhy(text string) string {
	if m := sdkDecodeField.FindStringSubmatch(text); m != nil {
		return fmt.Sprintf("%s is out of range: give a whole number that fits in 64 bits", m[1])
	}
	why := strings.TrimPrefix(strings.TrimPrefix(text, sdkArgumentError), "validating root: ")
	return oneLine(errors.New(why))
}

// handlers holds what every tool call shares.
type handlers struct{ opts Options }

// call is one tool call's view of the world.
type call struct {
	ctx   context.Context
	req   *mcp.CallToolRequest
	store *tasks.Store
	// own is the id of the task the result itself reports the end of:
	// its notification is consumed without being repeated.
	own string
	// scope is the call's scope (Options.Scope).
	scope string
}

// start is the template of a start in the call's scope.
func (h *handlers) start(c *call) tasks.StartOptions {
	return h.opts.Start.InScope(c.scope)
}

// addTool registers a tool whose handler returns text. Every result
// carries the scope's pending notifications; an error is a tool error of
// one line, never a protocol error, so the model reads it and the server
// serves on, and carries none: qwen-code (0.24.4) shows the model an
// error's text twice (as the error and as the result), so a notification
// on it reached the model twice. They wait for the next result or hook.
func addTool[In any](s *mcp.Server, h *handlers, t *mcp.Tool, fn func(*call, In) (string, error)) {
	mcp.AddTool(s, t, func(ctx context.Context, req *mcp.CallToolRequest, in In) (*mcp.CallToolResult, any, error) {
		c := &call{ctx: ctx, req: req, store: h.opts.Store, scope: h.opts.Scope()}
		text, err := fn(c, in)
		res := &mcp.CallToolResult{}
		if err != nil {
			res.IsError = true
			res.Content = []mcp.Content{&mcp.TextContent{Text: visible("Error: " + oneLine(err))}}
			return res, nil, nil
		}
		text = visible(text) + h.pending(c)
		res.Content = []mcp.Content{&mcp.TextContent{Text: text}}
		return res, nil, nil
	})
}

// pending claims the scope's notifications and renders them for the end
// of a result; they leave the queue once the result is written (see
// handover.go). A queue that cannot be read is said so in the result, and
// its notifications stay queued for the next reader.
func (h *handlers) pending(c *call) string {
	d, err := c.store.Notifications(c.ctx, []string{c.scope}, tasks.NotifyOptions{TailBytes: agent.TailBytes})
	if err != nil {
		return "\n\n(qtask could not read the task notifications: " + oneLine(err) + ")"
	}
	deliverWithResult(c.req, d)
	var b strings.Builder
	for _, n := range d.List {
		if n.Task.ID == c.own && n.Event == nil {
			continue // the result tells that end; a monitor's events it does not
		}
		if b.Len() == 0 {
			b.WriteString("\n\nTask notifications (ended tasks, monitor events):")
		}
		b.WriteString("\n")
		b.WriteString(agent.Envelope(n))
	}
	return b.String()
}

// visible shows the characters a client's terminal or a reader could act
// on rather than see (C0 and C1 controls, DEL, bidi overrides and
// isolates) as \uXXXX escapes, as the CLI prints values read from disk: a
// task's command, name and cwd are whatever its caller wrote. Newlines and
// tabs are text. The notifications appended after it are cleaned by their
// envelope.
func visible(s string) string {
	if strings.IndexFunc(s, hidden) < 0 {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if hidden(r) {
			fmt.Fprintf(&b, "\\u%04x", r)
		} else {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// hidden reports the runes visible escapes.
func hidden(r rune) bool {
	return r != '\n' && r != '\t' && (unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r))
}

// oneLine is an error as one line the model can act on.
func oneLine(err error) string {
	switch {
	case errors.Is(err, taskid.ErrNotFound):
		return err.Error() + ": see task_list for the ids"
	case errors.Is(err, context.Canceled):
		return "the call was cancelled"
	}
	return strings.Join(strings.Fields(err.Error()), " ")
}

// argError is a bad argument, named with what to do instead.
func argError(format string, a ...any) error {
	return &tasks.ArgumentError{Msg: fmt.Sprintf(format, a...)}
}

// waitFor converts a timeout_ms argument, bounded by maxWait.
func waitFor(name string, ms *int64, def time.Duration) (time.Duration, error) {
	if ms == nil {
		return min(def, maxWait), nil
	}
	if *ms < 0 {
		return 0, argError("%s must not be negative", name)
	}
	if *ms > maxWait.Milliseconds() {
		return maxWait, nil // before the multiplication, which could overflow
	}
	return time.Duration(*ms) * time.Millisecond, nil
}
