package tasks

import (
	"context"
	"fmt"
	"syscall"
	"time"

	rec "github.com/qtask/qtask/tasks/record"
)

// settleRetryMax bounds how long the wrapper keeps trying to write a
// task's end (its last output, its record) to a state directory that will
// not take writes: a disk that fills up or turns read-only for a while must
// not turn a finished task into a lost one.
const settleRetryMax = 10 * time.Minute

// outcome is how a task ended, as decided by whoever saw it end.
type outcome struct {
	status   Status
	exitCode *int
	reason   string
	// outputLoss, when set, says what output is not in the file.
	outputLoss string
	// eventsDropped, for a monitor, is lines its throttle dropped that
	// the record does not count yet.
	eventsDropped int
	// paneKept: the wrapper left the task's pane to stay open, dead, for
	// a look (keep_failed_pane).
	paneKept bool
}

// settle moves a running task to its terminal status and queues its
// notification in the same locked step. It is the only place a task leaves
// running (with beginStop's lost verdict), and it does so once: a late or
// duplicate settle (the wrapper and a reader both noticing the end) is a
// no-op reporting false.
func (s *Store) settle(ctx context.Context, id string, o outcome) (r *record, changed bool, err error) {
	r, err = s.update(ctx, id, func(r *record) error {
		var err error
		if changed, err = s.endAndNotify(r, o); !changed && err == nil {
			return errSkip
		}
		return err
	})
	if changed && err == nil {
		s.pushStatus(r)
		tellClients(r)
		s.wakeAgent(r)
	}
	return r, changed, err
}

// noteLoss records, while the task runs, what output was lost so far, so
// that `status` tells at once.
func (s *Store) noteLoss(ctx context.Context, id, loss string) error {
	_, err := s.update(ctx, id, func(r *record) error {
		if !r.Running() {
			return errSkip
		}
		r.OutputComplete, r.OutputLoss = false, loss
		return nil
	})
	return err
}

// end applies o to a running record, for endAndNotify; it reports false,
// changing nothing, if the task has already ended.
func (r *record) end(o outcome) bool {
	if !r.Running() {
		return false
	}
	now := time.Now().UTC()
	r.Status, r.ExitCode, r.Error, r.EndedAt = o.status, o.exitCode, o.reason, &now
	r.EventsDropped += o.eventsDropped
	r.PaneKept = o.paneKept
	if o.outputLoss != "" {
		r.OutputComplete, r.OutputLoss = false, o.outputLoss
	}
	return true
}

// exitOutcome classifies a finished command: exit 0 is completed, anything
// else failed with a reason a person can read. A death by signal N reports
// exit code 128+N, as shells do. (A requested stop is applied on top, by
// record.stopOutcome.)
func exitOutcome(ws syscall.WaitStatus) outcome {
	if ws.Signaled() {
		code := 128 + int(ws.Signal())
		return outcome{status: StatusFailed, exitCode: &code,
			reason: fmt.Sprintf("terminated by signal %d", int(ws.Signal()))}
	}
	return codeOutcome(ws.ExitStatus())
}

// codeOutcome is the outcome of a command that exited with code.
func codeOutcome(code int) outcome {
	if code == 0 {
		return outcome{status: StatusCompleted, exitCode: &code}
	}
	return outcome{status: StatusFailed, exitCode: &code, reason: rec.ExitReason(code)}
}

// lostOutcome is the verdict for a task whose process vanished unobserved.
// Nobody saw the end of its output either.
func lostOutcome(why string) outcome {
	return outcome{status: StatusFailed, reason: "lost: " + why,
		outputLoss: "the end of the output was never confirmed: " + why}
}
