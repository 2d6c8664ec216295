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

// watcher wakes its owner when anything in the state directory changes, or
// at least every slowPoll. Wake-ups are coalesced: C holds at most one.
type watcher struct {
	C      <-chan struct{}
	fs     *fsnotify.Watcher
	cancel context.CancelFunc
}

func (s *Store) watch() *watcher {
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
	if fw, err := fsnotify.NewWatcher(); err == nil {
		if fw.Add(s.tasksDir()) == nil && fw.Add(s.outputDir()) == nil {
			w.fs, events = fw, fw.Events
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
			case _, ok := <-events:
				if !ok {
					events = nil
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
	w := s.watch()
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
