package tasks

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/qtask/qtask/tasks/procs"
	"github.com/qtask/qtask/tasks/procs/procstest"
	"github.com/qtask/qtask/tasks/taskid"
)

// A stop of everything skips what is not running, lost tasks included
// (found out on the way), and says which records it could not read.
func TestStopAllStopsOnlyRunningTasksAndWarnsOfDamage(t *testing.T) {
	var warnings []string
	s := newTestStore(t).WithWarnings(func(msg string) { warnings = append(warnings, msg) })
	ended := saveRunning(t, s, "a11e0001", time.Now().UTC())
	settleOrFail(t, s, ended.ID, 0)
	// Its wrapper never started, an hour ago: lost, with no pid to signal.
	saveRunning(t, s, "a11e0002", time.Now().UTC().Add(-time.Hour))
	if err := os.WriteFile(s.recordPath("a11e0003"), []byte("{not json"), fileMode); err != nil {
		t.Fatal(err)
	}

	results, err := s.StopAll(context.Background(), StopOptions{Grace: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if len(results) != 0 {
		t.Fatalf("StopAll stopped %d tasks, want none: nothing was running", len(results))
	}
	if lost, err := s.Get(context.Background(), "a11e0002"); err != nil || lost.Status != StatusFailed {
		t.Fatalf("the task whose wrapper never started: %v %v, want it settled as failed", lost, err)
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], "a11e0003") {
		t.Fatalf("warnings %q, want one naming the damaged record a11e0003", warnings)
	}
}

// TestStopRefuses covers the stops that end before any signal: nothing
// to stop (unknown, ended, lost) and a caller inside the task. The machine
// is a fake (the caller in session 4200, group 4201; the wrapper, this
// test process so that it is alive, in that session), so the test means
// the same wherever it runs, and nothing may be signalled.
func TestStopRefuses(t *testing.T) {
	const callerSession, callerGroup = 4200, 4201
	wrapper := os.Getpid()
	wrapperStart := procs.StartTime(wrapper)
	table := procstest.Table{wrapper: *procstest.Running(wrapper, callerSession, wrapperStart, "")}
	for _, tc := range []struct {
		name    string
		shape   func(t *testing.T, s *Store, r *record) // nil: no task at all
		wantErr any
		says    string
	}{
		{"an unknown task", nil, new(*taskid.NotFoundError), "5707"},
		{"a task that ended", func(t *testing.T, s *Store, r *record) {
			settleOrFail(t, s, r.ID, 3)
		}, new(*NotRunningError), "exited with code 3"},
		{"a task found lost", func(t *testing.T, s *Store, r *record) {
			r.StartedAt = r.StartedAt.Add(-startGrace - time.Second)
			if err := s.save(r); err != nil {
				t.Fatal(err)
			}
		}, new(*NotRunningError), "lost: the task's wrapper never started"},
		{"the caller's own task", func(t *testing.T, s *Store, r *record) {
			r.WrapperPID, r.WrapperStart, r.Session = wrapper, wrapperStart, callerSession
			if err := s.save(r); err != nil {
				t.Fatal(err)
			}
		}, new(*InsideTaskError), "stopping it would stop this command too"},
		// `qtask stop $QTASK_TASK_ID` run by a command so quick that its
		// wrapper has not yet written its group and session: the wrapper's
		// session says it. It was settled as lost for naming the caller's
		// own group (seen in CI).
		{"the caller's own task, still starting", func(t *testing.T, s *Store, r *record) {
			r.WrapperPID, r.WrapperStart = wrapper, wrapperStart
			if err := s.save(r); err != nil {
				t.Fatal(err)
			}
		}, new(*InsideTaskError), "stopping it would stop this command too"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			machine := &signalLog{Table: table, me: procs.Caller{Pgrp: callerGroup, Session: callerSession}}
			s := newTestStore(t, withProcesses(machine))
			id := "5707a001"
			if tc.shape != nil {
				r := saveRunning(t, s, id, time.Now().UTC())
				tc.shape(t, s, r)
			}
			_, err := s.Stop(context.Background(), id, StopOptions{Grace: time.Second})
			if err == nil || !errors.As(err, tc.wantErr) || !strings.Contains(err.Error(), tc.says) {
				t.Fatalf("Stop: %v, want a %T saying %q", err, tc.wantErr, tc.says)
			}
			if r, err := s.load(id); err == nil && r.StopRequestedAt != nil {
				t.Errorf("a refused stop was recorded as requested")
			}
			if sent := machine.signals(); len(sent) != 0 {
				t.Errorf("a refused stop sent %v", sent)
			}
		})
	}
}

