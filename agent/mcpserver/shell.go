package mcpserver

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"regexp"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/qtask/qtask/agent"
	"github.com/qtask/qtask/tasks"
)

const shellDescription = `Run a shell command as a qtask task, in its own tmux window the user can watch.
Foreground (default): waits for the command and returns its output and exit status. If it is still running after timeout_ms (default 2 minutes, at most 10), it is moved to the background, not killed, and the result gives its task id.
Background (is_background: true): returns at once with the task id and output file; you are told when it ends (a <task-notification> in a later qtask result), or use task_wait.
Start and wait until ready (a dev server, a watcher): ready_pattern (a regular expression a line of its output will match, e.g. "Listening on") or ready_port (a port it will accept connections on at 127.0.0.1) starts it in the background and returns once it is ready, instead of you polling with sleep. If it ends first, or ready_timeout_ms passes (default 2 minutes, at most 10; it then keeps running), the result says so with its last lines of output.
Do not end the command with '&': qtask does the backgrounding.`

// shellArgs are the arguments of the shell tool.
type shellArgs struct {
	Command      string `json:"command" jsonschema:"the shell command, run by the configured shell with -c"`
	IsBackground bool   `json:"is_background,omitempty" jsonschema:"start it in the background and return at once"`
	TimeoutMS    *int64 `json:"timeout_ms,omitempty" jsonschema:"foreground only: after this many milliseconds move it to the background (at most 600000)"`
	Cwd          string `json:"cwd,omitempty" jsonschema:"directory to run in (default: the agent's working directory)"`
	Name         string `json:"name,omitempty" jsonschema:"a short label for the task"`
	ReadyPattern string `json:"ready_pattern,omitempty" jsonschema:"start it in the background and return once a line of its output matches this regular expression (Go syntax)"`
	ReadyPort    *int   `json:"ready_port,omitempty" jsonschema:"start it in the background and return once 127.0.0.1:ready_port accepts a TCP connection"`
	ReadyTimeout *int64 `json:"ready_timeout_ms,omitempty" jsonschema:"with ready_pattern or ready_port: stop waiting after this many milliseconds (default 120000, at most 600000); the task keeps running"`
}

// progressEvery is how often a long foreground call reports its latest
// output line, when the client asked for progress.
const progressEvery = time.Second

func (h *handlers) shell(c *call, in shellArgs) (string, error) {
	if strings.TrimSpace(in.Command) == "" {
		return "", argError("command is empty: give the shell command to run")
	}
	if err := bareAmpersand(in.Command, "set is_background: true instead"); err != nil {
		return "", err
	}
	gate, err := readyGate(in)
	if err != nil {
		return "", err
	}
	if gate != nil {
		in.IsBackground = true
	}
	if !in.IsBackground {
		if err := agent.CheckSleep(in.Command, "qtask"); err != nil {
			return "", err
		}
	}
	timeout, err := waitFor("timeout_ms", in.TimeoutMS, h.opts.ForegroundTimeout)
	if err != nil {
		return "", err
	}
	if timeout == 0 {
		timeout = maxWait // "never" still ends where clients give up
	}
	start := h.start(c)
	start.Command, start.Name, start.Background = in.Command, in.Name, in.IsBackground
	start.Cwd = h.opts.Dir
	if in.Cwd != "" {
		start.Cwd = tasks.AbsDir(h.opts.Dir, in.Cwd)
	}
	if !in.IsBackground {
		start.WaiterPID = os.Getpid()
	}
	t, err := c.store.Start(c.ctx, start)
	if err != nil {
		return "", err
	}
	if h.opts.Started != nil {
		h.opts.Started()
	}
	if gate != nil {
		return h.awaitReady(c, t, *gate)
	}
	if in.IsBackground {
		return startedText(t), nil
	}
	return h.foreground(c, t, timeout)
}

// startedText is the result of a background start.
func startedText(t *tasks.Task) string {
	return fmt.Sprintf("Started task %s in the background.\nOutput file: %s\n"+
		"You will be told when it ends. Meanwhile: task_output {task_id: %q} reads its output, "+
		"task_wait {task_ids: [%q]} waits for it, task_stop stops it.", t.ID, t.OutputPath, t.ID, t.ID)
}

