package tasks

import (
	"context"
	"fmt"
)

// RunningError refuses to remove a task that is still running.
type RunningError struct{ ID string }

func (e *RunningError) Error() string {
	return fmt.Sprintf("task %s is still running: stop it first (qtask stop %s), or remove it with --force", e.ID, e.ID)
}

// Remove deletes finished tasks, named by id or unique prefix, with
// everything that belongs to them (as Prune does). Nothing is removed if
// any of them is running (*RunningError) or unknown; forget, if not nil,
// is called for each task removed (the shell hooks' files of its pane).
func (s *Store) Remove(ctx context.Context, idsOrPrefixes []string, forget func(*Task)) ([]*Task, error) {
	chosen := make([]*Task, 0, len(idsOrPrefixes))
	for _, p := range idsOrPrefixes {
		t, err := s.Get(ctx, p)
		if err != nil {
			return nil, err
		}
		if t.Running() {
			return nil, &RunningError{ID: t.ID}
		}
		chosen = append(chosen, t)
	}
	removed, last, err := s.remove(ctx, chosen)
	if last != nil {
		s.pushStatus(last)
	}
	if forget != nil {
		for _, t := range removed {
			forget(t)
		}
	}
	return removed, err
}
