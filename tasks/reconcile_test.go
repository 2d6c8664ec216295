package tasks

import (
	"testing"
	"time"
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