// signalLog is a fake machine for Stop: the process table of a procstest.Table,
// me as the caller, signals recorded instead of sent, and onSignal
// standing in for the wrapper (it runs outside the stop's lock, as the
// real wrapper does).
type signalLog struct {
	procstest.Table
	me       procs.Caller
	mu       sync.Mutex
	sent     []syscall.Signal
	onSignal func(sig syscall.Signal)
}

func (l *signalLog) Self() procs.Caller { return l.me }

func (l *signalLog) SignalGroup(pgid int, sig syscall.Signal) {
	l.mu.Lock()
	l.sent = append(l.sent, sig)
	l.mu.Unlock()
	if l.onSignal != nil {
		go l.onSignal(sig)
	}
}

// SignalProcess records the signal as SignalGroup does: Stop's strays
// (none in these tables, whose wrapper is not in them) would add to the
// signals sent.
func (l *signalLog) SignalProcess(_ int, _ uint64, sig syscall.Signal) { l.SignalGroup(0, sig) }

func (l *signalLog) signals() []syscall.Signal {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.sent)
}

// settlesOn plays the wrapper's part for a fake machine's signal: on end,
// it records the exit under the lock (so after the stop's own step), then
// settles, a requested stop making the task cancelled.
func settlesOn(s *Store, id string, end syscall.Signal) func(syscall.Signal) {
	return func(sig syscall.Signal) {
		if sig != end {
			return
		}
		code := 128 + int(sig)
		now := time.Now().UTC()
		r, err := s.update(context.Background(), id, func(r *record) error { r.ExitedAt, r.ExitedCode = &now, &code; return nil })
		if err == nil {
			s.settle(context.Background(), id, r.stopOutcome(codeOutcome(code)))
		}
	}
}

// TestStopSignals drives Stop's signalling against a fake process table:
// which signals go out, in what order, and how the task ends. The wrapper
// is this test process (alive, so nothing is lost); the command's group
// exists only in the fake, so nothing is really signalled.
func TestStopSignals(t *testing.T) {
	const group, session, commandStart = 4190001, 4190000, 777
	me := os.Getpid()
	for _, tc := range []struct {
		name    string
		adopted bool
		table   procstest.Table // the process table: the command's group as it stands
		endOn   syscall.Signal
		want    []syscall.Signal
		status  Status
		wantErr string
	}{
		{name: "SIGTERM is heeded", table: procstest.Table{group: *procstest.Running(group, session, commandStart, "")}, endOn: syscall.SIGTERM,
			want: []syscall.Signal{syscall.SIGTERM, syscall.SIGCONT}, status: StatusCancelled},
		{name: "SIGTERM ignored: SIGKILL after the grace", table: procstest.Table{group: *procstest.Running(group, session, commandStart, "")}, endOn: syscall.SIGKILL,
			want: []syscall.Signal{syscall.SIGTERM, syscall.SIGCONT, syscall.SIGKILL, syscall.SIGCONT}, status: StatusCancelled},
		{name: "an adopted command gets SIGINT, as Ctrl+C", adopted: true, table: procstest.Table{group: *procstest.Running(group, session, commandStart, "")}, endOn: syscall.SIGINT,
			want: []syscall.Signal{syscall.SIGINT, syscall.SIGCONT}, status: StatusCancelled},
		// The command's pid left its group, and the group's one process is
		// a stranger: nothing proves it the task's.
		{name: "a group that is not the task's is never signalled",
			table:  procstest.Table{group: *procstest.Running(999, session, commandStart, ""), group + 1: *procstest.Running(group, 1234, 1, "")},
			status: StatusFailed, wantErr: "is not the one qtask started"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			machine := &signalLog{Table: tc.table}
			s := newTestStore(t, withProcesses(machine))
			r := saveRunning(t, s, "5197a001", time.Now().UTC())
			r.WrapperPID, r.WrapperStart = me, procs.StartTime(me)
			r.PID, r.CommandStart, r.Session, r.Adopted = group, commandStart, session, tc.adopted
			if err := s.save(r); err != nil {
				t.Fatal(err)
			}
			machine.onSignal = settlesOn(s, r.ID, tc.endOn)

			// A task that ends on the first signal must never see the
			// second, however slow the machine (its settle writes and
			// syncs the notification): the grace is waited out only by
			// the case that ignores SIGTERM.
			grace := 30 * time.Second
			if tc.endOn == syscall.SIGKILL {
				grace = 100 * time.Millisecond
			}
			task, err := s.Stop(context.Background(), r.ID, StopOptions{Grace: grace})
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Stop: %v, want an error saying %q", err, tc.wantErr)
				}
				task, _ = s.Get(context.Background(), r.ID)
			} else if err != nil {
				t.Fatalf("Stop: %v", err)
			}
			if got := machine.signals(); !slices.Equal(got, tc.want) {
				t.Errorf("signals sent %v, want %v", got, tc.want)
			}
			if task.Status != tc.status {
				t.Errorf("the stopped task is %s (%s), want %s", task.Status, task.Error, tc.status)
			}
		})
	}
}

