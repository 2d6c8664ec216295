package tasks

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"syscall"
	"time"

	"github.com/qtask/qtask/tasks/procs"
	"github.com/qtask/qtask/tmux"
)

// NotRunningError is returned when asked to stop a task that already ended
// (before the stop, or in a race the stop lost, or found lost by it); it
// names the status so the user knows what happened instead.
type NotRunningError struct{ Task *Task }

func (e *NotRunningError) Error() string {
	return fmt.Sprintf("task %s is not running (%s)", e.Task.ID, e.Task.StatusText())
}

// InsideTaskError refuses a stop issued from inside the task it names: the
// stop's own process would be among those it kills.
type InsideTaskError struct{ ID string }

func (e *InsideTaskError) Error() string {
	return fmt.Sprintf("task %s is the task this command runs in; stopping it would stop this command too: "+
		"stop it from another shell, or just exit", e.ID)
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

// StopResult is how one of the stops of StopMany ended: Task as Stop
// returns it, or Err.
type StopResult struct {
	Task *Task
	Err  error
}

// maxParallelStops bounds the stops StopMany runs at once: each watches the
// state directory through an inotify instance of its own, and a user has
// 128 of those by default.
const maxParallelStops = 32

// StopMany stops the tasks ids name all at once rather than one after the
// other, so that n tasks ignoring SIGTERM cost one grace, not n. The results
// are in the order of ids.
func (s *Store) StopMany(ctx context.Context, ids []string, opts StopOptions) []StopResult {
	results := make([]StopResult, len(ids))
	slots := make(chan struct{}, maxParallelStops)
	var wg sync.WaitGroup
	for i, id := range ids {
		wg.Go(func() {
			slots <- struct{}{}
			defer func() { <-slots }()
			t, err := s.Stop(ctx, id, opts)
			results[i] = StopResult{Task: t, Err: err}
		})
	}
	wg.Wait()
	return results
}

// StopAll stops every running task, as StopMany does; no results when
// none runs. Records it could not read are reported to the store's
// warnings (WithWarnings) and skipped.
func (s *Store) StopAll(ctx context.Context, opts StopOptions) ([]StopResult, error) {
	running, warnings, err := s.List(ctx, Filter{Status: StatusRunning})
	if err != nil {
		return nil, err
	}
	s.warnAll(warnings)
	ids := make([]string, len(running))
	for i, t := range running {
		ids[i] = t.ID
	}
	return s.StopMany(ctx, ids, opts), nil
}

// Stop ends a running task: the first signal to its whole process group
// (grandchildren too) and to every process of the task that left that
// group (strays), SIGKILL after the grace, and it returns once the task
// is settled. A task that already ended — or ends by itself before the
// first signal lands — yields *NotRunningError; so does one whose process
// group cannot be proved to be the task's (procs.ProveGroup): it is settled as
// lost and nothing is signalled.
func (s *Store) Stop(ctx context.Context, idOrPrefix string, opts StopOptions) (*Task, error) {
	if opts.Signal == 0 {
		opts.Signal = syscall.SIGTERM
	}
	r, err := s.get(ctx, idOrPrefix)
	if err != nil {
		return nil, err
	}
	if r.Adopted {
		// A command typed in a shell: the shell itself may be running it (a
		// loop), each program in its own job, so signal whatever job is in
		// the foreground now, starting as Ctrl+C would.
		opts.Signal = syscall.SIGINT
	}
	if machine := s.procs(); r.Running() && r.procTask().Contains(machine, machine.Self()) {
		return nil, &InsideTaskError{ID: r.ID}
	}
	r, v, err := s.beginStop(ctx, r.ID, opts)
	// Once begun, a stop runs to its end (bounded by the grace and
	// stopSettleTimeout): an interrupted stop must not leave a task that was
	// sent SIGTERM, but never SIGKILL, and is marked as stop-requested.
	// Until the stop is on record, a wait for the lock may still be
	// interrupted: nothing has been done yet.
	ctx = context.WithoutCancel(ctx)
	if err == nil && v == stopStarting {
		r, v, err = s.stopOnceStarted(ctx, r, opts)
	}
	if err != nil {
		return nil, err
	}
	if v == stopEnded {
		if !r.Running() {
			s.pushStatus(r) // beginStop may have found it lost
		}
		return nil, s.alreadyEnded(ctx, r)
	}
	if v == stopSignalled {
		// The first signal's group is proved; the processes that left it
		// get it now, out of the state lock: a look through /proc per
		// task would queue up many stops behind it.
		procs.SignalStrays(s.procs(), r.procTask(), r.PID, opts.Signal, syscall.SIGCONT)
		if r, err = s.escalate(ctx, r, opts.Grace); err != nil {
			return nil, err
		}
	}
	if r, err = s.endStopped(ctx, r); err != nil {
		return nil, err
	}
	return &r.Task, nil
}

// stopOnceStarted gives a task that is still starting (no pid yet, its stop
// on record) a moment for its wrapper to start the command, and then stops
// that. A task that is still without a pid is left stopStarting.
func (s *Store) stopOnceStarted(ctx context.Context, r *record, opts StopOptions) (*record, stopVerdict, error) {
	r, err := s.waitFor(ctx, r.ID, startGrace, func(r *record) bool { return r.PID != 0 || !r.Running() })
	if err != nil || r.PID == 0 {
		return r, stopStarting, err
	}
	return s.beginStop(ctx, r.ID, opts)
}

// escalate waits the grace for a signalled task to end, then sends SIGKILL
// to its group and waits for the wrapper to record the end. It returns the
// record as it stands then: still running if the wrapper did not record it.
func (s *Store) escalate(ctx context.Context, r *record, grace time.Duration) (*record, error) {
	ended := func(r *record) bool { return !r.Running() }
	r, err := s.waitFor(ctx, r.ID, grace, ended)
	if err != nil || !r.Running() {
		return r, err
	}
	procs.SignalTarget(s.procs(), r.procTask(), syscall.SIGKILL)
	// The group was proved the task's by the first signal; it may have
	// heeded it and be gone, what left it not.
	procs.SignalStrays(s.procs(), r.procTask(), r.PID, syscall.SIGKILL)
	return s.waitFor(ctx, r.ID, stopSettleTimeout, ended)
}

// endStopped settles a stopped task whose end nobody recorded: an adopted
// command's pane is closed first (the shell would carry on with the command
// line otherwise), and a wrapper that did not record the end is settled for.
func (s *Store) endStopped(ctx context.Context, r *record) (*record, error) {
	if r.Running() && r.Adopted {
		// The pane holds nothing but this task.
		if server, err := r.server(); err == nil {
			s.panes(server).KillPane(context.WithoutCancel(ctx), tmux.PaneID(r.PaneID))
		}
	}
	if !r.Running() {
		return r, nil
	}
	r, _, err := s.settle(ctx, r.ID, r.stopOutcome(outcome{}))
	return r, err
}

// stopVerdict is what beginStop found and did.
type stopVerdict int

const (
	stopSignalled stopVerdict = iota // the first signal went to the task's group
	stopStarting                     // no command yet: the stop is recorded
	stopEnded                        // it had ended, is ending by itself, or was found lost
)

// beginStop decides, under the state lock, whether the task is still there
// to stop, and if so sends the first signal and records the request in the
// same locked step. The wrapper records the command's exit under the same
// lock (ExitedAt), so exactly one of the two wins: a stop that comes second
// never turns a natural end into "cancelled", and a wrapper that comes
// second knows the signal was the stop's.
func (s *Store) beginStop(ctx context.Context, id string, opts StopOptions) (*record, stopVerdict, error) {
	var v stopVerdict
	r, err := s.update(ctx, id, func(r *record) error {
		switch {
		case !r.Running() || r.ExitedAt != nil || r.procTask().CommandEnded(s.procs()):
			v = stopEnded
			return errSkip
		case r.PID == 0:
			v = stopStarting
			r.requestStop(opts.Reason)
			return nil
		}
		// SIGCONT after the signal: a job stopped by Ctrl+Z in its pane
		// would otherwise hold it pending until SIGKILL.
		err := procs.SignalTarget(s.procs(), r.procTask(), opts.Signal)
		var gone *procs.GroupGoneError
		switch {
		case err == nil:
			v = stopSignalled
			r.requestStop(opts.Reason)
		case errors.As(err, &gone) && procs.Same(r.WrapperPID, r.WrapperStart):
			// Its command has ended; the wrapper (or, adopted, the
			// shell's prompt hook) is about to say how.
			v = stopEnded
			return errSkip
		default:
			v = stopEnded
			_, err = s.endAndNotify(r, lostOutcome(err.Error()))
			return err
		}
		return nil
	})
	return r, v, err
}

// requestStop marks the task as being stopped, once.
func (r *record) requestStop(reason string) {
	if r.StopRequestedAt == nil {
		now := time.Now().UTC()
		r.StopRequestedAt, r.StopReason = &now, reason
	}
}

// alreadyEnded waits for the settle of a task a stop found ended (its
// wrapper may still be writing the last output) and reports it.
func (s *Store) alreadyEnded(ctx context.Context, r *record) error {
	r, err := s.waitFor(ctx, r.ID, captureAckTimeout+stopSettleTimeout, func(r *record) bool { return !r.Running() })
	if err != nil {
		return err
	}
	if r.Running() {
		why := fmt.Sprintf("its command ended but its %s did not record how", r.wrapperName())
		if r, _, err = s.settle(ctx, r.ID, lostOutcome(why)); err != nil {
			return err
		}
	}
	return &NotRunningError{Task: &r.Task}
}

// procTask is what the task's record says of its processes, for the
// ownership proof and the signals (package procs).
func (r *record) procTask() procs.Task {
	return procs.Task{
		ID: r.ID, PGID: r.PID, CommandStart: r.CommandStart,
		WrapperPID: r.WrapperPID, WrapperStart: r.WrapperStart, Session: r.Session, Adopted: r.Adopted,
	}
}
