package tasks

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/qtask/qtask/tasks/capped"
	"github.com/qtask/qtask/tasks/monitor"
	"github.com/qtask/qtask/tasks/output"
	"github.com/qtask/qtask/tasks/procs"
)

// A monitor is a task of kind monitor: a command in its own window like any
// other, whose output lines (or the lines matching a pattern) each become
// an event notification for its scope, throttled by a token bucket
// (package monitor holds the rules). Or, with a source, a monitor of a task
// already running: its window follows that task's output (`qtask logs -f`),
// and its events are that task's lines from the monitor's start on; the
// source is only read, never touched.
//
// Events are produced in the monitor's wrapper by a follower of the output
// file, not by the capture: the capture writes the file and never waits on
// anyone, so a slow or absent reader of events costs the command nothing.
// Everything a monitor counts (its events, the lines it dropped, its end
// when it reaches its max events or goes idle) is written under the state
// lock, and the end first: once a monitor has ended no event is counted.

// MonitorOptions makes Start start a monitor.
type MonitorOptions struct {
	monitor.Options
	// Source, when set, is the running task (id or unique prefix) whose
	// output the monitor watches.
	Source string
}

// monitorSpec is a monitor's part of the start spec: what the wrapper
// needs to produce its events.
type monitorSpec struct {
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

// TooManyMonitorsError refuses a monitor when monitor.MaxRunning already
// run in its scope.
type TooManyMonitorsError struct{ Scope string }

func (e *TooManyMonitorsError) Error() string {
	return fmt.Sprintf("%d monitors already run in scope %q, the most allowed: stop one (qtask ls, qtask stop ID) or wait for one to end",
		monitor.MaxRunning, e.Scope)
}

// Reasons a monitor ends itself, completed.
const (
	reasonMaxEvents = "max events reached"
	reasonIdle      = "idle timeout"
)

// monitorLockName is the lock monitor starts take while they count the
// scope's monitors and add theirs. It is never taken under the state lock,
// which the count itself takes.
const monitorLockName = "monitor.lock"

// prepareMonitor checks a monitor's options and the scope's running
// monitors, and for a monitor of a task turns opts into the start of its
// window's follower. It returns the spec the wrapper reads.
func (s *Store) prepareMonitor(ctx context.Context, opts *StartOptions) (*monitorSpec, error) {
	mo, err := opts.Monitor.Resolve()
	if err != nil {
		return nil, &ArgumentError{Msg: err.Error()}
	}
	running, _, err := s.List(ctx, Filter{Status: StatusRunning, Scope: opts.Scope})
	if err != nil {
		return nil, err
	}
	n := 0
	for _, t := range running {
		if t.Kind == KindMonitor {
			n++
		}
	}
	if n >= monitor.MaxRunning {
		return nil, &TooManyMonitorsError{Scope: opts.Scope}
	}
	ms := &monitorSpec{Match: mo.Match, MaxEvents: mo.MaxEvents, IdleTimeout: mo.IdleTimeout}
	opts.Background = true // nobody waits on a monitor: its events are the news
	if opts.Monitor.Source == "" {
		return ms, nil
	}
	src, err := s.get(ctx, opts.Monitor.Source)
	if err != nil {
		return nil, err
	}
	if !src.Running() {
		return nil, &InputError{Msg: fmt.Sprintf("task %s is not running (%s): there is nothing to monitor; read its output with qtask logs %[1]s", src.ID, src.StatusText())}
	}
	f, err := capped.OpenRead(src.OutputPath)
	if err != nil {
		return nil, fmt.Errorf("open output of task %s: %w", src.ID, err)
	}
	fi, err := f.Stat()
	if err == nil {
		_, ms.SourceOffset = capped.FinalEnds(f, fi.Size())
	}
	f.Close()
	if err != nil {
		return nil, fmt.Errorf("read output of task %s: %w", src.ID, err)
	}
	ms.Source, ms.SourcePath = src.ID, src.OutputPath
	opts.Command = "qtask logs --follow " + src.ID
	// Quoted for any shell qtask runs (sh, bash, zsh, fish).
	opts.Script = "'" + strings.ReplaceAll(opts.Self, "'", `'\''`) + "' logs --follow " + src.ID
	opts.Env = append(opts.Env[:len(opts.Env):len(opts.Env)], "QTASK_STATE_DIR="+s.dir)
	return ms, nil
}

// events produces a monitor's events, in its wrapper, from when the
// command has started until finish.
type events struct {
	s      *Store
	r      *record // as the wrapper claimed it: what KillLeftovers proves
	spec   *monitorSpec
	grace  time.Duration
	match  *regexp.Regexp
	fl     *output.Follower
	lines  *output.LineWriter
	bucket *monitor.Bucket
	idle   *time.Timer
	log    *monitor.Log // for people (see monitor.CreateLog); nil: none
	// dropped is lines the bucket dropped that the record does not count
	// yet, and droppedAt when it last did.
	dropped   int
	droppedAt time.Time
	seq       int64
	ended     bool // the monitor has ended: count nothing more
	stop      chan struct{}
	done      chan struct{}
}

// startEvents starts producing r's events, for a monitor (nil otherwise:
// finish on nil does nothing).
func (s *Store) startEvents(r *record, spec *monitorSpec, grace time.Duration) *events {
	if spec == nil {
		return nil
	}
	e := s.newEvents(r, spec, grace, time.Now)
	e.log = monitor.CreateLog(r.OutputPath, r.OutputMaxBytes)
	watched := r.ID
	if spec.Source != "" {
		watched = spec.Source
	}
	go e.run(s.watch([]string{watched}, true))
	return e
}

// newEvents is the producer of r's events, its bucket on clock, not yet
// reading.
func (s *Store) newEvents(r *record, spec *monitorSpec, grace time.Duration, clock func() time.Time) *events {
	e := &events{
		s: s, r: r, spec: spec, grace: grace,
		bucket: monitor.NewBucket(clock),
		stop:   make(chan struct{}),
		done:   make(chan struct{}),
	}
	if spec.Match != "" {
		e.match = regexp.MustCompile(spec.Match) // checked by prepareMonitor
	}
	e.lines = output.NewLineWriter(func(b []byte) error {
		e.line(string(b))
		return nil
	})
	path := r.OutputPath
	if spec.Source != "" {
		path = spec.SourcePath
	}
	e.fl = output.NewFollower(path, spec.SourceOffset)
	e.idle = time.NewTimer(spec.IdleTimeout)
	return e
}

// run reads each line as it lands in the file until finish, or until the
// monitor goes idle and ends.
func (e *events) run(w *watcher) {
	defer close(e.done)
	defer e.log.Close()
	defer w.Close()
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
			e.end(reasonIdle)
		case <-w.C:
		}
	}
}

