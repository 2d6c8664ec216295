package tasks

import (
	"context"
	"fmt"
	"syscall"
	"time"

	"github.com/qtask/qtask/tmux"
)

// NotRunningError is returned when asked to stop a task that already ended;
// it names the status so the user knows what happened instead.
type NotRunningError struct{ Task *Task }

func (e *NotRunningError) Error() string {
	return fmt.Sprintf("task %s is not running (%s)", e.Task.ID, e.Task.StatusText())
}

// StopOptions says how to stop a task.
type StopOptions struct {
	Grace time.Duration // between the first signal and SIGKILL
	// Signal is sent first; zero means SIGTERM. A foreground `qtask run`
	// interrupted by Ctrl+C passes SIGINT on, as the terminal would have.
	Signal syscall.Signal
	// Reason, when set, settles the task as failed with it (a timeout)
	// instead of cancelled.
	Reason string
}

// stopSettleTimeout bounds how long Stop waits, after SIGKILL, for the
// wrapper to record the end before settling the task itself.
const stopSettleTimeout = 5 * time.Second

// Stop ends a running task: the first signal to its whole process group
// (grandchildren too), SIGKILL after the grace, and it returns once the task
// is settled. A task that already ended yields *NotRunningError.
func (s *Store) Stop(ctx context.Context, idOrPrefix string, opts StopOptions) (*Task, error) {
	// Once begun, a stop runs to its end (bounded by the grace and
	// stopSettleTimeout): an interrupted stop must not leave a task that was
	// sent SIGTERM, but never SIGKILL, and is marked as stop-requested.
	ctx = context.WithoutCancel(ctx)
	if opts.Signal == 0 {
		opts.Signal = syscall.SIGTERM
	}
	r, err := s.get(idOrPrefix)
	if err != nil {
		return nil, err
	}
	r, err = s.update(r.ID, func(r *record) error {
		if !r.Running() {
			return errSkip
		}
		if r.StopRequestedAt == nil {
			now := time.Now().UTC()
			r.StopRequestedAt, r.StopReason = &now, opts.Reason
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if !r.Running() {
		return nil, &NotRunningError{Task: &r.Task}
	}
	ended := func(r *record) bool { return !r.Running() }
	// A task still starting has no pid yet; give its wrapper a moment.
	r, err = s.waitFor(ctx, r.ID, startGrace, func(r *record) bool { return r.PID != 0 || ended(r) })
	if err != nil {
		return nil, err
	}
	if r.Adopted {
		// A command typed in a shell: the shell itself may be running it (a
		// loop), each program in its own job, so signal whatever job is in
		// the foreground now, starting as Ctrl+C would.
		opts.Signal = syscall.SIGINT
	}
	if r.PID != 0 && r.Running() {
		signalGroup(r.targetGroup(), opts.Signal)
		if r, err = s.waitFor(ctx, r.ID, opts.Grace, ended); err != nil {
			return nil, err
		}
		if r.Running() {
			signalGroup(r.targetGroup(), syscall.SIGKILL)
			if r, err = s.waitFor(ctx, r.ID, stopSettleTimeout, ended); err != nil {
				return nil, err
			}
		}
	}
	if r.Running() && r.Adopted {
		// The shell carries on with the command line: close its pane,
		// which holds nothing but this task.
		if server, err := tmux.ParseServer(r.TmuxServer); err == nil {
			server.KillPane(context.WithoutCancel(ctx), tmux.PaneID(r.PaneID))
		}
	}
	if r.Running() {
		// The wrapper did not record the end: settle it here.
		if r, _, err = s.settle(r.ID, r.stopOutcome(outcome{})); err != nil {
			return nil, err
		}
	}
	return &r.Task, nil
}

// targetGroup is the process group a stop signals: the command's own group,
// or for an adopted command the job now in its shell's foreground.
func (r *record) targetGroup() int {
	if r.Adopted {
		if fg, ok := foregroundGroup(r.WrapperPID); ok {
			return fg
		}
	}
	return r.PID
}

// signalGroup sends sig to a process group, then SIGCONT: a job stopped
// by Ctrl+Z in its pane would otherwise hold the signal pending until
// SIGKILL.
func signalGroup(pgid int, sig syscall.Signal) {
	if pgid > 0 {
		syscall.Kill(-pgid, sig)
		syscall.Kill(-pgid, syscall.SIGCONT)
	}
}