// targetLog is a fake machine that records what each signal went to;
// onSignal, when set, stands in for the wrapper, as in signalLog.
type targetLog struct {
	procstest.Table
	mu       sync.Mutex
	sent     []string
	onSignal func(sig syscall.Signal)
}

func (l *targetLog) Self() procs.Caller { return procs.Caller{PID: 300, Pgrp: 300, Session: 300} }

func (l *targetLog) SignalGroup(pgid int, sig syscall.Signal) {
	l.record(fmt.Sprintf("group %d %v", pgid, sig))
	if l.onSignal != nil {
		go l.onSignal(sig)
	}
}

func (l *targetLog) SignalProcess(pid int, start uint64, sig syscall.Signal) {
	l.record(fmt.Sprintf("pid %d@%d %v", pid, start, sig))
}

func (l *targetLog) record(what string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.sent = append(l.sent, what)
}

// A stop's signals reach the command's group and then, one by one and
// checked by start time, the task's processes that left it: a setsid
// child of the command and an orphan back to the wrapper; never the
// wrapper's own tmux call, a dead orphan or a stranger. A group not proved
// the task's gets nothing, and neither do the processes under its wrapper.
// The wrapper is this test process (alive, so nothing is lost); the rest
// exists only in the fake.
func TestStopSignalsTheProcessesThatLeftTheGroup(t *testing.T) {
	const group, session, wrapperGroup, commandStart = 4190001, 4190000, 4190100, 777
	me := os.Getpid()
	table := procstest.Table{
		me:      *procstest.Running(wrapperGroup, session, procs.StartTime(me), "").Under(1),
		group:   *procstest.Running(group, session, commandStart, "t").Under(me),
		4190002: *procstest.Running(4190002, 4190002, 800, "").Under(group),   // setsid
		4190003: *procstest.Running(4190003, 4190003, 801, "").Under(me),      // an orphan
		4190004: *procstest.Running(wrapperGroup, session, 802, "").Under(me), // the wrapper's tmux call
		4190005: {Stat: procs.Stat{State: 'Z', PPID: me, Pgrp: 4190005}},      // a dead orphan
		4190006: *procstest.Running(4190006, 4190006, 803, "").Under(1),       // a stranger
	}
	for _, tc := range []struct {
		name    string
		table   procstest.Table
		want    []string
		wantErr string
	}{
		{name: "the group, then each process that left it", table: table, want: []string{
			"group 4190001 terminated", "group 4190001 continued",
			"pid 4190002@800 terminated", "pid 4190002@800 continued",
			"pid 4190003@801 terminated", "pid 4190003@801 continued"}},
		// The command's pid left its group, and the group's one process
		// is a stranger: nothing proves it the task's.
		{name: "a group that is not the task's: nothing", wantErr: "is not the one qtask started",
			table: table.With(group, procstest.Running(999, session, commandStart, "").Under(me)).With(4190007, procstest.Running(group, 1234, 1, "").Under(1))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			machine := &targetLog{Table: tc.table}
			s := newTestStore(t, withProcesses(machine))
			r := saveRunning(t, s, "5197a002", time.Now().UTC())
			r.WrapperPID, r.WrapperStart = me, procs.StartTime(me)
			r.PID, r.CommandStart, r.Session = group, commandStart, session
			if err := s.save(r); err != nil {
				t.Fatal(err)
			}
			machine.onSignal = settlesOn(s, r.ID, syscall.SIGTERM)
			_, err := s.Stop(context.Background(), r.ID, StopOptions{Grace: 30 * time.Second})
			if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Fatalf("Stop: %v, want error %q", err, tc.wantErr)
			}
			machine.mu.Lock()
			sent := slices.Clone(machine.sent)
			machine.mu.Unlock()
			// The processes in any order, each one's signals in order.
			if len(sent) > 2 {
				slices.SortStableFunc(sent[2:], func(a, b string) int { return strings.Compare(strings.Fields(a)[1], strings.Fields(b)[1]) })
			}
			if !slices.Equal(sent, tc.want) {
				t.Errorf("a stop signalled\n%s\nwant\n%s", strings.Join(sent, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
}
