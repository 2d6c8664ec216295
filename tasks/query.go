package tasks

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/qtask/qtask/tmux"
)

// Filter narrows List; zero fields match everything.
type Filter struct {
	Status Status
	Scope  string
}

// List returns every task, oldest first, after settling any whose process
// vanished. Records that cannot be read are skipped and described in
// warnings, so one corrupt file never breaks `ls`.
func (s *Store) List(ctx context.Context, f Filter) ([]*Task, []string, error) {
	recs, warnings, err := s.loadAll()
	if err != nil {
		return nil, nil, err
	}
	out := make([]*Task, 0, len(recs))
	for _, r := range recs {
		r = s.reconcile(ctx, r)
		if f.Status != "" && r.Status != f.Status || f.Scope != "" && r.Scope != f.Scope {
			continue
		}
		out = append(out, &r.Task)
	}
	return out, warnings, nil
}

// Get resolves an id or unique prefix and returns the task, reconciled.
func (s *Store) Get(ctx context.Context, idOrPrefix string) (*Task, error) {
	r, err := s.get(ctx, idOrPrefix)
	if err != nil {
		return nil, err
	}
	return &r.Task, nil
}

func (s *Store) get(ctx context.Context, idOrPrefix string) (*record, error) {
	id, err := s.Resolve(ctx, idOrPrefix)
	if err != nil {
		return nil, err
	}
	r, err := s.load(id)
	if err != nil {
		return nil, err
	}
	return s.reconcile(ctx, r), nil
}

// waitFor re-reads (and reconciles) the record until done says so or the
// timeout passes, watching the tasks directory so it wakes on the write
// rather than on a timer. It returns the last record read.
func (s *Store) waitFor(ctx context.Context, id string, timeout time.Duration, done func(*record) bool) (*record, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var last *record
	err := s.watchRecords(ctx, []string{id}, false, func(rs []*record) (bool, error) {
		last = rs[0]
		return done(last), nil
	})
	switch {
	case err == nil:
		return last, nil
	case err != ctx.Err():
		return nil, err // the record could not be read
	case errors.Is(err, context.DeadlineExceeded):
		return last, nil
	}
	return last, err
}

// ServerOf is the tmux server holding the task's pane, as recorded at start.
func (s *Store) ServerOf(t *Task) (tmux.Server, error) {
	r, err := s.load(t.ID)
	if err != nil {
		return tmux.Server{}, err
	}
	return r.server()
}

// server is the tmux server holding the task's pane, or why there is none
// on record.
func (r *record) server() (tmux.Server, error) {
	if r.TmuxServer == (tmux.Server{}) {
		return tmux.Server{}, fmt.Errorf("task %s has no tmux server on record", r.ID)
	}
	return r.TmuxServer, nil
}
