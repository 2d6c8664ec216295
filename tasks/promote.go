package tasks

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/qtask/qtask/tasks/procs"
	"github.com/qtask/qtask/tmux"
)

// PromoteResult says what a promote did. Promote is idempotent and honest:
// a task that ended first is reported as such, never as promoted.
type PromoteResult struct {
	Task              *Task
	AlreadyFinished   bool
	AlreadyBackground bool
	// ExitCode, when AlreadyFinished, is how the command exited, known
	// before the task settles (Task may still say running while its last
	// output is written).
	ExitCode *int
}

// NothingRunningError is a promote of a pane where no qtask task runs.
// Ended, if set, is the task that ran there last and has just finished
// (a promote that raced the end).
type NothingRunningError struct {
	Pane  tmux.PaneID
	Ended *Task
}

func (e *NothingRunningError) Error() string {
	return fmt.Sprintf("nothing running in pane %s", e.Pane)
}

// Promote sends a running foreground task to the background: the record is
// marked first (which releases the waiting `qtask run` at once), then its
// pane is moved into the background session. The process never notices.
func (s *Store) Promote(ctx context.Context, idOrPrefix, session string) (*PromoteResult, error) {
	id, err := s.Resolve(ctx, idOrPrefix)
	if err != nil {
		return nil, err
	}
	return s.promote(ctx, id, session, false)
}

// Release is a promote by the waiting caller itself, as it goes away
// without reporting the end: a coding agent's shell prefix whose agent is
// ending (Claude stops its shell commands as it exits). The task goes on
// in the background, and its end is queued for its scope with CallerGone
// set, so the agent's session hears it on its next turn or resume.
func (s *Store) Release(ctx context.Context, id, session string) (*PromoteResult, error) {
	return s.promote(ctx, id, session, true)
}

// OutliveCaller marks a running task whose waiting caller stays but has
// nobody left to report to (the agent that ran the prefix was killed): its
// end is queued for its scope as well, with CallerGone set. A task that
// has ended is left as it is.
func (s *Store) OutliveCaller(ctx context.Context, id string) error {
	_, err := s.update(ctx, id, func(r *record) error {
		if !r.Running() || r.CallerGone {
			return errSkip
		}
		r.CallerGone = true
		return nil
	})
	return err
}

// PromotePane promotes the qtask task of pane on server (pane ids repeat
// across servers): the task running in it, or the foreground task a
// `qtask run` waiting in it streams (the human is watching there, not in
// the task's own window). With neither it returns *NothingRunningError,
// naming the task that just ended there if any.
func (s *Store) PromotePane(ctx context.Context, server tmux.Server, pane tmux.PaneID, session string) (*PromoteResult, error) {
	recs, _, err := s.loadAll()
	if err != nil {
		return nil, err
	}
	var last *record
	for _, r := range recs {
		if !r.TmuxServer.Same(server) {
			continue
		}
		switch {
		case r.PaneID == string(pane):
			if r = s.reconcile(ctx, r); r.Running() {
				return s.promote(ctx, r.ID, session, false)
			}
			last = r
		case r.CallerPane == string(pane) && r.awaited():
			if r = s.reconcile(ctx, r); r.Running() {
				return s.promote(ctx, r.ID, session, false)
			}
		}
	}
	nothing := &NothingRunningError{Pane: pane}
	if last != nil && s.ranInPane(ctx, server, pane, last) {
		nothing.Ended = &last.Task
	}
	return nil, nothing
}

// ranInPane reports whether the ended task r can be what ran in pane just
// now: pane ids start again at %0 with every new tmux server, so a pane of
// today's server can share its id with a task's of a server long gone. A
// task's pane was started with its wrapper (or, adopted, its shell) as the
// first process; a pane that exists with another one is someone else's. A
// pane that is gone closed as the task ended only if it ended moments ago
// (a promote that raced the end); else the id names nothing of today's.
func (s *Store) ranInPane(ctx context.Context, server tmux.Server, pane tmux.PaneID, r *record) bool {
	info, err := s.panes(server).PaneInfo(ctx, pane)
	if err != nil {
		return r.EndedAt != nil && time.Since(*r.EndedAt) < justEnded
	}
	return r.WrapperPID == 0 || info.PID == r.WrapperPID
}

