package tasks

import (
	"context"
	"time"

	"github.com/fsnotify/fsnotify"
)

// slowPoll is the heartbeat under every watch: it notices what no file event
// announces (a wrapper that died without writing) and covers file systems
// where fsnotify does not work.
const slowPoll = time.Second

// A watch polls on a short backoff for its first moments and sets up file
// events only if it lasts longer: tearing an inotify instance down waits
// out an SRCU grace period in the kernel, 8-20 ms on the 2-core machine of
// docs/BENCHMARKS.md, and a process that exits holding one pays it before
// its parent sees the exit. Most waits are short (a routed `true`, a gate
// on a server that is up at once, a wait on a task about to end); for them
// the teardown cost more than everything else they did. A wait that
// outlives the polling pays it once, against a longer wait.
const (
	firstPoll    = time.Millisecond
	lastFastPoll = 8 * time.Millisecond
	pollFor      = 250 * time.Millisecond
)

// watcher wakes its owner when the records of the watched tasks change
// (and, if asked, their output files), or at least every slowPoll.
// Wake-ups are coalesced: C holds at most one. Events for other files are
// ignored: a task printing 100 MB must not wake every `qtask wait` in the
// machine once per write.
type watcher struct {
	C      <-chan struct{}
	cancel context.CancelFunc
}

// watch watches the records of ids and, with outputs, their output files.
func (s *Store) watch(ids []string, outputs bool) *watcher {
	names := make(map[string]bool, 2*len(ids))
	for _, id := range ids {
		names[s.recordPath(id)] = true
		if outputs {
			names[s.outputPath(id)] = true
		}
	}
	c := make(chan struct{}, 1)
	ctx, cancel := context.WithCancel(context.Background())
	wake := func() {
		select {
		case c <- struct{}{}:
		default:
		}
	}
	go func() {
		if !pollFirst(ctx, wake) {
			return
		}
		var events <-chan fsnotify.Event
		var errs <-chan error
		if fw, err := fsnotify.NewWatcher(); err == nil {
			defer fw.Close()
			if fw.Add(s.tasksDir()) == nil && (!outputs || fw.Add(s.outputDir()) == nil) {
				events, errs = fw.Events, fw.Errors
			}
		}
		wake() // whatever changed while the watch was being set up
		tick := time.NewTicker(slowPoll)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case ev, ok := <-events:
				if !ok {
					events = nil
					continue
				}
				if names[ev.Name] {
					wake()
				}
			case _, ok := <-errs:
				// Read errors, or fsnotify blocks its event loop on them (a
				// queue overflow under heavy output). Something may have
				// been missed: look.
				if !ok {
					errs = nil
					continue
				}
				wake()
			case <-tick.C:
				wake()
			}
		}
	}()
	return &watcher{C: c, cancel: cancel}
}

// pollFirst wakes the watch's owner on a backoff from firstPoll to
// lastFastPoll for pollFor, and reports whether the watch is still wanted
// after that.
func pollFirst(ctx context.Context, wake func()) bool {
	timer := time.NewTimer(firstPoll)
	defer timer.Stop()
	for step, waited := firstPoll, time.Duration(0); waited < pollFor; step = min(2*step, lastFastPoll) {
		select {
		case <-ctx.Done():
			return false
		case <-timer.C:
			wake()
		}
		waited += step
		timer.Reset(min(2*step, lastFastPoll))
	}
	return true
}

// Close stops the watch. File events, if the watch got that far, are torn
// down by its goroutine, so Close does not wait for the kernel.
func (w *watcher) Close() { w.cancel() }

// Wait blocks until every task in ids has ended, or ctx is done (then it
// returns ctx's error with the tasks as they stand). It sleeps on file events,
// not a busy poll.
func (s *Store) Wait(ctx context.Context, ids []string) ([]*Task, error) {
	resolved := make([]string, len(ids))
	for i, id := range ids {
		full, err := s.Resolve(ctx, id)
		if err != nil {
			return nil, err
		}
		resolved[i] = full
	}
	var out []*Task
	err := s.watchRecords(ctx, resolved, false, func(rs []*record) (bool, error) {
		out = make([]*Task, 0, len(rs))
		pending := false
		for _, r := range rs {
			pending = pending || r.Running()
			out = append(out, &r.Task)
		}
		return !pending, nil
	})
	if err != nil && err != ctx.Err() {
		return nil, err
	}
	return out, err
}

// watchRecords is the loop of every wait on tasks: it calls step with the
// records of ids, each loaded afresh and reconciled, at once and again
// whenever the watch on them (with outputs, on their output files too)
// wakes, until step says it is done or fails, and returns step's error. It
// sleeps on file events, not a busy poll. If ctx is done first it returns
// ctx.Err() itself, step having seen the records as they stood last; an
// error loading a record is returned as it is.
func (s *Store) watchRecords(ctx context.Context, ids []string, outputs bool, step func([]*record) (bool, error)) error {
	w := s.watch(ids, outputs)
	defer w.Close()
	rs := make([]*record, len(ids))
	for {
		for i, id := range ids {
			r, err := s.load(id)
			if err != nil {
				return err
			}
			rs[i] = s.reconcile(ctx, r)
		}
		if done, err := step(rs); done || err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-w.C:
		}
	}
}
