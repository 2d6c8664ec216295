package tasks

import (
	"context"
	"errors"
	"io/fs"
	"time"

	"github.com/qtask/qtask/tasks/procs"
	"github.com/qtask/qtask/tasks/taskid"
)

// Backoff between the wrapper's attempts to settle.
const (
	settleRetryMin = 50 * time.Millisecond
	settleRetryCap = 5 * time.Second
)

// settleLate settles the task as o, retrying with backoff for as long as
// patience while the state directory will not take the write (full,
// read-only): a task whose end was seen must end with what was seen, never
// as lost. Meanwhile the wrapper's process name says why (see
// procs.AnnounceSettling). A state directory that no longer exists is not
// waited for: no one can read an end written there, and waiting would
// leave the wrapper behind for nothing.
func (s *Store) settleLate(ctx context.Context, id string, o outcome, patience time.Duration) (*record, error) {
	deadline := time.Now().Add(patience)
	for backoff := settleRetryMin; ; backoff = min(2*backoff, settleRetryCap) {
		r, _, err := s.settle(ctx, id, o)
		if err == nil || errors.Is(err, taskid.ErrNotFound) || errors.Is(err, fs.ErrNotExist) || !time.Now().Before(deadline) {
			procs.AnnounceSettling(nil)
			return r, err
		}
		procs.AnnounceSettling(err)
		time.Sleep(min(backoff, time.Until(deadline)))
	}
}