// justEnded is how long after a task's end a promote of its closed pane is
// still one that raced the end: a key pressed as the command finished.
const justEnded = 10 * time.Second

// exitRecordWait bounds how long a promote that found the command's process
// gone waits for its wrapper to record the exit.
const exitRecordWait = 5 * time.Second

// promote marks the task background under the lock, unless its command has
// already exited: the wrapper records the exit before anything else, and a
// command whose process is gone or a zombie has exited even if the wrapper
// has not written that yet (it is about to). Either way the end wins, and the
// waiting `qtask run` reports the exit code instead of "promoted".
// callerGone: the caller releases itself (Release).
func (s *Store) promote(ctx context.Context, id, session string, callerGone bool) (*PromoteResult, error) {
	p, err := s.markPromoted(ctx, id, callerGone)
	if err != nil {
		return nil, err
	}
	return s.completePromote(ctx, p, session)
}

// promotion is a promote as markPromoted left it on record.
type promotion struct {
	r   *record
	res *PromoteResult
	// exiting: the command has exited, its exit not yet on record.
	exiting bool
}

// markPromoted is promote's locked step: the task marked background, or
// found ended or exiting.
func (s *Store) markPromoted(ctx context.Context, id string, callerGone bool) (*promotion, error) {
	res := &PromoteResult{}
	exiting := false
	r, err := s.update(ctx, id, func(r *record) error {
		switch {
		case !r.Running() || r.ExitedAt != nil:
			res.AlreadyFinished = true
			return errSkip
		case r.procTask().CommandEnded(s.procs()):
			// Exited (a zombie, or reaped), the exit not yet on record.
			exiting = true
			return errSkip
		case r.Background:
			res.AlreadyBackground = true
		default:
			now := time.Now().UTC()
			r.Background, r.PromotedAt, r.CallerGone = true, &now, callerGone
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &promotion{r: r, res: res, exiting: exiting}, nil
}

// completePromote is the rest of promote once p is on record: it waits for
// an exiting command's exit, or moves a promoted task's pane.
func (s *Store) completePromote(ctx context.Context, p *promotion, session string) (*PromoteResult, error) {
	r, res, id := p.r, p.res, p.r.ID
	if p.exiting {
		var err error
		res.AlreadyFinished = true
		if r, err = s.waitFor(ctx, id, exitRecordWait, (*record).exitKnown); err != nil {
			return nil, err
		}
	}
	res.Task = &r.Task
	if res.AlreadyFinished {
		res.ExitCode = r.ExitCode
		if r.Running() {
			res.ExitCode = r.ExitedCode
		}
		return res, nil
	}
	if r.PaneID == "" {
		return res, nil
	}
	if err := s.moveToBackground(ctx, r, session); err != nil {
		if (errors.Is(err, tmux.ErrNotFound) || errors.Is(err, tmux.ErrNoServer)) && s.exitedSince(id) {
			// Promoted, then it ended: its pane closed, and with the
			// last window the whole server may have gone.
			return res, nil
		}
		return res, fmt.Errorf("task %s is in the background, but its window could not be moved: %w", r.ID, err)
	}
	return res, nil
}

// awaited reports whether a foreground `qtask run` still waits on the
// running task.
func (r *record) awaited() bool {
	return r.Running() && !r.Background && r.WaiterPID > 0 && procs.Alive(r.WaiterPID)
}

// exitKnown reports whether the command's exit is on record.
func (r *record) exitKnown() bool { return !r.Running() || r.ExitedAt != nil }

// exitedSince reports whether the task's command has exited by now.
func (s *Store) exitedSince(id string) bool {
	r, err := s.load(id)
	return err == nil && r.exitKnown()
}

// moveToBackground puts the task's pane into the background session unless
// it is there already.
func (s *Store) moveToBackground(ctx context.Context, r *record, session string) error {
	server, err := r.server()
	if err != nil {
		return err
	}
	panes := s.panes(server)
	info, err := panes.PaneInfo(ctx, tmux.PaneID(r.PaneID))
	if err != nil {
		return err
	}
	if target, err := panes.SessionID(ctx, session); err == nil && target == info.Session {
		return nil // already there
	}
	return panes.MovePaneToSession(ctx, info, session)
}
