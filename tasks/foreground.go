package tasks

import (
	"context"
	"errors"
	"fmt"
	"io"
	"syscall"
	"time"
)

// AttendOptions configures a foreground wait on a task.
type AttendOptions struct {
	Out           io.Writer     // where the task's output streams as it arrives
	Timeout       time.Duration // 0: wait for as long as it runs
	KillOnTimeout bool          // else a timeout promotes the task to the background
	StopGrace     time.Duration
	Session       string // background session a promoted pane moves to
	// Display, if set, is the task's raw stream (see Display): Out gets it
	// instead of the output file's clean text.
	Display *Display
}

// AttendResult is how a foreground wait ended.
type AttendResult struct {
	Task     *Task
	Promoted bool // the caller was released; the task runs on in the background
	TimedOut bool
}

// Interrupted is the context cause a foreground caller sets when it gets a
// signal: the task is stopped with the same signal, as if the terminal had
// delivered it to the command directly.
type Interrupted struct{ Signal syscall.Signal }

func (e *Interrupted) Error() string { return "interrupted by " + e.Signal.String() }

// Attend is the foreground half of `qtask run`: stream the task's output to
// opts.Out until it ends, is promoted (by a key, `qtask promote`, or the
// timeout) or is killed on timeout. If ctx is cancelled with an
// *Interrupted cause, the task is stopped with that signal first.
func (s *Store) Attend(ctx context.Context, id string, opts AttendOptions) (*AttendResult, error) {
	watch := s.watch([]string{id}, true)
	defer watch.Close()
	var timeout <-chan time.Time
	if opts.Timeout > 0 {
		timer := time.NewTimer(opts.Timeout)
		defer timer.Stop()
		timeout = timer.C
	}
	r, err := s.load(id)
	if err != nil {
		return nil, err
	}
	fl := newFollower(r.OutputPath, 0)
	defer fl.close()
	if opts.Display != nil {
		opts.Display.copyTo(opts.Out)
	}
	res := &AttendResult{}
	for {
		r, err := s.load(id)
		if err != nil {
			return nil, err
		}
		r = s.reconcile(r)
		done := !r.Running() || r.Background
		if opts.Display != nil && done {
			// The capture wrote every raw byte before it let the task end.
			if err := opts.Display.stop(opts.Out, r.Running()); err != nil {
				return nil, err
			}
		} else if opts.Display == nil {
			// Once the caller stops waiting, it gets the screen as it is.
			if err := fl.copyNew(opts.Out, done); err != nil {
				return nil, err
			}
		}
		if done {
			res.Task, res.Promoted = &r.Task, r.Running()
			return res, nil
		}
		select {
		case <-watch.C:
		case <-timeout:
			res.TimedOut = true
			timeout = nil
			if !opts.KillOnTimeout {
				if _, err := s.promote(context.WithoutCancel(ctx), id, opts.Session); err != nil {
					return nil, err
				}
				continue
			}
			stop := StopOptions{Grace: opts.StopGrace, Reason: fmt.Sprintf("timed out after %s", opts.Timeout)}
			if _, err := s.Stop(ctx, id, stop); err != nil && !errors.As(err, new(*NotRunningError)) {
				return nil, err
			}
		case <-ctx.Done():
			sig := syscall.SIGTERM
			var intr *Interrupted
			if errors.As(context.Cause(ctx), &intr) {
				sig = intr.Signal
			}
			// The interrupt is passed on however long the lock takes.
			ctx = context.WithoutCancel(ctx)
			s = s.WithContext(ctx)
			stop := StopOptions{Grace: opts.StopGrace, Signal: sig}
			if _, err := s.Stop(ctx, id, stop); err != nil && !errors.As(err, new(*NotRunningError)) {
				return nil, err
			}
		}
	}
}
