package tasks

import (
	"context"
	"fmt"
	"time"

	"github.com/qtask/qtask/tmux"
)

// PromoteResult says what a promote did. Promote is idempotent and honest:
// a task that ended first is reported as such, never as promoted.
type PromoteResult struct {
	Task              *Task
	AlreadyFinished   bool
	AlreadyBackground bool
}

// NothingRunningError is a promote of a pane where no command runs.
type NothingRunningError struct{ Pane tmux.PaneID }

func (e *NothingRunningError) Error() string {
	return fmt.Sprintf("nothing running in pane %s", e.Pane)
}

// Promote sends a running foreground task to the background: the record is
// marked first (which releases the waiting `qtask run` at once), then its
// pane is moved into the background session. The process never notices.
func (s *Store) Promote(ctx context.Context, idOrPrefix, session string) (*PromoteResult, error) {
	id, err := s.Resolve(idOrPrefix)
	if err != nil {
		return nil, err
	}
	return s.promote(ctx, id, session)
}

// PromotePane promotes the qtask task running in pane.
func (s *Store) PromotePane(ctx context.Context, pane tmux.PaneID, session string) (*PromoteResult, error) {
	r, err := s.taskInPane(pane)
	if err != nil {
		return nil, err
	}
	return s.promote(ctx, r.ID, session)
}

// taskInPane finds the newest task recorded in pane that is still running,
// or else the newest that ended (so a promote racing the end can say so).
func (s *Store) taskInPane(pane tmux.PaneID) (*record, error) {
	recs, _, err := s.loadAll()
	if err != nil {
		return nil, err
	}
	var found *record
	for _, r := range recs {
		if r.PaneID != string(pane) {
			continue
		}
		if found == nil || r.Running() || !found.Running() {
			found = r
		}
	}
	if found == nil {
		return nil, &NothingRunningError{Pane: pane}
	}
	return found, nil
}

func (s *Store) promote(ctx context.Context, id, session string) (*PromoteResult, error) {
	res := &PromoteResult{}
	r, err := s.update(id, func(r *record) error {
		switch {
		case !r.Running():
			res.AlreadyFinished = true
			return errSkip
		case r.Background:
			res.AlreadyBackground = true
		default:
			now := time.Now().UTC()
			r.Background, r.PromotedAt = true, &now
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	res.Task = &r.Task
	if res.AlreadyFinished || r.PaneID == "" {
		return res, nil
	}
	if err := s.moveToBackground(ctx, r, session); err != nil {
		return res, fmt.Errorf("task %s is in the background, but its window could not be moved: %w", r.ID, err)
	}
	return res, nil
}

// moveToBackground puts the task's pane into the background session unless
// it is there already.
func (s *Store) moveToBackground(ctx context.Context, r *record, session string) error {
	server, err := tmux.ParseServer(r.TmuxServer)
	if err != nil {
		return err
	}
	info, err := server.PaneInfo(ctx, tmux.PaneID(r.PaneID))
	if err != nil {
		return err
	}
	if info.SessionName == session {
		return nil
	}
	return server.MovePaneToSession(ctx, info, session)
}