// finish makes the last events, once the command has ended and all its
// output is in the file, and returns when they are queued: the end
// notification that follows comes after every event.
func (e *events) finish() {
	if e == nil {
		return
	}
	close(e.stop)
	<-e.done
}

// sourceEnd is why a monitor of a task ended when its command (which
// follows that task's output) exits by itself: "task ID ended: STATUS",
// so that its end says what became of the task (a server that crashed
// read as a monitor "completed", exit 0, to an agent that does not hear
// the task itself: another scope's); "" for any other monitor, or a task
// that is gone or runs on.
func (e *events) sourceEnd() string {
	if e == nil || e.spec.Source == "" {
		return ""
	}
	src, err := e.s.load(e.spec.Source)
	if err != nil || src.Running() {
		return ""
	}
	return "task " + src.ID + " ended: " + src.StatusText()
}

// line is one output line: an event, unless it is blank, does not match,
// or finds the bucket empty (then it is counted as dropped).
func (e *events) line(text string) {
	if e.ended {
		return
	}
	e.idle.Reset(e.spec.IdleTimeout)
	if monitor.Blank(text) || e.match != nil && !e.match.MatchString(text) {
		return
	}
	if !e.bucket.Take() {
		e.dropped++
		return
	}
	e.emit(monitor.EventLine(text))
}

// emit counts one event and queues it, in one locked step; the event that
// reaches the max events ends the monitor.
func (e *events) emit(line string) {
	var last, full, counted bool
	var count int
	// The wrapper's own write: it waits for the lock as long as it takes.
	_, err := e.s.update(context.Background(), e.r.ID, func(r *record) error {
		if !r.Running() {
			e.ended = true
			return errSkip
		}
		if full = e.s.unreadEvents(r) >= monitor.MaxUnread; full {
			return errSkip
		}
		r.Events++
		r.EventsDropped += e.dropped
		e.seq = max(time.Now().UnixNano(), e.seq+1)
		last, count, counted = r.Events >= e.spec.MaxEvents, r.Events, true
		return e.s.queueEvent(r, Event{Count: r.Events, Line: line}, e.seq)
	})
	if full {
		e.dropped++ // nobody has read the ones waiting: this one would pile up
		return
	}
	if err == nil && counted {
		e.dropped, e.droppedAt = 0, time.Now()
		e.log.Add(time.Unix(0, e.seq), count, line)
		tellEvent(e.r, line)
		e.s.wakeForEvent(e.r, count)
	}
	if last {
		e.end(reasonMaxEvents)
	}
}

// unreadEvents counts r's events that wait unread in its scope's queue,
// for a caller holding the state lock (readers consume under it).
func (s *Store) unreadEvents(r *record) int {
	return s.queue.UnreadEvents(r.Scope, r.ID)
}

// countDropped writes the lines dropped since the record last counted
// them: at least once a second while lines are being dropped, and, with
// now, at once.
func (e *events) countDropped(now bool) {
	if e.dropped == 0 || !now && time.Since(e.droppedAt) < time.Second {
		return
	}
	// The wrapper's own write: it waits for the lock as long as it takes.
	_, err := e.s.update(context.Background(), e.r.ID, func(r *record) error {
		if !r.Running() {
			return errSkip // the end counted what it knew
		}
		r.EventsDropped += e.dropped
		return nil
	})
	if err == nil {
		e.dropped, e.droppedAt = 0, time.Now()
	}
}

// end ends the monitor on its own (max events, idle): it settles first, so
// that nothing is counted after, then stops the command and what it left
// in its group.
func (e *events) end(reason string) {
	e.ended = true
	// The wrapper's own settle: it waits for the lock as long as it takes.
	_, changed, err := e.s.settle(context.Background(), e.r.ID, outcome{status: StatusCompleted, reason: reason, eventsDropped: e.dropped})
	if err != nil {
		return // the wrapper settles it when the command ends
	}
	e.dropped = 0
	if changed {
		go procs.KillLeftovers(e.r.procTask(), e.grace)
	}
}

// atEvent is the monitor as it stood at ev, for its notification: running,
// with ev.Count events.
func (r *record) atEvent(ev Event) Task {
	t := r.Task
	t.Status, t.ExitCode, t.Error, t.EndedAt = StatusRunning, nil, "", nil
	t.Events = ev.Count
	return t
}
