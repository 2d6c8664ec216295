package agent

import (
	"fmt"
	"time"

	"github.com/qtask/qtask/tasks/monitor"
)

// The results below are what a coding agent reads from `qtask run` in
// agent mode (--agent, QTASK_AGENT=1) in place of the human wording: each
// names the task's id and output file and says, in commands the agent can
// run, how to read, wait for and stop the task, and that its end will be
// told in a <task-notification>, so the agent neither polls nor re-runs.
// Arguments are already fit for display.

// Started is the result of starting a background task.
// qtask is how the agent's shell runs qtask (see howTo).
func Started(qtask, id, label, outputPath string) string {
	return fmt.Sprintf("Started background task %s: %s\n", id, label) + howTo(qtask, id, outputPath)
}

// MovedToBackground is the result of a foreground run that was moved to
// the background before it ended: by its timeout (after the given
// duration) when timedOut, else by a person (promote).
func MovedToBackground(qtask, id, outputPath string, timeout time.Duration, timedOut bool) string {
	why := "a person moved it to the background"
	if timedOut {
		why = fmt.Sprintf("it was still running after %s, so it was moved to the background", timeout)
	}
	return fmt.Sprintf("Not finished yet: %s as task %s, and it keeps running.\n", why, id) + howTo(qtask, id, outputPath)
}

// LeftRunning is what a routed call's prefix writes as the agent ends
// while the call runs (Claude stops its shell commands as it exits): the
// task is left to run, and this is the last its output file says of it
// (the agent is gone; a person or a resumed agent may read the file).
func LeftRunning(qtask, id, outputPath string) string {
	return fmt.Sprintf("[qtask] The agent ended while this command ran: task %s keeps running, and its end will be told "+
		"to this session (when it is resumed) with a <task-notification>.\n", id) + howTo(qtask, id, outputPath)
}

// StoppedFromOutside is the note that goes with the exit code of a
// foreground command that `qtask stop` ended (a person, from the menu or a
// shell, or another process): without it, the agent reads the stop's
// SIGTERM (exit 143) as the command failing and may run it again.
func StoppedFromOutside(id string) string {
	return fmt.Sprintf("[qtask] This command did not end by itself: task %s was stopped with `qtask stop` "+
		"(by a person or another process) while it ran. Do not run it again unless you are asked to.", id)
}

// howTo is what the agent can do with a task still running: commands it
// runs as they are written, so qtask names the binary as the agent's
// shell finds it ("qtask", or its full path when qtask is not on the
// agent's PATH).
func howTo(qtask, id, outputPath string) string {
	return fmt.Sprintf("Output file: %s (it grows while the task runs; read it with `%s logs %s`).\n", outputPath, qtask, id) +
		fmt.Sprintf("You will be told with a <task-notification> when it ends: do not poll it or start it again. "+
			"To block until it ends: `%s wait %s`. To stop it: `%s stop %s`.\n", qtask, id, qtask, id)
}

// AgentLongRunningHint is LongRunningHint worded for an agent, due by the
// same rule; "" when no note is due. An agent did not see the wait, and
// must not run the command again to see its output.
func AgentLongRunningHint(qtask string, ran, timeout time.Duration, outputPath string) string {
	if !longRunning(ran, timeout) {
		return ""
	}
	return fmt.Sprintf("[qtask] This command ran for %ds. Next time, run similar long commands in the background "+
		"(your shell tool's background option, or `%s run --bg -- COMMAND`): you will be told when they end. "+
		"This one has finished: do not re-run it; its output is also in %s", int(ran.Round(time.Second)/time.Second), qtask, outputPath)
}

// MonitorTerms are what a monitor was started with, as MonitorStarted
// tells them: the watched task ("" for the monitor's own command), the
// pattern ("" for every line) and its limits, defaults filled in.
type MonitorTerms struct {
	Source, Match string
	MaxEvents     int
	IdleTimeout   time.Duration
}

// MonitorStarted is the result of starting a monitor in agent mode: what
// will come as notifications, that nothing needs polling (the human
// wording points at `qtask agent inbox --wait`, which an agent with hooks
// must not run: it would block its shell and take its notifications), how
// the monitor ends, and that ending by itself stops its command (a server
// run as a monitor's command dies with it; a monitor of a task never
// touches the task). Arguments are already fit for display.
func MonitorStarted(qtask, id, label string, m MonitorTerms) string {
	lines := "Each output line of its command"
	if m.Source != "" {
		lines = fmt.Sprintf("Each line task %s prints from now on", m.Source)
	}
	if m.Match != "" {
		lines += fmt.Sprintf(" that matches %q", m.Match)
	}
	ends := fmt.Sprintf("It ends by itself after %d events, or after %s without output, and then stops its command; "+
		"to watch a server, start the server with `%s run --bg` and monitor its task id instead.", m.MaxEvents, m.IdleTimeout, qtask)
	if m.Source != "" {
		ends = fmt.Sprintf("It ends when task %s ends, after %d events, or after %s without output; task %s itself is never touched.",
			m.Source, m.MaxEvents, m.IdleTimeout, m.Source)
	}
	return fmt.Sprintf("Started monitor %s: %s\n", id, label) +
		fmt.Sprintf("%s will come to you as a <task-notification> with <kind>monitor</kind> (%d at once, then at most one a second, "+
			"and at most %d waiting unread; lines beyond that are dropped and counted), and its end as one more: do not poll its output or `%s agent inbox`.\n",
			lines, monitor.Burst, monitor.MaxUnread, qtask) +
		ends + fmt.Sprintf(" To stop it: `%s stop %s`.\n", qtask, id)
}
