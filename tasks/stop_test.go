package tasks

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
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
// to stop (unknown, ended, lost) and a caller inside the task. No record
// names a process group, so nothing could be signalled even by mistake.
func TestStopRefuses(t *testing.T) {
	sid, err := unix.Getsid(0)
	if err != nil {
		t.Fatal(err)
	}
	me := os.Getpid()
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
			r.WrapperPID, r.WrapperStart, r.Session = me, processStart(me), sid
			if err := s.save(r); err != nil {
				t.Fatal(err)
			}
		}, new(*InsideTaskError), "stopping it would stop this command too"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newTestStore(t)
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
		})
	}
}
