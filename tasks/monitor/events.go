package monitor

import (
	"errors"
	"regexp"
	"time"

	"github.com/qtask/qtask/tasks/output"
)

// The making of a monitor's events, in its wrapper: a follower of the
// output file (not the capture: the capture writes the file and never
// waits on anyone, so a slow or absent reader of events costs the command
// nothing) cuts it into lines and applies the rules to each as it lands.
// Everything a monitor counts (its events, the lines it dropped, its end
// when it reaches its max events or goes idle) is written in a locked step
// of the task store, reached through Store, and the end first: once a
// monitor has ended no event is counted.

// Spec is a monitor's part of its task's start spec: what its wrapper
// needs to make its events.
type Spec struct {
	Match       string        `json:"match,omitempty"`
	MaxEvents   int           `json:"max_events"`
	IdleTimeout time.Duration `json:"idle_timeout"`
	// Source is the id of the watched task ("": the monitor's own
	// output), SourcePath its output file and SourceOffset where in it the
	// watching starts: after what was settled when the monitor started.
	Source       string `json:"source,omitempty"`
	SourcePath   string `json:"source_path,omitempty"`
	SourceOffset int64  `json:"source_offset,omitempty"`
}

// Reasons a monitor ends itself, completed.
const (
	ReasonMaxEvents = "max events reached"
	ReasonIdle      = "idle timeout"
)

// Store is what a monitor's events need of the task store, for the one
// monitor they are made for (the tasks package implements it on the
// monitor's record; tests, with a few fields).
type Store interface {
	// Count runs f on the monitor's tally in one step under the store's
	// lock and, when f returns true, saves the tally and queues the
	// notification of its New event (if any) in that same step. Once the
	// monitor has ended it runs nothing and returns ErrEnded.
	Count(f func(*Tally) bool) error
	// Unread is how many of the monitor's events wait unread in its
	// scope's queue, for f under Count: readers consume them under the
	// same lock.
	Unread() int
	// Tell tells of ev, just queued: the clients of the session the
	// monitor was started from, and the scope's agent if it waits idle.
	Tell(ev Event)
	// End ends the running monitor, completed for reason, counting
	// dropped lines more, and stops what its command left; an error if it
	// could not (the wrapper settles it when the command ends).
	End(reason string, dropped int) error
}

// ErrEnded is Store.Count's answer once the monitor has ended.
var ErrEnded = errors.New("the monitor has ended")

// Tally is what a monitor's record counts, as its events read and change
// it in one locked step of the store.
type Tally struct {
	Events  int // events queued
	Dropped int // lines dropped
	// New, when set, is the event to queue with the counts: the
	// New.Count-th, at New.Time (which orders its scope's queue).
	New *Event
}

// Events makes a monitor's events, in its wrapper, from when the command
// has started until Finish.
type Events struct {
	st     Store
	spec   *Spec
	match  *regexp.Regexp
	fl     *output.Follower
	lines  *output.LineWriter
	bucket *Bucket
	idle   *time.Timer
	log    *Log
	// dropped is lines dropped that the record does not count yet, and
	// droppedAt when it last did.
	dropped   int
	droppedAt time.Time
	seq       int64
	ended     bool // the monitor has ended: count nothing more
	stop      chan struct{}
	done      chan struct{}
}

// NewEvents makes the events of the monitor spec describes, whose own
// output file is outputPath, counting them in st and keeping them in log
// (nil: none), its bucket on clock (time.Now; a fake clock in tests). It
// reads nothing before Run.
func NewEvents(st Store, spec *Spec, outputPath string, log *Log, clock func() time.Time) *Events {
	e := &Events{
		st: st, spec: spec, log: log,
		bucket: NewBucket(clock),
		stop:   make(chan struct{}),
		done:   make(chan struct{}),
	}
	if spec.Match != "" {
		e.match = regexp.MustCompile(spec.Match) // checked by Options.Resolve
	}
	e.lines = output.NewLineWriter(func(b []byte) error {
		e.line(string(b))
		return nil
	})
	path := outputPath
	if spec.Source != "" {
		path = spec.SourcePath
	}
	e.fl = output.NewFollower(path, spec.SourceOffset)
	e.idle = time.NewTimer(spec.IdleTimeout)
	return e
}

