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
	if lost, err := s.Get("a11e0002"); err != nil || lost.Status != StatusFailed {
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
	wrapperStart := processStart(wrapper)
	table := fakeProcs{wrapper: *proc(wrapper, callerSession, wrapperStart, "")}
	for _, tc := range []struct {
		name    string
		shape   func(t *testing.T, s *Store, r *record) // nil: no task at all
		wantErr any
		says    string
	}{
		{"an unknown task", nil, new(*NotFoundError), "5707"},
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
			s := newTestStore(t)
			procs := &signalLog{fakeProcs: table, me: caller{pgrp: callerGroup, session: callerSession}}
			s.procsFake = procs
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
			if sent := procs.signals(); len(sent) != 0 {
				t.Errorf("a refused stop sent %v", sent)
			}
		})
	}
}

// signalLog is a fake machine for Stop: the process table of fakeProcs,
// me as the caller, signals recorded instead of sent, and onSignal
// standing in for the wrapper (it runs outside the stop's lock, as the
// real wrapper does).
type signalLog struct {
	fakeProcs
	me       caller
	mu       sync.Mutex
	sent     []syscall.Signal
	onSignal func(sig syscall.Signal)
}

func (l *signalLog) self() caller { return l.me }

func (l *signalLog) signalGroup(pgid int, sig syscall.Signal) {
	l.mu.Lock()
	l.sent = append(l.sent, sig)
	l.mu.Unlock()
	if l.onSignal != nil {
		go l.onSignal(sig)
	}
}

// signalProcess records the signal as signalGroup does: Stop's strays
// (none in these tables, whose wrapper is not in them) would add to the
// signals sent.
func (l *signalLog) signalProcess(_ int, _ uint64, sig syscall.Signal) { l.signalGroup(0, sig) }

func (l *signalLog) signals() []syscall.Signal {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.sent)
}

// TestStopSignals drives Stop's signalling against a fake process table:
// which signals go out, in what order, and how the task ends. The wrapper
// is this test process (alive, so nothing is lost); the command's group
// exists only in the fake, so nothing is really signalled.
func TestStopSignals(t *testing.T) {
	const group, session, commandStart = 4190001, 4190000, 777
	me := os.Getpid()
	// The wrapper's part: record the exit under the lock (so after the
	// stop's own step), then settle, a requested stop making it cancelled.
	settlesOn := func(s *Store, id string, end syscall.Signal) func(syscall.Signal) {
		return func(sig syscall.Signal) {
			if sig != end {
				return
			}
			code := 128 + int(sig)
			now := time.Now().UTC()
			r, err := s.update(id, func(r *record) error { r.ExitedAt, r.ExitedCode = &now, &code; return nil })
			if err == nil {
				s.settle(id, r.stopOutcome(codeOutcome(code)))
			}
		}
	}
	for _, tc := range []struct {
		name    string
		adopted bool
		table   fakeProcs // the process table: the command's group as it stands
		endOn   syscall.Signal
		want    []syscall.Signal
		status  Status
		wantErr string
	}{
		{name: "SIGTERM is heeded", table: fakeProcs{group: *proc(group, session, commandStart, "")}, endOn: syscall.SIGTERM,
			want: []syscall.Signal{syscall.SIGTERM, syscall.SIGCONT}, status: StatusCancelled},
		{name: "SIGTERM ignored: SIGKILL after the grace", table: fakeProcs{group: *proc(group, session, commandStart, "")}, endOn: syscall.SIGKILL,
			want: []syscall.Signal{syscall.SIGTERM, syscall.SIGCONT, syscall.SIGKILL, syscall.SIGCONT}, status: StatusCancelled},
		{name: "an adopted command gets SIGINT, as Ctrl+C", adopted: true, table: fakeProcs{group: *proc(group, session, commandStart, "")}, endOn: syscall.SIGINT,
			want: []syscall.Signal{syscall.SIGINT, syscall.SIGCONT}, status: StatusCancelled},
		// The command's pid left its group, and the group's one process is
		// a stranger: nothing proves it the task's.
		{name: "a group that is not the task's is never signalled",
			table:  fakeProcs{group: *proc(999, session, commandStart, ""), group + 1: *proc(group, 1234, 1, "")},
			status: StatusFailed, wantErr: "is not the one qtask started"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newTestStore(t)
			r := saveRunning(t, s, "5197a001", time.Now().UTC())
			r.WrapperPID, r.WrapperStart = me, processStart(me)
			r.PID, r.CommandStart, r.Session, r.Adopted = group, commandStart, session, tc.adopted
			if err := s.save(r); err != nil {
				t.Fatal(err)
			}
			procs := &signalLog{fakeProcs: tc.table}
			procs.onSignal = settlesOn(s, r.ID, tc.endOn)
			s.procsFake = procs

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
				task, _ = s.Get(r.ID)
			} else if err != nil {
				t.Fatalf("Stop: %v", err)
			}
			if got := procs.signals(); !slices.Equal(got, tc.want) {
				t.Errorf("signals sent %v, want %v", got, tc.want)
			}
			if task.Status != tc.status {
				t.Errorf("the stopped task is %s (%s), want %s", task.Status, task.Error, tc.status)
			}
		})
	}
}

