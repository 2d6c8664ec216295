package tasks

import (
	"cmp"
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/qtask/qtask/tasks/capped"
	"github.com/qtask/qtask/tasks/monitor"
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
// Package monitor makes the events, in the monitor's wrapper, line by line
// as they land in the file; here a monitor is started (its scope's limit,
// its source), and its events reach the store through monitorTask.

// MonitorOptions makes Start start a monitor.
type MonitorOptions struct {
	monitor.Options
	// Source, when set, is the running task (id, unique prefix or name) whose
	// output the monitor watches.
	Source string
}

// TooManyMonitorsError refuses a monitor when monitor.MaxRunning already
// run in its scope.
type TooManyMonitorsError struct{ Scope string }

func (e *TooManyMonitorsError) Error() string {
	return fmt.Sprintf("%d monitors already run in scope %q, the most allowed: stop one (qtask ls, qtask stop ID) or wait for one to end",
		monitor.MaxRunning, e.Scope)
}

// monitorLockName is the lock monitor starts take while they count the
// scope's monitors and add theirs. It is never taken under the state lock,
// which the count itself takes.
const monitorLockName = "monitor.lock"

// prepareMonitor checks a monitor's options and the scope's running
// monitors, and for a monitor of a task turns opts into the start of its
// window's follower. It returns the spec the wrapper reads.
func (s *Store) prepareMonitor(ctx context.Context, opts *StartOptions) (*monitor.Spec, error) {
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
	ms := &monitor.Spec{Match: mo.Match, MaxEvents: mo.MaxEvents, IdleTimeout: mo.IdleTimeout}
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

// startEvents starts making r's events, for a monitor (nil otherwise:
// Finish on nil does nothing).
func (s *Store) startEvents(r *record, spec *monitor.Spec, grace time.Duration) *monitor.Events {
	if spec == nil {
		return nil
	}
	e := monitor.NewEvents(&monitorTask{s: s, r: r, grace: grace}, spec, r.OutputPath,
		monitor.CreateLog(r.OutputPath, r.OutputMaxBytes), time.Now)
	w := s.watch([]string{cmp.Or(spec.Source, r.ID)}, true)
	go func() {
		defer w.Close()
		e.Run(w.C)
	}()
	return e
}

// monitorTask is a running monitor's record as its events count in the
// store (monitor.Store): r as the wrapper claimed it, what KillLeftovers
// proves, and the grace its stop gives the command.
type monitorTask struct {
	s     *Store
	r     *record
	grace time.Duration
}

// Count runs f on r's counts in one locked step, the wrapper's own write:
// it waits for the lock as long as it takes.
func (m *monitorTask) Count(f func(*monitor.Tally) bool) error {
	_, err := m.s.update(context.Background(), m.r.ID, func(r *record) error {
		if !r.Running() {
			return monitor.ErrEnded
		}
		t := monitor.Tally{Events: r.Events, Dropped: r.EventsDropped}
		if !f(&t) {
			return errSkip
		}
		r.Events, r.EventsDropped = t.Events, t.Dropped
		if t.New == nil {
			return nil
		}
		return m.s.queueEvent(r, Event{Count: t.New.Count, Line: t.New.Line}, t.New.Time.UnixNano())
	})
	return err
}

// Unread counts r's events that wait unread in its scope's queue, for a
// caller holding the state lock.
func (m *monitorTask) Unread() int { return m.s.queue.UnreadEvents(m.r.Scope, m.r.ID) }

// Tell shows the event to the clients and wakes the scope's agent.
func (m *monitorTask) Tell(ev monitor.Event) {
	tellEvent(m.r, ev.Line)
	m.s.wakeForEvent(m.r, ev.Count)
}

// End settles r completed for reason, the wrapper's own settle (it waits
// for the lock as long as it takes), then stops what the command left in
// its group.
func (m *monitorTask) End(reason string, dropped int) error {
	_, changed, err := m.s.settle(context.Background(), m.r.ID, outcome{status: StatusCompleted, reason: reason, eventsDropped: dropped})
	if err == nil && changed {
		go procs.KillLeftovers(m.r.procTask(), m.grace)
	}
	return err
}

// sourceEnd is why a monitor of task source ended when its command (which
// follows that task's output) exits by itself: "task ID ended: STATUS",
// so that its end says what became of the task (a server that crashed
// read as a monitor "completed", exit 0, to an agent that does not hear
// the task itself: another scope's); "" for no source, or a task that is
// gone or runs on.
func (s *Store) sourceEnd(source string) string {
	if source == "" {
		return ""
	}
	src, err := s.load(source)
	if err != nil || src.Running() {
		return ""
	}
	return "task " + src.ID + " ended: " + src.StatusText()
}

// atEvent is the monitor as it stood at ev, for its notification: running,
// with ev.Count events.
func (r *record) atEvent(ev Event) Task {
	t := r.Task
	t.Status, t.ExitCode, t.Error, t.EndedAt = StatusRunning, nil, "", nil
	t.Events = ev.Count
	return t
}
