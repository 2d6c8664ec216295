package tasks

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/qtask/qtask/tasks/capture"
	"github.com/qtask/qtask/tasks/retention"
	"github.com/qtask/qtask/tasks/statefs"
	"github.com/qtask/qtask/tasks/taskid"
)

// PruneOptions says which finished tasks Prune removes (the Rule; see
// package retention) and how.
type PruneOptions struct {
	retention.Rule
	// DryRun decides and reports, and removes nothing.
	DryRun bool
	// Forget removes what another package keeps for a removed task (the
	// shell hooks' pane files); nil if nothing.
	Forget func(*Task)
}

// Prune removes finished tasks with everything that belongs to them: the
// record, the output file, and any leftover spec or temp file. It returns
// the tasks removed (with DryRun, the ones that would be), oldest end
// first, and warnings about records it could not read, which it leaves alone.
func (s *Store) Prune(ctx context.Context, opts PruneOptions) ([]*Task, []string, error) {
	list, warnings, err := s.List(ctx, Filter{})
	if err != nil {
		return nil, nil, err
	}
	chosen := retention.Choose(list, opts.Rule, time.Now())
	if !opts.DryRun {
		s.sweepAbandonedPipes(time.Now())
	}
	if opts.DryRun || len(chosen) == 0 {
		return chosen, warnings, nil
	}
	removed, last, err := s.remove(ctx, chosen)
	if last != nil {
		s.pushStatus(last) // once, after the lock, for all of them
	}
	if err == nil {
		err = s.markPruned()
	}
	if opts.Forget != nil {
		for _, t := range removed {
			opts.Forget(t)
		}
	}
	return removed, warnings, err
}

// abandonedPipeAge is how old a FIFO with no reader must be before a prune
// removes it: its maker creates it, then opens it, and must not find it
// gone in between.
const abandonedPipeAge = time.Minute

// sweepAbandonedPipes removes the FIFOs nobody reads any more, which no
// task owns: display pipes of a `qtask run` that died before its task's
// wrapper took the pipe (the wrapper removes its name when it does), and
// doorbells of inbox waiters that were killed (notify.Queue.SweepDoorbells).
// A live caller or waiter holds its FIFO open, so it has a reader and is
// left alone.
func (s *Store) sweepAbandonedPipes(now time.Time) {
	statefs.SweepFIFOs([]string{s.tasksDir()}, capture.IsDisplayName, now, abandonedPipeAge)
	s.queue.SweepDoorbells(now, abandonedPipeAge)
}

// remove deletes the files of the chosen tasks under the state lock,
// re-reading each record first: a task is removed only if it is still
// finished. The record goes last, so a removal that fails half-way leaves
// a task that the next prune finds and finishes, never a stray file. last
// is the record of the last task removed. The panes kept of failed tasks
// removed are closed, once the lock is released (tmux may be slow).
func (s *Store) remove(ctx context.Context, chosen []*Task) (removed []*Task, last *record, err error) {
	var kept []*record
	defer func() { closeKeptPanes(kept) }()
	unlock, err := s.lock(ctx)
	if err != nil {
		return nil, nil, err
	}
	defer unlock()
	owned, err := s.filesByTask()
	if err != nil {
		return nil, nil, err
	}
	var errs []error
	for _, t := range chosen {
		r, err := s.load(t.ID)
		if errors.Is(err, taskid.ErrNotFound) {
			continue // removed by someone else meanwhile
		}
		if err != nil || r.Running() {
			continue // unreadable now, or (hand-edited) running again: not ours to remove
		}
		if err := removeFiles(append(owned[t.ID], s.recordPath(t.ID))); err != nil {
			errs = append(errs, fmt.Errorf("prune task %s: %w", t.ID, err))
			continue
		}
		s.statusLine().Forget(t.ID)
		removed, last = append(removed, &r.Task), r
		if r.PaneKept {
			kept = append(kept, r)
		}
	}
	if len(removed) > 0 {
		s.dropIndex()
	}
	return removed, last, errors.Join(errs...)
}

