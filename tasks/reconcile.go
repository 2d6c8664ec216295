package tasks

import (
	"context"
	"fmt"
	"time"

	"github.com/qtask/qtask/tasks/procs"
)

// startGrace is how long a record may say running without a wrapper pid
// before readers decide the wrapper never started, and how long a stop
// waits for a starting task's command.
const startGrace = 30 * time.Second

// startingUp tells whether a record without a wrapper pid may still be
// starting. Start records the wrapper's pid (from tmux) in its one write,
// so only a record from an older qtask lacks it; such a record gets
// startGrace, its age measured forward only: a started_at in the future (a
// clock stepped back, a record copied from elsewhere) is no sign of life.
func startingUp(r *record) bool {
	age := time.Since(r.StartedAt)
	return r.WrapperPID == 0 && age >= 0 && age < startGrace
}

// reconcile settles a running task whose wrapper is gone, so a crash, a
// killed server or a reboot never leaves a task running forever. It returns
// the record as it now stands.
func (s *Store) reconcile(ctx context.Context, r *record) *record {
	if !r.Running() {
		return r
	}
	if startingUp(r) {
		return r
	}
	why := "the task's wrapper never started"
	if r.WrapperPID != 0 {
		st, live := procs.SameStat(r.WrapperPID, r.WrapperStart)
		if live {
			r = s.orphanedForeground(ctx, r)
			r.Settling = procs.SettlingReason(r.WrapperPID, st)
			return r
		}
		why = fmt.Sprintf("the task's %s (pid %d) is gone", r.wrapperName(), r.WrapperPID)
	}
	o := r.stopOutcome(lostOutcome(why))
	settled, changed, err := s.settle(ctx, r.ID, o)
	if err != nil {
		s.warnf("task %s is lost (%s) but cannot be settled: %v", r.ID, why, err)
		return r
	}
	if changed {
		procs.KillOrphans(s.procs(), r.procTask())
	}
	return settled
}

// orphanedForeground turns a foreground task whose waiting `qtask run` died
// without a word (SIGKILL, a closed terminal) into the background task it
// now is, so it shows as such and nobody mistakes it for attended, and its
// notification says that it outlived its caller.
func (s *Store) orphanedForeground(ctx context.Context, r *record) *record {
	if r.Background || r.WaiterPID == 0 || procs.Alive(r.WaiterPID) {
		return r
	}
	updated, err := s.update(ctx, r.ID, func(r *record) error {
		if !r.Running() || r.Background {
			return errSkip
		}
		r.Background, r.CallerGone = true, true
		return nil
	})
	if err != nil {
		s.warnf("task %s lost its waiting caller but cannot be marked background: %v", r.ID, err)
		return r
	}
	return updated
}
