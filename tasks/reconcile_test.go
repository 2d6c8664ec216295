package tasks

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/qtask/qtask/tasks/procs"
)

func TestStartingUp(t *testing.T) {
	now := time.Now()
	cases := []struct {
		name    string
		wrapper int
		started time.Time
		want    bool
	}{
		{"no wrapper yet, just started", 0, now.Add(-time.Second), true},
		{"no wrapper past the grace", 0, now.Add(-startGrace - time.Second), false},
		{"no wrapper, started an hour from now", 0, now.Add(time.Hour), false},
		{"no wrapper, started a moment from now", 0, now.Add(time.Second), false},
		{"wrapper known", 123, now.Add(-time.Second), false},
	}
	for _, tc := range cases {
		r := &record{Task: Task{StartedAt: tc.started}, WrapperPID: tc.wrapper}
		if got := startingUp(r); got != tc.want {
			t.Errorf("%s: startingUp = %v, want %v: a dead task could stay running, or a live one be called lost", tc.name, got, tc.want)
		}
	}
}

// TestReconcile: a reader settles a running task whose wrapper is gone as
// lost, leaves a live one running, and turns a foreground task whose
// waiting caller died into a background one. The "wrapper" is this test
// process, alive or taken for another by a wrong start time; no record has
// a pid or session, so nothing is signalled.
func TestReconcile(t *testing.T) {
	me := os.Getpid()
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	gone := dead.Process.Pid
	for _, tc := range []struct {
		name       string
		shape      func(r *record)
		status     Status
		reason     string
		background bool
	}{
		{"a live wrapper", func(r *record) { r.WrapperPID, r.WrapperStart = me, procs.StartTime(me) }, StatusRunning, "", false},
		{"a recycled wrapper pid", func(r *record) { r.WrapperPID, r.WrapperStart = me, procs.StartTime(me)+1 }, StatusFailed, "lost: the task's wrapper (pid", false},
		{"a shell gone from an adopted pane", func(r *record) { r.WrapperPID, r.WrapperStart, r.Adopted = me, procs.StartTime(me)+1, true }, StatusFailed, "lost: the task's shell (pid", false},
		{"a wrapper still starting", func(r *record) {}, StatusRunning, "", false},
		{"a wrapper that never started", func(r *record) { r.StartedAt = r.StartedAt.Add(-startGrace - time.Second) }, StatusFailed, "lost: the task's wrapper never started", false},
		{"a foreground task whose caller died", func(r *record) { r.WrapperPID, r.WrapperStart, r.WaiterPID = me, procs.StartTime(me), gone }, StatusRunning, "", true},
		{"a foreground task whose caller waits", func(r *record) { r.WrapperPID, r.WrapperStart, r.WaiterPID = me, procs.StartTime(me), me }, StatusRunning, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newTestStore(t)
			r := saveRunning(t, s, "2ec0c11e", time.Now().UTC())
			tc.shape(r)
			if err := s.save(r); err != nil {
				t.Fatal(err)
			}
			got := s.reconcile(context.Background(), r)
			if got.Status != tc.status || !strings.HasPrefix(got.Error, tc.reason) || got.Background != tc.background {
				t.Fatalf("reconcile: %s %q background %v; want %s %q… background %v", got.Status, got.Error, got.Background, tc.status, tc.reason, tc.background)
			}
			if stored, err := s.load(r.ID); err != nil || stored.Status != got.Status || stored.Background != got.Background {
				t.Fatalf("the record on disk says %v (%v), reconcile returned %s", stored, err, got.Status)
			}
		})
	}
}
