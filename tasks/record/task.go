package record

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/qtask/qtask/tmux"
)

// Status is where a task is in its life. Leaving StatusRunning happens once.
type Status string

// The four statuses. Every status but running is terminal.
const (
	StatusRunning   Status = "running"
	StatusCompleted Status = "completed"
	StatusFailed    Status = "failed"
	StatusCancelled Status = "cancelled"
)

// Kind says what a task is for.
type Kind string

// KindShell is a command run by the configured shell; KindMonitor is one
// whose output lines become event notifications for its scope (see
// package tasks/monitor, events.go).
const (
	KindShell   Kind = "shell"
	KindMonitor Kind = "monitor"
)

// Task is the public face of a task: what `ls --json` and `status --json`
// print. Field names are a contract with scripts and agents.
type Task struct {
	ID       string `json:"id"`
	Name     string `json:"name"`
	Kind     Kind   `json:"kind"`
	Command  string `json:"command"`
	Cwd      string `json:"cwd"`
	Scope    string `json:"scope"`
	Status   Status `json:"status"`
	ExitCode *int   `json:"exit_code"`
	// Error is why the task ended where its exit code does not say: the
	// reason a task failed, or why a monitor ended itself ("max events
	// reached", "idle timeout"; it is then completed).
	Error      string     `json:"error"`
	PID        int        `json:"pid"`
	PaneID     string     `json:"pane_id"`
	StartedAt  time.Time  `json:"started_at"`
	EndedAt    *time.Time `json:"ended_at"`
	OutputPath string     `json:"output_path"`
	Background bool       `json:"background"`
	// OutputComplete is false once some of the task's output is known not
	// to be in its file; OutputLoss then says what was lost and why. Loss
	// is never silent: the file also holds a [qtask: …] line where it
	// happened.
	OutputComplete bool   `json:"output_complete"`
	OutputLoss     string `json:"output_loss,omitempty"`
	// Settling, on a running task whose command has ended, is why its
	// wrapper cannot write the end yet ("no space left on device"). It is
	// read from the live wrapper, never stored.
	Settling string `json:"settling,omitempty"`
	// Events, on a monitor, is how many event notifications it has queued,
	// and EventsDropped how many matching lines the throttle dropped.
	Events        int `json:"events,omitempty"`
	EventsDropped int `json:"events_dropped,omitempty"`
	// PaneKept says the task failed and its dead pane was left open for a
	// person to look at (config keep_failed_pane): `qtask attach` shows
	// it. The pane closes once someone has looked and left it, so it may
	// be gone since; removing the task closes it too.
	PaneKept bool `json:"pane_kept,omitempty"`
	// CallerGone says that whoever waited on the task in the foreground
	// to report its end (a `qtask run`, or a coding agent through its
	// shell prefix) went away, or was left by its agent, while it ran:
	// its end is told through its scope's queue instead, and the
	// notification says that it kept running after its caller ended.
	CallerGone bool `json:"caller_gone,omitempty"`
}

// Running reports whether the task has not reached a terminal status.
func (t *Task) Running() bool { return t.Status == StatusRunning }

// Label is the task's name, or its command when it has none.
func (t *Task) Label() string {
	if t.Name != "" {
		return t.Name
	}
	return t.Command
}

// StatusText is the one-column status users read in `ls`:
// "running", "running (settling: no space left on device)",
// "completed (exit 0)", "failed: exited with code 3", "cancelled"; a
// monitor's adds its events, and the lines it dropped when any:
// "running (12 events)", "running (10 events, 25 dropped)",
// "completed (max events reached, 1000 events)".
func (t *Task) StatusText() string {
	if t.Kind != KindMonitor {
		return t.shellStatusText()
	}
	events := eventsText(t.Events)
	if t.EventsDropped > 0 {
		// Said where the count is read: a count that stops growing while
		// the output goes on (throttled, or events left unread) is lines
		// dropped, not lines missed by the monitor.
		events += fmt.Sprintf(", %d dropped", t.EventsDropped)
	}
	switch {
	case t.Status == StatusRunning && t.Settling != "":
		return "running (settling: " + t.Settling + ", " + events + ")"
	case t.Status == StatusCompleted && t.Error != "":
		return "completed (" + t.Error + ", " + events + ")"
	case t.Status == StatusCompleted && t.ExitCode != nil:
		return fmt.Sprintf("completed (exit %d, %s)", *t.ExitCode, events)
	case t.Status == StatusFailed:
		return t.shellStatusText() + " (" + events + ")"
	case t.Status == StatusCancelled && t.Error != "":
		return "cancelled (" + t.Error + ", " + events + ")"
	}
	return string(t.Status) + " (" + events + ")"
}

func eventsText(n int) string {
	if n == 1 {
		return "1 event"
	}
	return fmt.Sprintf("%d events", n)
}

func (t *Task) shellStatusText() string {
	switch t.Status {
	case StatusRunning:
		if t.Settling != "" {
			return "running (settling: " + t.Settling + ")"
		}
	case StatusCompleted:
		return "completed (exit 0)"
	case StatusFailed:
		if t.Error != "" {
			return "failed: " + t.Error
		}
		return "failed"
	case StatusCancelled:
		if t.Error != "" {
			return "cancelled (" + t.Error + ")" // window killed
		}
	}
	return string(t.Status)
}