// filesByTask maps each task id to the files that belong to it besides its
// record, found by name: the output file, a spec never taken, a notification
// never consumed, and the temp files an interrupted atomic write or output
// rotation left behind. The paths are built from directory entries, never
// from what a record says.
func (s *Store) filesByTask() (map[string][]string, error) {
	owned := make(map[string][]string)
	scopes, err := s.queue.Dirs()
	if err != nil {
		return nil, err
	}
	dirs := append([]string{s.tasksDir(), s.outputDir()}, scopes...)
	for _, dir := range dirs {
		entries, err := os.ReadDir(dir)
		if err != nil {
			return nil, fmt.Errorf("list %s: %w", dir, err)
		}
		for _, e := range entries {
			if id, ok := retention.Owner(e.Name(), dir != s.tasksDir()); ok {
				owned[id] = append(owned[id], filepath.Join(dir, e.Name()))
			}
		}
	}
	return owned, nil
}

// removeFiles removes paths in order; one already gone is no error.
func removeFiles(paths []string) error {
	for _, p := range paths {
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return nil
}

// AutoPrune is the check every start makes: it keeps the newest keep
// finished tasks (0: all), cheaply. Counting record files is one directory
// read; the records themselves are read only once the count has grown by
// a batch (a tenth of keep) past what the last prune left, so a store
// sitting at its limit does not pay for reading every record at every start.
func (s *Store) AutoPrune(ctx context.Context, keep int, forget func(*Task)) ([]*Task, []string, error) {
	if due, err := s.pruneDue(keep, 0); !due || err != nil {
		return nil, nil, err
	}
	return s.pruneBatch(ctx, keep, forget, "")
}

// AutoPruneWarnings is AutoPrune for a caller that only reports: what it
// could not do, its error included, as warnings (the task at hand goes on
// either way).
func (s *Store) AutoPruneWarnings(ctx context.Context, keep int, forget func(*Task)) []string {
	_, warnings, err := s.AutoPrune(ctx, keep, forget)
	return pruneWarnings(warnings, err)
}

func pruneWarnings(warnings []string, err error) []string {
	if err != nil {
		warnings = append(warnings, "prune finished tasks: "+err.Error())
	}
	return warnings
}

// pruneDue is AutoPrune's cheap half: one directory read says whether the
// records (and those of starting tasks, not saved yet) have grown a batch
// past keep since the last prune.
func (s *Store) pruneDue(keep, starting int) (bool, error) {
	if keep <= 0 {
		return false, nil
	}
	ids, err := s.ids()
	if err != nil {
		return false, err
	}
	n := len(ids) + starting
	return n > keep && n > s.prunedCount()+keep/10, nil
}

// pruneBatch is AutoPrune's costly half, once it is due; starting is the
// task whose start it is, if any (retention.Rule.Starting).
func (s *Store) pruneBatch(ctx context.Context, keep int, forget func(*Task), starting string) ([]*Task, []string, error) {
	removed, warnings, err := s.Prune(ctx, PruneOptions{Rule: retention.Rule{Keep: keep, Starting: starting}, Forget: forget})
	if err == nil && len(removed) == 0 {
		// Nothing was old enough (many tasks running): remember the count
		// so the next starts do not read every record again.
		err = s.markPruned()
	}
	return removed, warnings, err
}

// prunedPath holds the number of records left by the last prune.
func (s *Store) prunedPath() string { return filepath.Join(s.dir, "pruned") }

// markPruned records how many records there are now, for AutoPrune.
func (s *Store) markPruned() error {
	ids, err := s.ids()
	if err != nil {
		return err
	}
	return statefs.WriteAtomic(s.prunedPath(), []byte(strconv.Itoa(len(ids))+"\n"))
}

// prunedCount is what markPruned last wrote; 0 if nothing (or garbage, or
// not a file of ours).
func (s *Store) prunedCount() int {
	data, err := statefs.ReadOwn(s.prunedPath())
	if err != nil {
		return 0
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil || n < 0 {
		return 0
	}
	return n
}
