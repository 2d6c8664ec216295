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

// watcher wakes its owner when the records of the watched tasks change
// (and, if asked, their output files), or at least every slowPoll.
// Wake-ups are coalesced: C holds at most one. Events for other files are
// ignored: a task printing 100 MB must not wake every `qtask wait` in the
// machine once per write.
type watcher struct {
	C      <-chan struct{}
	fs     *fsnotify.Watcher
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
	w := &watcher{C: c, cancel: cancel}
	wake := func() {
		select {
		case c <- struct{}{}:
		default:
		}
	}
	var events <-chan fsnotify.Event
	var errs <-chan error
	if fw, err := fsnotify.NewWatcher(); err == nil {
		if fw.Add(s.tasksDir()) == nil && (!outputs || fw.Add(s.outputDir()) == nil) {
			w.fs, events, errs = fw, fw.Events, fw.Errors
		} else {
			fw.Close()
		}
	}
	go func() {
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
	return w
}

// Close stops the watch.
func (w *watcher) Close() {
	w.cancel()
	if w.fs != nil {
		w.fs.Close()
	}
}

// Wait blocks until every task in ids has ended, or ctx is done (then it
// returns ctx's error with the tasks as they stand). It sleeps on file events,
// not a busy poll.
func (s *Store) Wait(ctx context.Context, ids []string) ([]*Task, error) {
	resolved := make([]string, len(ids))
	for i, id := range ids {
		full, err := s.Resolve(id)
		if err != nil {
			return nil, err
		}
		resolved[i] = full
	}
	w := s.watch(resolved, false)
	defer w.Close()
	for {
		out := make([]*Task, 0, len(resolved))
		pending := false
		for _, id := range resolved {
			r, err := s.load(id)
			if err != nil {
				return nil, err
			}
			r = s.reconcile(r)
			pending = pending || r.Running()
			out = append(out, &r.Task)
		}
		if !pending {
			return out, nil
		}
		select {
		case <-ctx.Done():
			return out, ctx.Err()
		case <-w.C:
		}
	}
}
