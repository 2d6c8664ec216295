package tasks

import (
	"fmt"
	"syscall"
	"time"
)

// outcome is how a task ended, as decided by whoever saw it end.
type outcome struct {
	status   Status
	exitCode *int
	reason   string
}

// settle moves a running task to its terminal status. It is the only place a
// task leaves running, and it does so once: a late or duplicate settle (the
// wrapper and a reader both noticing the end) is a no-op reporting false.
func (s *Store) settle(id string, o outcome) (r *record, changed bool, err error) {
	r, err = s.update(id, func(r *record) error {
		if !r.Running() {
			return errSkip
		}
		now := time.Now().UTC()
		r.Status, r.ExitCode, r.Error, r.EndedAt = o.status, o.exitCode, o.reason, &now
		changed = true
		return nil
	})
	return r, changed, err
}

// exitOutcome classifies a finished command. An explicit stop is cancelled
// whatever the exit looked like; otherwise exit 0 is completed and anything
// else is failed with a reason a person can read. A death by signal N reports
// exit code 128+N, as shells do.
func exitOutcome(ws syscall.WaitStatus, stopRequested bool) outcome {
	var o outcome
	switch {
	case ws.Signaled():
		code := 128 + int(ws.Signal())
		o = outcome{status: StatusFailed, exitCode: &code,
			reason: fmt.Sprintf("terminated by signal %d", int(ws.Signal()))}
	case ws.ExitStatus() == 0:
		code := 0
		o = outcome{status: StatusCompleted, exitCode: &code}
	default:
		code := ws.ExitStatus()
		o = outcome{status: StatusFailed, exitCode: &code,
			reason: fmt.Sprintf("exited with code %d", code)}
	}
	if stopRequested {
		o.status, o.reason = StatusCancelled, ""
	}
	return o
}

// lostOutcome is the verdict for a task whose process vanished unobserved.
func lostOutcome(why string) outcome {
	return outcome{status: StatusFailed, reason: "lost: " + why}
}
