package mcpserver

import (
	"fmt"
	"strings"
	"time"

	"github.com/qtask/qtask/tasks"
	"github.com/qtask/qtask/tasks/monitor"
)

var monitorDescription = fmt.Sprintf(`Watch output instead of polling it: run command as a monitor task (in its own tmux window), or watch the running task task_id, and get each output line (or each line matching match, an RE2 regular expression) as a <task-notification> with <kind>monitor</kind>, <status>running</status>, <event-count> and the line in <result>, in the results of your later qtask calls. Returns at once.
Throttled: %d events at once, then one a second, and at most %d wait unread; lines beyond that are dropped and counted. It ends after max_events events (default %d, at most %d), after idle_timeout_ms without output (default %d, at most %d), or when its command (or the watched task) ends; then one more notification gives the total and the dropped lines. Ending by itself (max_events, idle_timeout_ms) it stops its command, never a watched task: run a server with shell (is_background, or ready_pattern to return once it is up) and monitor its task_id, not as command. task_stop stops it. At most %d run at once.
Use it for "tell me each time the server logs an error / the build prints ERROR" instead of sleeping and reading output.`,
	monitor.Burst, monitor.MaxUnread, monitor.DefaultMaxEvents, monitor.MaxEventsCap,
	monitor.DefaultIdle.Milliseconds(), monitor.IdleCap.Milliseconds(), monitor.MaxRunning)

// monitorArgs are the arguments of the monitor tool.
type monitorArgs struct {
	Command       string `json:"command,omitempty" jsonschema:"the shell command to run as a monitor (give this or task_id)"`
	TaskID        string `json:"task_id,omitempty" jsonschema:"a running task (id, id prefix or name) whose output to watch instead, from now on (give this or command)"`
	Match         string `json:"match,omitempty" jsonschema:"only lines matching this regular expression (RE2) are events"`
	MaxEvents     int    `json:"max_events,omitempty" jsonschema:"end after this many events (default 1000, at most 10000)"`
	IdleTimeoutMS *int64 `json:"idle_timeout_ms,omitempty" jsonschema:"end after this many milliseconds without output (default 300000, at most 600000)"`
	Cwd           string `json:"cwd,omitempty" jsonschema:"directory to run command in (default: the agent's working directory)"`
	Name          string `json:"name,omitempty" jsonschema:"a short label for the monitor"`
}

func (h *handlers) monitor(c *call, in monitorArgs) (string, error) {
	if (strings.TrimSpace(in.Command) == "") == (in.TaskID == "") {
		return "", argError("give either command (a command to run as a monitor) or task_id (a running task to watch), not both or neither")
	}
	if err := bareAmpersand(in.Command, "let the monitor run it: a monitor runs in the background already"); err != nil {
		return "", err
	}
	mo := monitor.Options{Match: in.Match, MaxEvents: in.MaxEvents}
	if in.IdleTimeoutMS != nil {
		d, err := idleTimeout(in.IdleTimeoutMS)
		if err != nil {
			return "", err
		}
		mo.IdleTimeout = d
	}
	start := h.start(c)
	start.Command, start.Name, start.Cwd = in.Command, in.Name, h.opts.Dir
	if in.Cwd != "" {
		start.Cwd = tasks.AbsDir(h.opts.Dir, in.Cwd)
	}
	start.Monitor = &tasks.MonitorOptions{Options: mo, Source: in.TaskID}
	t, err := c.store.Start(c.ctx, start)
	if err != nil {
		return "", err
	}
	if h.opts.Started != nil {
		h.opts.Started()
	}
	watching := "its output"
	if in.TaskID != "" {
		watching = "the output of task " + in.TaskID
	}
	return fmt.Sprintf("Started monitor task %s, watching %s. Each event arrives as a <task-notification> "+
		"in the result of a later qtask call; task_wait {task_ids: [%q]} waits for its end, task_stop stops it.",
		t.ID, watching, t.ID), nil
}

// idleTimeout converts idle_timeout_ms, refusing a value over the cap
// before converting it: milliseconds past about 292 years overflow a
// time.Duration and would read as negative.
func idleTimeout(ms *int64) (time.Duration, error) {
	switch {
	case *ms <= 0:
		return 0, argError("idle_timeout_ms must be positive")
	case *ms > monitor.IdleCap.Milliseconds():
		return 0, argError("idle_timeout_ms %d is over the cap of %d: ask for less", *ms, monitor.IdleCap.Milliseconds())
	}
	return time.Duration(*ms) * time.Millisecond, nil
}
