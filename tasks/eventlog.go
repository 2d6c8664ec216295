package tasks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/qtask/qtask/tasks/capped"
	"github.com/qtask/qtask/tasks/output"
)

// The events log: a monitor keeps, besides queueing each event for its
// scope, a line for it in ID.events beside its output file (0600, capped at
// output_max_bytes as the output file is, the newest kept): one JSON object
// a line, its time, count and line. It is for people (`qtask events`),
// who read it as often as they like: the queue's entries are consumed by
// whichever agent reads first, and the record keeps only the count. It is
// best effort, as the raw copy is: an event is delivered whether or not its
// line could be written here.

// eventEntry is one line of an events log.
type eventEntry struct {
	Time  time.Time `json:"time"`
	Count int       `json:"count"`
	Line  string    `json:"line"`
}

// eventsPath is the events log of the task whose output file is outputPath.
func eventsPath(outputPath string) string {
	return strings.TrimSuffix(outputPath, ".log") + ".events"
}

// eventLog is a monitor's writer of its events log; nil: none.
type eventLog struct{ out *capped.File }

// openEventLog creates monitor r's events log; nil if it cannot.
func openEventLog(r *record) *eventLog {
	path := eventsPath(r.OutputPath)
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, fileMode)
	if err != nil {
		return nil
	}
	f.Close()
	limit := r.OutputMaxBytes
	if limit <= 0 {
		limit = capped.DefaultMaxBytes
	}
	out, err := capped.Open(path, limit)
	if err != nil {
		return nil
	}
	return &eventLog{out: out}
}

// add writes ev, made at.
func (l *eventLog) add(at time.Time, ev Event) {
	if l == nil {
		return
	}
	data, err := json.Marshal(eventEntry{Time: at.UTC(), Count: ev.Count, Line: ev.Line})
	if err == nil {
		l.out.Write(append(data, '\n'))
	}
}

func (l *eventLog) close() {
	if l != nil {
		l.out.Close()
	}
}

// MonitorEvent is one event a monitor recorded, as `qtask events` shows
// it. A line of the log that is not an event (the cap's note that older
// events were dropped) comes as Note, at the time of the event before it.
type MonitorEvent struct {
	Task  string
	Time  time.Time
	Count int
	Line  string
	Note  string
}

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
func (s *Store) Events(ctx context.Context, id string, follow bool, emit func(MonitorEvent) error) error {
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
	readers := map[string]*eventReader{}
	defer func() {
		for _, rd := range readers {
			rd.fl.Close()
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
		var batch, got []MonitorEvent
		var running []string
		for _, t := range monitors {
			rd := readers[t.ID]
			if rd == nil {
				rd = newEventReader(t)
				readers[t.ID] = rd
			}
			if got, err = rd.read(got[:0]); err != nil {
				return err
			}
			batch = append(batch, got...)
			if t.Running() {
				running = append(running, t.ID)
			}
		}
		slices.SortStableFunc(batch, func(a, b MonitorEvent) int { return a.Time.Compare(b.Time) })
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

// eventReader reads one monitor's events log as it grows.
type eventReader struct {
	id    string
	fl    *output.Follower
	lines *output.LineWriter
	got   []MonitorEvent
	last  time.Time
}

func newEventReader(t *Task) *eventReader {
	rd := &eventReader{id: t.ID, fl: output.NewFollower(eventsPath(t.OutputPath), 0)}
	rd.lines = output.NewLineWriter(func(b []byte) error {
		var e eventEntry
		if err := json.Unmarshal(b, &e); err != nil {
			rd.got = append(rd.got, MonitorEvent{Task: rd.id, Time: rd.last, Note: string(b)})
			return nil
		}
		rd.last = e.Time
		rd.got = append(rd.got, MonitorEvent{Task: rd.id, Time: e.Time, Count: e.Count, Line: e.Line})
		return nil
	})
	return rd
}

// read appends to got the events written since the last read. A monitor
// without a log (from before qtask kept one, or whose log could not be
// made) has none.
func (rd *eventReader) read(got []MonitorEvent) ([]MonitorEvent, error) {
	rd.got = got
	err := rd.fl.CopyNew(rd.lines, false)
	if errors.Is(err, fs.ErrNotExist) {
		err = nil
	}
	return rd.got, err
}
