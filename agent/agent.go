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

// LongRunningHint is the note for a person whose foreground command ran
// at least max(1s, timeout/2) and ended on its own: one short line, as
// they saw the wait themselves; "" when no note is due. Callers must not
// ask for it after a promote, a timeout, a stop or a signal.
func LongRunningHint(ran, timeout time.Duration) string {
	if !longRunning(ran, timeout) {
		return ""
	}
	return fmt.Sprintf("qtask: ran %ds; next time try `qtask run --bg`, or prefix B while it runs",
		int(ran.Round(time.Second)/time.Second))
}

// longRunning is the rule for the long-running note: the command ran at
// least max(1s, timeout/2).
func longRunning(ran, timeout time.Duration) bool {
	return ran >= max(time.Second, timeout/2)
}