// readyGate is the readiness gate the arguments ask for, nil for none.
func readyGate(in shellArgs) (*tasks.ReadyOptions, error) {
	if in.ReadyPattern == "" && in.ReadyPort == nil {
		if in.ReadyTimeout != nil {
			return nil, argError("ready_timeout_ms needs a gate: add ready_pattern or ready_port")
		}
		return nil, nil
	}
	if in.ReadyPattern != "" && in.ReadyPort != nil {
		return nil, argError("ready_pattern and ready_port are two gates: give one of them")
	}
	timeout, err := waitFor("ready_timeout_ms", in.ReadyTimeout, tasks.DefaultReadyTimeout)
	if err != nil {
		return nil, err
	}
	gate := &tasks.ReadyOptions{Timeout: timeout}
	if in.ReadyPort != nil {
		if err := tasks.CheckPort(*in.ReadyPort); err != nil {
			return nil, argError("ready_port: %v", err)
		}
		if err := tasks.CheckPortFree(*in.ReadyPort); err != nil {
			return nil, err
		}
		gate.Port = *in.ReadyPort
		return gate, nil
	}
	if gate.Pattern, err = regexp.Compile(in.ReadyPattern); err != nil {
		return nil, argError("ready_pattern is not a regular expression (Go syntax): %v", err)
	}
	return gate, nil
}

// awaitReady waits until a task started in the background is ready, and
// says whether it is, ended first (this result reports its end) or is not
// ready in time (it runs on).
func (h *handlers) awaitReady(c *call, t *tasks.Task, gate tasks.ReadyOptions) (string, error) {
	gate.StopGrace = h.opts.Start.StopGrace
	res, err := c.store.AwaitReady(c.ctx, t.ID, gate)
	if err != nil {
		return "", err
	}
	end := res.Task
	switch res.Outcome {
	case tasks.Ready:
		why := fmt.Sprintf("127.0.0.1:%d accepts connections", gate.Port)
		if gate.Pattern != nil {
			why = "its output line matched: " + res.Line
		}
		return fmt.Sprintf("Task %s is ready: %s\n", end.ID, why) + startedText(end), nil
	case tasks.ReadyEnded:
		c.own = end.ID // this result is its notification
		return fmt.Sprintf("Task %s ended before it was ready (%s; waited for %s).\n",
			end.ID, end.StatusText(), gate.Describe()) + tailText(res.Tail), nil
	}
	state := fmt.Sprintf("it keeps running in the background. task_output {task_id: %q} reads its output, task_stop stops it.", end.ID)
	if !end.Running() {
		state = fmt.Sprintf("it has ended since (%s).", end.StatusText())
	}
	return fmt.Sprintf("Task %s is not ready after %s (waited for %s); %s\n", end.ID, gate.Timeout, gate.Describe(), state) +
		tailText(res.Tail), nil
}

// tailText introduces the last lines of output of a task that was not
// ready.
func tailText(tail string) string {
	if tail == "" {
		return "It printed nothing."
	}
	return "Last lines of output:\n" + strings.TrimSuffix(tail, "\n")
}

