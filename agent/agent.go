// Package agent holds the rules qtask applies on behalf of the people and
// coding agents that run commands through it: refusing commands that would
// escape the task manager, hints that steer an agent toward background
// runs, and the <task-notification> envelope that tells an agent a task
// ended. It owns no task state.
package agent

import (
	"fmt"
	"time"
)

// LongRunningHint is the note for a foreground command that ran at least
// max(1s, timeout/2) and ended on its own; "" when no note is due. Callers
// must not ask for it after a promote, a timeout, a stop or a signal.
func LongRunningHint(ran, timeout time.Duration, outputPath string) string {
	if !longRunning(ran, timeout) {
		return ""
	}
	return fmt.Sprintf("qtask: note: this command ran for %ds. Next time, start similar long commands with "+
		"`qtask run --bg` and check on them with `qtask wait` or `qtask logs`. It has finished; "+
		"do not re-run it: its output is in %s", int(ran.Round(time.Second)/time.Second), outputPath)
}

// longRunning is the rule for the long-running note: the command ran at
// least max(1s, timeout/2).
func longRunning(ran, timeout time.Duration) bool {
	return ran >= max(time.Second, timeout/2)
}
