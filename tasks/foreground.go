package tasks

import (
	"context"
	"errors"
	"fmt"
	"io"
	"syscall"
	"time"

	"github.com/qtask/qtask/tasks/capture"
	"github.com/qtask/qtask/tasks/output"
	"github.com/qtask/qtask/tasks/taskid"
)

// AttendOptions configures a foreground wait on a task.
type AttendOptions struct {
	Out           io.Writer     // where the task's output streams as it arrives
	Timeout       time.Duration // 0: wait for as long as it runs
	KillOnTimeout bool          // else a timeout promotes the task to the background
	StopGrace     time.Duration
	Session       string // background session a promoted pane moves to
	// Display, if set, is the task's raw stream (see capture.Display): Out gets it
	// instead of the output file's clean text.
	Display *capture.Display
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
	fl := output.NewFollower(r.OutputPath, 0)
	defer fl.Close()
	if opts.Display != nil {
		opts.Display.CopyTo(opts.Out)
	}
	res := &AttendResult{}
	for {
		r, err := s.load(id)
		if err != nil {
			return nil, err
		}
		r = s.reconcile(ctx, r)
		done := !r.Running() || r.Background
		if err := attendOutput(opts, fl, r, done); err != nil {
			return nil, err
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
			if err := s.actOnTimeout(ctx, id, opts); err != nil {
				return nil, err
			}
		case <-ctx.Done():
			sig := interruptSignal(ctx)
			// The interrupt is passed on however long the lock takes.
			ctx = context.WithoutCancel(ctx)
			if err := s.stopIfRunning(ctx, id, StopOptions{Grace: opts.StopGrace, Signal: sig}); err != nil {
				return nil, err
			}
		}
	}
}

// attendOutput brings the caller's terminal up to date with the task: the
// raw stream with a Display, else the output file's new text. Once the
// caller stops waiting (done), it gets the screen as it is; a Display is
// complete by then, the capture having written every raw byte before it
// let the task end.
func attendOutput(opts AttendOptions, fl *output.Follower, r *record, done bool) error {
	if opts.Display == nil {
		return fl.CopyNew(opts.Out, done)
	}
	if done {
		return opts.Display.Stop(opts.Out, r.Running())
	}
	return nil
}

// actOnTimeout does what a foreground timeout asks: promote the task to the
// background (the caller is released once the record says so), or stop it.
func (s *Store) actOnTimeout(ctx context.Context, id string, opts AttendOptions) error {
	if !opts.KillOnTimeout {
		p, err := s.markPromoted(ctx, id, false)
		if err != nil {
			return err
		}
		// On record, the promote runs to its end: the caller is released.
		_, err = s.completePromote(context.WithoutCancel(ctx), p, opts.Session)
		return err
	}
	stop := StopOptions{Grace: opts.StopGrace, Reason: fmt.Sprintf("timed out after %s", opts.Timeout)}
	return s.stopIfRunning(ctx, id, stop)
}

// interruptSignal is the signal a cancelled foreground caller passes on to
// its task: the one in an *Interrupted cause, else SIGTERM.
func interruptSignal(ctx context.Context) syscall.Signal {
	var intr *Interrupted
	if errors.As(context.Cause(ctx), &intr) {
		return intr.Signal
	}
	return syscall.SIGTERM
}

// stopIfRunning stops the task; one that has already ended is no error,
// since ending it was the point.
func (s *Store) stopIfRunning(ctx context.Context, id string, stop StopOptions) error {
	if _, err := s.Stop(ctx, id, stop); err != nil && !errors.As(err, new(*NotRunningError)) {
		return err
	}
	return nil
}

// NewDisplay makes a display for a foreground caller (see
// capture.Display) in the state directory, where the task's capture
// accepts it; StartOptions.Display names it to the task.
func (s *Store) NewDisplay() (*capture.Display, error) {
	name, err := taskid.New()
	if err != nil {
		return nil, err
	}
	return capture.NewDisplay(s.tasksDir(), name)
}