// Run reads each line as it lands in the file, looking again at each
// wake (a watch of the file), until Finish, or until the monitor goes idle
// and ends; then it closes the log. Finish returns once Run has.
func (e *Events) Run(wake <-chan struct{}) {
	defer close(e.done)
	defer e.log.Close()
	defer e.fl.Close()
	for {
		// A read that fails (a file being rotated, a disk error) is
		// tried again at the next wake: the follower keeps its place.
		e.fl.CopyNew(e.lines, false)
		e.countDropped(false)
		select {
		case <-e.stop:
			// The output is complete (a source's, once it has ended, is
			// all final; one still running keeps its live rows).
			e.fl.CopyNew(e.lines, e.spec.Source == "")
			e.lines.Flush()
			e.countDropped(true)
			return
		case <-e.idle.C:
			e.end(ReasonIdle)
		case <-wake:
		}
	}
}

// Finish makes the last events, once the command has ended and all its
// output is in the file, and returns when they are queued: the end
// notification that follows comes after every event. On nil it does
// nothing.
func (e *Events) Finish() {
	if e == nil {
		return
	}
	close(e.stop)
	<-e.done
}

// Source is the task a monitor of a task watches; "" for any other
// monitor, and on nil.
func (e *Events) Source() string {
	if e == nil {
		return ""
	}
	return e.spec.Source
}

// line is one output line: an event, unless it is blank, does not match,
// or finds the bucket empty (then it is counted as dropped).
func (e *Events) line(text string) {
	if e.ended {
		return
	}
	e.idle.Reset(e.spec.IdleTimeout)
	if Blank(text) || e.match != nil && !e.match.MatchString(text) {
		return
	}
	if !e.bucket.Take() {
		e.dropped++
		return
	}
	e.emit(EventLine(text))
}

// emit counts one event and queues it, in one locked step; the event that
// reaches the max events ends the monitor.
func (e *Events) emit(line string) {
	var ev *Event
	full := false
	err := e.st.Count(func(t *Tally) bool {
		if full = e.st.Unread() >= MaxUnread; full {
			return false
		}
		t.Events++
		t.Dropped += e.dropped
		e.seq = max(time.Now().UnixNano(), e.seq+1)
		ev = &Event{Time: time.Unix(0, e.seq), Count: t.Events, Line: line}
		t.New = ev
		return true
	})
	switch {
	case errors.Is(err, ErrEnded):
		e.ended = true
		return
	case full:
		e.dropped++ // nobody has read the ones waiting: this one would pile up
		return
	case err == nil && ev != nil:
		e.dropped, e.droppedAt = 0, time.Now()
		e.log.Add(ev.Time, ev.Count, ev.Line)
		e.st.Tell(*ev)
	}
	if ev != nil && ev.Count >= e.spec.MaxEvents {
		e.end(ReasonMaxEvents)
	}
}

// countDropped writes the lines dropped since the record last counted
// them: at least once a second while lines are being dropped, and, with
// now, at once.
func (e *Events) countDropped(now bool) {
	if e.dropped == 0 || !now && time.Since(e.droppedAt) < time.Second {
		return
	}
	err := e.st.Count(func(t *Tally) bool {
		t.Dropped += e.dropped
		return true
	})
	if err == nil || errors.Is(err, ErrEnded) { // the end counted what it knew
		e.dropped, e.droppedAt = 0, time.Now()
	}
}

// end ends the monitor on its own (max events, idle): the store settles
// it first, so that nothing is counted after, then stops the command.
func (e *Events) end(reason string) {
	e.ended = true
	if e.st.End(reason, e.dropped) == nil {
		e.dropped = 0
	}
}