// foreground waits on a task started in the foreground, as `qtask run`
// does. A cancelled call (the client gave up, or went away) moves the task
// to the background rather than killing it: tasks outlive the server, and
// the notification tells the agent how it ended.
func (h *handlers) foreground(c *call, t *tasks.Task, timeout time.Duration) (string, error) {
	out := &tailBuffer{max: maxTextBytes}
	done := make(chan struct{})
	defer close(done)
	go func() {
		select {
		case <-c.ctx.Done():
			h.opts.Store.Promote(context.WithoutCancel(c.ctx), t.ID, h.opts.Start.Session)
		case <-done:
		}
	}()
	if token := c.req.Params.GetProgressToken(); token != nil {
		go reportProgress(c, token, out, done)
	}
	res, err := h.opts.Store.Attend(context.WithoutCancel(c.ctx), t.ID, tasks.AttendOptions{
		Out: out, Timeout: timeout, Session: h.opts.Start.Session, StopGrace: h.opts.Start.StopGrace,
	})
	if err != nil {
		return "", err
	}
	end := res.Task
	var b strings.Builder
	b.WriteString(out.text(end.OutputPath))
	switch {
	case res.Promoted && res.TimedOut:
		fmt.Fprintf(&b, "Still running after %s: moved to the background as task %s (not killed).\n", timeout, end.ID)
	case res.Promoted:
		fmt.Fprintf(&b, "Moved to the background while running, as task %s.\n", end.ID)
	default:
		c.own = end.ID // this result is its notification
		fmt.Fprintf(&b, "Task %s %s.", end.ID, end.StatusText())
		if end.EndedByItself() && !h.opts.NoLongRunNote {
			if hint := agent.AgentLongRunningHint("qtask", end.Runtime(time.Now()), timeout, end.OutputPath); hint != "" {
				b.WriteString("\n" + hint)
			}
		}
		return b.String(), nil
	}
	fmt.Fprintf(&b, "Its output continues in %s. You will be told when it ends; "+
		"task_wait {task_ids: [%q]} waits for it, task_stop stops it.", end.OutputPath, end.ID)
	return b.String(), nil
}

// reportProgress sends the latest output line as a progress notification
// whenever it changed, at most every progressEvery, until done.
func reportProgress(c *call, token any, out *tailBuffer, done <-chan struct{}) {
	tick := time.NewTicker(progressEvery)
	defer tick.Stop()
	began, last := time.Now(), ""
	for {
		select {
		case <-done:
			return
		case <-tick.C:
		}
		line := out.lastLine()
		if line == last {
			continue
		}
		last = line
		c.req.Session.NotifyProgress(c.ctx, &mcp.ProgressNotificationParams{
			ProgressToken: token, Message: visible(line), Progress: time.Since(began).Seconds(),
		})
	}
}

// tailBuffer keeps the last max bytes written to it (cut at a line start
// where one is near) and counts what it dropped. Attend writes to it while
// the progress reporter reads it.
type tailBuffer struct {
	mu      sync.Mutex
	max     int
	buf     []byte
	dropped int64
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > 2*t.max {
		t.trim()
	}
	return len(p), nil
}

// trim drops all but the last max bytes, starting at a line start when
// one lies in the first quarter of what is kept, else at a rune start.
func (t *tailBuffer) trim() {
	cut := len(t.buf) - t.max
	if i := bytes.IndexByte(t.buf[cut:], '\n'); i >= 0 && i < t.max/4 {
		cut += i + 1
	}
	for cut < len(t.buf) && !utf8.RuneStart(t.buf[cut]) {
		cut++
	}
	t.dropped += int64(cut)
	t.buf = append(t.buf[:0], t.buf[cut:]...)
}

// text is the output for a result: what was kept, said to be partial if
// it is, ending with a newline.
func (t *tailBuffer) text(path string) string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.buf) > t.max {
		t.trim()
	}
	var b strings.Builder
	if t.dropped > 0 {
		fmt.Fprintf(&b, "[%d earlier bytes of output left out; the whole output is in %s]\n", t.dropped, path)
	}
	b.Write(t.buf)
	if len(t.buf) > 0 && t.buf[len(t.buf)-1] != '\n' {
		b.WriteByte('\n')
	}
	return b.String()
}

// lastLine is the last non-blank line written so far.
func (t *tailBuffer) lastLine() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	rest := bytes.TrimRight(t.buf, " \t\r\n")
	if i := bytes.LastIndexByte(rest, '\n'); i >= 0 {
		rest = rest[i+1:]
	}
	return string(rest)
}

// bareAmpersand refuses a command ending in a bare '&' with the tool's own
// way to the background (advice), rather than the CLI's `qtask run --bg`
// that Start's own check names; nil for any other command.
func bareAmpersand(command, advice string) error {
	if !tasks.EndsWithBareAmpersand(command) {
		return nil
	}
	return argError("the command ends with a bare '&', which would fork it away from the task qtask tracks: drop the '&' and %s", advice)
}
