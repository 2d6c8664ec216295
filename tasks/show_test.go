package tasks

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/qtask/qtask/tmux"
)

func TestShowDecidesHowToReachThePane(t *testing.T) {
	s := newTestStore(t)
	taskServer := tmux.NewSocketServer("/run/task.sock")
	r := saveRunning(t, s, "5b0a0001", time.Now().UTC())
	r.TmuxServer, r.PaneID = taskServer, "%7"
	if err := s.save(r); err != nil {
		t.Fatal(err)
	}
	noPane := saveRunning(t, s, "5b0a0002", time.Now().UTC())
	ended := saveRunning(t, s, "5b0a0003", time.Now().UTC())
	settleOrFail(t, s, ended.ID, 0)

	here := Caller{Pane: "%1", Server: taskServer}
	elsewhere := Caller{Pane: "%1", Server: tmux.NewSocketServer("/run/other.sock")}
	otherTmux := tmux.NewSocketServer("/run/other.sock")
	for _, tc := range []struct {
		name    string
		id      string
		opts    ShowOptions
		way     ShowWay
		wantErr string
	}{
		{"outside tmux attaches", r.ID, ShowOptions{}, ShowAttach, ""},
		{"inside the task's server switches", r.ID, ShowOptions{Caller: here}, ShowSwitch, ""},
		{"--here joins the pane", r.ID, ShowOptions{Caller: here, Here: true}, ShowJoin, ""},
		{"--here outside tmux is refused", r.ID, ShowOptions{Here: true}, 0, "works inside tmux only"},
		{"another server cannot be switched to", r.ID, ShowOptions{Caller: elsewhere}, 0, "runs on another tmux server"},
		{"a popup of the task's server switches", r.ID, ShowOptions{InTmux: &taskServer}, ShowSwitch, ""},
		{"a popup of another server does not nest a client", r.ID, ShowOptions{InTmux: &otherTmux}, 0, "runs on another tmux server"},
		{"a task without a pane yet", noPane.ID, ShowOptions{}, 0, "has no tmux pane yet"},
		{"an ended task", ended.ID, ShowOptions{Caller: here}, 0, "is not running"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			task, err := s.Get(context.Background(), tc.id)
			if err != nil {
				t.Fatal(err)
			}
			show, err := s.Show(task, tc.opts)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Show: err %v, want one saying %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || show.Way != tc.way {
				t.Fatalf("Show: way %v err %v, want way %v", show, err, tc.way)
			}
		})
	}
}

func TestShowHereOutsideTmuxIsAnArgumentError(t *testing.T) {
	s := newTestStore(t)
	r := saveRunning(t, s, "5b0a0004", time.Now().UTC())
	r.TmuxServer, r.PaneID = tmux.NewSocketServer("/run/task.sock"), "%7"
	if err := s.save(r); err != nil {
		t.Fatal(err)
	}
	_, err := s.Show(&r.Task, ShowOptions{Here: true})
	if !errors.As(err, new(*ArgumentError)) {
		t.Fatalf("attach --here outside tmux: %v, want an ArgumentError (exit 2)", err)
	}
}

// A task's window opens beside its caller only when the caller's pane is
// on the task's server: a pane id means nothing on another server.
func TestCallerOnServer(t *testing.T) {
	task := tmux.NewSocketServer("/run/task.sock")
	for _, tc := range []struct {
		name   string
		caller Caller
		want   bool
	}{
		{"outside tmux", Caller{}, false},
		{"in a pane of the task's server", Caller{Pane: "%3", Server: task}, true},
		{"in a pane of another server", Caller{Pane: "%3", Server: tmux.NewSocketServer("/run/other.sock")}, false},
		{"no pane", Caller{Server: task}, false},
	} {
		if got := tc.caller.On(task); got != tc.want {
			t.Errorf("%s: On = %v, want %v", tc.name, got, tc.want)
		}
	}
}
