package tasks

import (
	"context"
	"fmt"
	"slices"

	"github.com/qtask/qtask/tasks/monitor"
)

// A monitor's events log, for people (`qtask events`): the log itself, its
// writer and reader, are package monitor's; the store finds the monitors
// and follows their logs.

// NotMonitorError refuses `events` of a task that is not a monitor.
type NotMonitorError struct{ ID string }

func (e *NotMonitorError) Error() string {
	return fmt.Sprintf("task %s is not a monitor, so it has no events: qtask logs %[1]s prints its output", e.ID)
}

// Events gives emit the events monitors recorded, oldest first: monitor
// id's (a unique prefix will do), or with id "" every monitor's. It never
// consumes a notification. With follow it goes on giving each new event as
// it is recorded: for one monitor until it has ended, for all of them
// (those started meanwhile too) until ctx is done. It sleeps on file
// events, not a busy poll.
func (s *Store) Events(ctx context.Context, id string, follow bool, emit func(monitor.Event) error) error {
	if id != "" {
		t, err := s.Get(ctx, id)
		if err != nil {
			return err
		}
		if t.Kind != KindMonitor {
			return &NotMonitorError{ID: t.ID}
		}
		id = t.ID
	}
	readers := map[string]*monitor.LogReader{}
	defer func() {
		for _, rd := range readers {
			rd.Close()
		}
	}()
	var w *watcher
	var watched []string
	defer func() {
		if w != nil {
			w.Close()
		}
	}()
	for {
		// Records first, then the logs: a monitor seen ended has written
		// all its events, so the read after it misses none.
		monitors, err := s.monitors(ctx, id)
		if err != nil {
			return err
		}
		var batch, got []monitor.Event
		var running []string
		for _, t := range monitors {
			rd := readers[t.ID]
			if rd == nil {
				rd = monitor.ReadLog(t.ID, t.OutputPath)
				readers[t.ID] = rd
			}
			if got, err = rd.Read(got[:0]); err != nil {
				return err
			}
			batch = append(batch, got...)
			if t.Running() {
				running = append(running, t.ID)
			}
		}
		slices.SortStableFunc(batch, func(a, b monitor.Event) int { return a.Time.Compare(b.Time) })
		for _, ev := range batch {
			if err := emit(ev); err != nil {
				return err
			}
		}
		if !follow || id != "" && len(running) == 0 {
			return nil
		}
		if w == nil || !slices.Equal(running, watched) {
			if w != nil {
				w.Close()
			}
			w, watched = s.watch(running, false), running
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-w.C:
		}
	}
}

// monitors is monitor id, or with id "" every monitor, as it stands now.
func (s *Store) monitors(ctx context.Context, id string) ([]*Task, error) {
	if id != "" {
		t, err := s.Get(ctx, id)
		return []*Task{t}, err
	}
	list, _, err := s.List(ctx, Filter{})
	if err != nil {
		return nil, err
	}
	return slices.DeleteFunc(list, func(t *Task) bool { return t.Kind != KindMonitor }), nil
}