// Runtime is how long the task ran, or has been running as of now.
func (t *Task) Runtime(now time.Time) time.Duration {
	end := now
	if t.EndedAt != nil {
		end = *t.EndedAt
	}
	if end.Before(t.StartedAt) {
		return 0
	}
	return end.Sub(t.StartedAt)
}

// Record is what sits on disk: the public task plus the bookkeeping the
// wrapper, capture and readers need to cooperate without a daemon.
type Record struct {
	Task
	// WrapperPID is the pid of `qtask _exec`, the pane's first process.
	// Readers use it to tell a live task from one whose wrapper vanished.
	WrapperPID int `json:"wrapper_pid,omitempty"`
	// WrapperStart is the wrapper's start time (/proc ticks), so a recycled
	// pid is never taken for the live wrapper.
	WrapperStart uint64 `json:"wrapper_start,omitempty"`
	// CommandStart is the start time (/proc ticks) of the command the wrapper
	// started, the leader of process group PID, and Session is the wrapper's
	// session: with them qtask proves a group is still this task's before it
	// signals it (procs.ProveGroup).
	CommandStart uint64 `json:"command_start,omitempty"`
	Session      int    `json:"session,omitempty"`
	// Adopted marks a command a human started in an interactive shell and
	// promoted: its "wrapper" is that shell, which reports the exit code
	// from its prompt hook.
	Adopted bool `json:"adopted,omitempty"`
	// AwaitScrollback holds the capture back until the pane's scrollback
	// has been written to the output file, so the file reads in order.
	AwaitScrollback bool `json:"await_scrollback,omitempty"`
	// TmuxServer is the server holding the pane; zero in a record written
	// before the pane was asked for.
	TmuxServer tmux.Server `json:"tmux_server,omitzero"`
	// EndMarker is the OSC payload printed into the pane after the command
	// has exited; the capture acknowledges it (the wrapper's own copier in
	// memory, an adopted pane's `qtask _capture` by setting OutputAcked).
	// Because a pty keeps order, the ack proves the file holds everything
	// printed.
	EndMarker      string `json:"end_marker,omitempty"`
	OutputMaxBytes int64  `json:"output_max_bytes,omitempty"`
	// KeepFullScreen: the caller's keep_full_screen, read by the capture.
	KeepFullScreen bool `json:"keep_full_screen,omitempty"`
	// KeepFailedPane: the caller's keep_failed_pane, read by the wrapper
	// when the command fails; KeepRawOutput: its keep_raw_output, read by
	// the capture.
	KeepFailedPane bool `json:"keep_failed_pane,omitempty"`
	KeepRawOutput  bool `json:"keep_raw_output,omitempty"`
	// StatusFormat is the caller's status_format, for the status segment
	// the wrapper updates when the task ends (its environment, and so its
	// config, may not be the caller's).
	StatusFormat string `json:"status_format,omitempty"`
	OutputAcked  bool   `json:"output_acked,omitempty"`
	// StopRequestedAt is set by `qtask stop`, so that the wrapper settles the
	// task as cancelled rather than failed when the signal lands. StopReason,
	// when set (a foreground timeout with on_timeout=kill), makes it failed
	// with that reason instead.
	StopRequestedAt *time.Time `json:"stop_requested_at,omitempty"`
	StopReason      string     `json:"stop_reason,omitempty"`
	// WaiterPID is the `qtask run` waiting on a foreground task. If it dies
	// without a word (SIGKILL, closed terminal) the task simply carries on
	// as a background task.
	WaiterPID int `json:"waiter_pid,omitempty"`
	// CallerPane is the pane `qtask run` was called from, on the task's
	// server: the promote key pressed there finds the foreground task its
	// waiter streams, and end messages go to the clients of its session.
	CallerPane string     `json:"caller_pane,omitempty"`
	PromotedAt *time.Time `json:"promoted_at,omitempty"`
	// ExitedAt is when the wrapper saw the command exit, and ExitedCode its
	// exit code (128+N for signal N). The wrapper records them at once,
	// before it waits for the output to be complete and settles the task:
	// from then on the end has won any race with a promote or a stop.
	ExitedAt   *time.Time `json:"exited_at,omitempty"`
	ExitedCode *int       `json:"exited_code,omitempty"`
}

// ExitReason is the reason of a task whose command exited with code, not
// zero: EndedByItself knows such a task by it.
func ExitReason(code int) string { return exitReasonPrefix + strconv.Itoa(code) }

// exitReasonPrefix starts the reason of a command that exited non-zero.
const exitReasonPrefix = "exited with code "

// EndedByItself reports whether the task ended because its command exited,
// with any code — not by a signal, a stop, a timeout or being lost.
func (t *Task) EndedByItself() bool {
	return t.Status == StatusCompleted || t.Status == StatusFailed && strings.HasPrefix(t.Error, exitReasonPrefix)
}