// movingForeground is a shell (pid 400) running a loop: the first look at
// its terminal's foreground finds a job that has already ended (group 600,
// gone), the next the loop's next job (group 700).
type movingForeground struct {
	fakeProcs
	looks int
	sent  []int
}

func (m *movingForeground) stat(pid int) (procStat, error) {
	st, err := m.fakeProcs.stat(pid)
	if pid == 400 && err == nil {
		m.looks++
		st.tpgid = 600
		if m.looks > 1 {
			st.tpgid = 700
		}
	}
	return st, err
}

func (m *movingForeground) self() caller                           { return caller{pgrp: 1000, session: 1000} }
func (m *movingForeground) signalGroup(pgid int, _ syscall.Signal) { m.sent = append(m.sent, pgid) }
func (m *movingForeground) signalProcess(pid int, _ uint64, _ syscall.Signal) {
	m.sent = append(m.sent, -pid)
}

// A stop of an adopted loop that meets a job just ended signals the next
// one: the end of one job is not the end of the line (CI once settled such
// a loop as lost).
func TestStopOfAnAdoptedLoopFindsTheNextJob(t *testing.T) {
	r := &record{Task: Task{ID: "t1", PID: 600}, WrapperPID: 400, WrapperStart: 8000, Session: 400, CommandStart: 9000, Adopted: true}
	procs := &movingForeground{fakeProcs: fakeProcs{400: *proc(400, 400, 8000, ""), 701: *proc(700, 400, 9100, "")}}
	if err := signalTarget(procs, r, syscall.SIGINT); err != nil {
		t.Fatalf("signalTarget: %v", err)
	}
	if !slices.Equal(procs.sent, []int{700, 700}) {
		t.Errorf("signalled groups %v, want the next job's group 700 (SIGINT, SIGCONT)", procs.sent)
	}
}

// targetLog is a fake machine that records what each signal went to.
type targetLog struct {
	fakeProcs
	sent []string
}

func (l *targetLog) self() caller { return caller{pid: 300, pgrp: 300, session: 300} }
func (l *targetLog) signalGroup(pgid int, sig syscall.Signal) {
	l.sent = append(l.sent, fmt.Sprintf("group %d %v", pgid, sig))
}
func (l *targetLog) signalProcess(pid int, start uint64, sig syscall.Signal) {
	l.sent = append(l.sent, fmt.Sprintf("pid %d@%d %v", pid, start, sig))
}

// A stop's signals reach the command's group and then, one by one and
// checked by start time, the task's processes that left it (strayTable:
// a setsid child, its set -m job, an orphan back to the wrapper); never
// the wrapper's own tmux calls, the dead or a stranger carrying the id.
// A group not proved the task's gets nothing, and neither do its strays.
func TestStopSignalsTheProcessesThatLeftTheGroup(t *testing.T) {
	procs := &targetLog{fakeProcs: strayTable}
	if err := signalTarget(procs, ownedRecord(), syscall.SIGTERM); err != nil {
		t.Fatalf("signalTarget: %v", err)
	}
	want := []string{"group 500 terminated", "group 500 continued",
		"pid 600@9200 terminated", "pid 600@9200 continued",
		"pid 601@9300 terminated", "pid 601@9300 continued",
		"pid 700@9400 terminated", "pid 700@9400 continued"}
	// The strays in any order, each one's signals in order.
	slices.SortStableFunc(procs.sent[2:], func(a, b string) int { return strings.Compare(strings.Fields(a)[1], strings.Fields(b)[1]) })
	if !slices.Equal(procs.sent, want) {
		t.Errorf("a stop signalled\n%s\nwant\n%s", strings.Join(procs.sent, "\n"), strings.Join(want, "\n"))
	}

	// The command's pid leads a stranger's group now: nothing is proved.
	stranger := &targetLog{fakeProcs: strayTable.with(500, child(proc(500, 500, 1234, ""), 1)).with(501, nil)}
	if err := signalTarget(stranger, ownedRecord(), syscall.SIGTERM); err == nil || len(stranger.sent) != 0 {
		t.Errorf("a group not proved the task's: signalTarget = %v, sent %v; want an error and no signal", err, stranger.sent)
	}
}
