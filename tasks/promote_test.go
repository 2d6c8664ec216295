package tasks

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/qtask/qtask/tmux"
)

// TestPromote drives promote's decisions against a fake tmux: what is
// marked, what is moved, and what is reported when the task ended first.
func TestPromote(t *testing.T) {
	code := func(c int) *int { return &c }
	for _, tc := range []struct {
		name string
		// prepare shapes the running task in the user's pane; it may end
		// it or move its pane.
		prepare  func(t *testing.T, s *Store, f *fakePanes, r *record)
		want     PromoteResult // Task is not compared
		wantErr  string
		wantMove bool
	}{
		{
			name:     "a foreground task is marked and its pane moved",
			wantMove: true,
		},
		{
			name: "a background task in the qtask session stays where it is",
			prepare: func(t *testing.T, s *Store, f *fakePanes, r *record) {
				r.Background = true
				f.MovePaneToSession(context.Background(), tmux.PaneInfo{Pane: tmux.PaneID(r.PaneID)}, "qtask")
				f.calls = nil
			},
			want: PromoteResult{AlreadyBackground: true},
		},
		{
			name: "a background task outside the session is moved there",
			prepare: func(t *testing.T, s *Store, f *fakePanes, r *record) {
				r.Background = true
			},
			want:     PromoteResult{AlreadyBackground: true},
			wantMove: true,
		},
		{
			name: "a task that ended is reported with its exit code",
			prepare: func(t *testing.T, s *Store, f *fakePanes, r *record) {
				s.save(r)
				settleOrFail(t, s, r.ID, 3)
			},
			want: PromoteResult{AlreadyFinished: true, ExitCode: code(3)},
		},
		{
			name: "an exit on record but not settled yet wins over the promote",
			prepare: func(t *testing.T, s *Store, f *fakePanes, r *record) {
				now := time.Now().UTC()
				r.ExitedAt, r.ExitedCode = &now, code(0)
			},
			want: PromoteResult{AlreadyFinished: true, ExitCode: code(0)},
		},
		{
			name: "a task without a pane yet is only marked",
			prepare: func(t *testing.T, s *Store, f *fakePanes, r *record) {
				r.PaneID = ""
			},
		},
		{
			name: "a pane that closed because the task ended meanwhile is no error",
			prepare: func(t *testing.T, s *Store, f *fakePanes, r *record) {
				f.onPaneInfo = func(pane tmux.PaneID) {
					f.KillPane(context.Background(), pane)
					now := time.Now().UTC()
					s.update(context.Background(), r.ID, func(r *record) error { r.ExitedAt, r.ExitedCode = &now, code(0); return nil })
				}
			},
		},
		{
			name: "a pane gone while the task runs is reported",
			prepare: func(t *testing.T, s *Store, f *fakePanes, r *record) {
				f.KillPane(context.Background(), tmux.PaneID(r.PaneID))
				f.calls = nil
			},
			wantErr: "could not be moved",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakePanes("user", "qtask")
			s := newTestStore(t, f.option())
			r := saveRunning(t, s, "7a5c0001", time.Now().UTC())
			r.TmuxServer, r.PaneID = tmux.NewSocketServer("/run/fake.sock"), string(f.addPane("user"))
			if tc.prepare != nil {
				tc.prepare(t, s, f, r)
			}
			if cur, _ := s.load(r.ID); cur.Running() {
				if err := s.save(r); err != nil {
					t.Fatal(err)
				}
			}

			res, err := s.Promote(context.Background(), r.ID, "qtask")
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Promote: %v, want an error saying %q", err, tc.wantErr)
				}
			} else if err != nil {
				t.Fatalf("Promote: %v", err)
			}
			if res.AlreadyFinished != tc.want.AlreadyFinished || res.AlreadyBackground != tc.want.AlreadyBackground ||
				fmtCode(res.ExitCode) != fmtCode(tc.want.ExitCode) {
				t.Errorf("Promote = finished %v, background %v, code %s; want %v, %v, %s",
					res.AlreadyFinished, res.AlreadyBackground, fmtCode(res.ExitCode),
					tc.want.AlreadyFinished, tc.want.AlreadyBackground, fmtCode(tc.want.ExitCode))
			}
			moved := slices.ContainsFunc(f.calls, func(c string) bool { return strings.HasPrefix(c, "move ") })
			if moved != tc.wantMove {
				t.Errorf("pane moved: %v, want %v (tmux calls %q)", moved, tc.wantMove, f.calls)
			}
			after, err := s.load(r.ID)
			if err != nil {
				t.Fatal(err)
			}
			if !tc.want.AlreadyFinished && after.Running() && !after.Background {
				t.Errorf("the task is still in the foreground after its promote")
			}
		})
	}
}

// TestPromotePaneNamesOnlyATaskOfThatPane: a promote of a pane where
// nothing runs names the task that ended there, unless the pane is another
// one with the same id (tmux numbers panes from %0 again on every new
// server) — told apart by the pane's first process, the task's wrapper.
func TestPromotePaneNamesOnlyATaskOfThatPane(t *testing.T) {
	server := tmux.NewSocketServer("/run/fake.sock")
	for _, tc := range []struct {
		name      string
		panePID   int // 0: the pane is gone
		endedAgo  time.Duration
		wantEnded bool
	}{
		{"the pane runs the task's wrapper still", 4242, time.Second, true},
		{"the pane closed as the task ended", 0, time.Second, true},
		{"a pane of a later server with the same id", 777, time.Hour, false},
		{"a pane id no pane has, of a task ended long ago", 0, time.Hour, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakePanes("user", "qtask")
			s := newTestStore(t, f.option())
			pane := f.addPane("user")
			if tc.panePID == 0 {
				f.KillPane(context.Background(), pane)
			} else {
				info := f.panes[pane]
				info.PID = tc.panePID
				f.panes[pane] = info
			}
			saveFinished(t, s, "7a5c0002", time.Now().Add(-tc.endedAgo).UTC())
			if _, err := s.update(context.Background(), "7a5c0002", func(r *record) error {
				r.TmuxServer, r.PaneID, r.WrapperPID = server, string(pane), 4242
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			_, err := s.PromotePane(context.Background(), server, pane, "qtask")
			var nothing *NothingRunningError
			if !errors.As(err, &nothing) {
				t.Fatalf("PromotePane: %v, want a NothingRunningError", err)
			}
			if ended := nothing.Ended != nil; ended != tc.wantEnded {
				t.Errorf("the error names the ended task: %v, want %v", ended, tc.wantEnded)
			}
		})
	}
}
