package tasks

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/qtask/qtask/tmux"
)

func TestWindowName(t *testing.T) {
	cases := []struct {
		name, command string
		agent         bool
		want          string
	}{
		{"", "npm test", false, "3f9a1c02"},
		{"build", "npm test", true, "build"},
		{"", "npm test", true, "3f9a1c02 npm test"},
		{"", "make all-of-the-targets-in-this-long-makefile", true, "3f9a1c02 make all-of-the-targets-in-this-…"},
	}
	for _, c := range cases {
		r := &record{Task: Task{ID: "3f9a1c02", Name: c.name, Command: c.command}}
		if got := windowName(r, c.agent); got != c.want {
			t.Errorf("windowName(%q, %q, agent %v) = %q, want %q", c.name, c.command, c.agent, got, c.want)
		}
	}
}

// Every caller of Start (the CLI, the MCP server, the agent hooks) gets the
// trailing-'&' rule, and a refused start leaves nothing behind.
func TestStartRefusesATrailingAmpersand(t *testing.T) {
	s := newTestStore(t)
	_, err := s.Start(context.Background(), StartOptions{Command: "npm run dev &", Cwd: t.TempDir(), Shell: "sh", Self: "/bin/true"})
	if !errors.As(err, new(*ArgumentError)) || !strings.Contains(err.Error(), "bare '&'") {
		t.Fatalf("Start(\"npm run dev &\"): %v, want an ArgumentError about the bare '&'", err)
	}
	if list, _, _ := s.List(context.Background(), Filter{}); len(list) != 0 {
		t.Fatalf("a refused start left %d task(s) behind", len(list))
	}
}

// TestStartOpensTheWindowWhereItBelongs drives Start against a fake tmux:
// a foreground run opens beside a caller on the task's server, everything
// else in the background session, and a start tmux refuses leaves nothing.
func TestStartOpensTheWindowWhereItBelongs(t *testing.T) {
	server := tmux.NewSocketServer("/run/fake.sock")
	for _, tc := range []struct {
		name            string
		background      bool
		windowInSession bool
		callerServer    tmux.Server
		failStart       bool
		wantCall        string
		wantCallerPane  bool
		wantErr         string
	}{
		{name: "foreground beside the caller", callerServer: server,
			wantCall: "start-window in user", wantCallerPane: true},
		{name: "background: the qtask session", background: true, callerServer: server,
			wantCall: "start-window in qtask", wantCallerPane: true},
		{name: "an agent's foreground window: the qtask session", windowInSession: true, callerServer: server,
			wantCall: "start-window in qtask", wantCallerPane: true},
		{name: "a caller on another server: the qtask session", callerServer: tmux.NewSocketServer("/run/other.sock"),
			wantCall: "start-window in qtask"},
		{name: "tmux refuses: nothing left behind", callerServer: server, failStart: true,
			wantCall: "start-window in user", wantErr: "start task window"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakePanes("user", "qtask")
			f.failStart = tc.failStart
			s := newTestStore(t, f.option())
			caller := Caller{Pane: f.addPane("user"), Server: tc.callerServer}
			f.calls = nil
			task, err := s.Start(context.Background(), StartOptions{
				Command: "make", Cwd: t.TempDir(), Shell: "sh", Self: "/bin/true", Session: "qtask",
				Server: server, Caller: caller, Background: tc.background, WindowInSession: tc.windowInSession,
			})
			if len(f.calls) != 1 || f.calls[0] != tc.wantCall {
				t.Errorf("tmux calls %q, want [%q]", f.calls, tc.wantCall)
			}
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Start: %v, want an error saying %q", err, tc.wantErr)
				}
				left, _ := filepath.Glob(filepath.Join(s.tasksDir(), "*"))
				outputs, _ := filepath.Glob(filepath.Join(s.outputDir(), "*"))
				left = append(left, outputs...)
				if len(left) != 0 {
					t.Fatalf("a failed start left %q behind", left)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			r, err := s.load(task.ID)
			if err != nil {
				t.Fatal(err)
			}
			if r.PaneID == "" || !r.TmuxServer.Same(server) || (r.CallerPane != "") != tc.wantCallerPane {
				t.Errorf("record: pane %q server %v caller pane %q; want a pane, the task's server, caller pane %v",
					r.PaneID, r.TmuxServer, r.CallerPane, tc.wantCallerPane)
			}
			if _, err := os.Stat(s.specPath(task.ID)); err != nil {
				t.Errorf("the wrapper's spec is missing: %v", err)
			}
		})
	}
}

// claimRival is a tmux whose window opens just as another start claims the
// same id: the rival's output and spec appear while the window is made.
type claimRival struct {
	*fakePanes
	s *Store
}

func (c *claimRival) StartWindow(ctx context.Context, spec tmux.WindowSpec) (tmux.PaneID, int, error) {
	id := spec.Argv[len(spec.Argv)-1]
	if err := os.WriteFile(c.s.outputPath(id), []byte("the rival's output\n"), 0o600); err != nil {
		return "", 0, err
	}
	if err := os.WriteFile(c.s.specPath(id), []byte(`{"command":"the rival's"}`), 0o600); err != nil {
		return "", 0, err
	}
	return c.fakePanes.StartWindow(ctx, spec)
}

// TestStartThatLosesItsClaimLeavesTheRivalsFiles: two starts that picked
// one id at once; the one whose claim fails says so and removes nothing of
// the other's, whether tmux opened its window (then closed again) or not.
func TestStartThatLosesItsClaimLeavesTheRivalsFiles(t *testing.T) {
	t.Parallel()
	for _, windowFails := range []bool{false, true} {
		f := newFakePanes("qtask")
		f.failStart = windowFails
		var s *Store
		s = newTestStore(t, withPanes(func(tmux.Server) Panes { return &claimRival{fakePanes: f, s: s} }))
		_, err := s.Start(context.Background(), StartOptions{Command: "make", Cwd: t.TempDir(), Shell: "sh",
			Self: "/bin/true", Session: "qtask", Server: tmux.NewSocketServer("/run/fake.sock"), Background: true})
		if !errors.Is(err, errIDTaken) {
			t.Fatalf("window fails %v: Start: %v, want errIDTaken", windowFails, err)
		}
		specs, _ := filepath.Glob(filepath.Join(s.tasksDir(), "*.spec"))
		outputs, _ := filepath.Glob(filepath.Join(s.outputDir(), "*.log"))
		if len(specs) != 1 || len(outputs) != 1 {
			t.Errorf("window fails %v: the rival's spec and output are %q, %q; want both kept", windowFails, specs, outputs)
		}
		if records, _ := filepath.Glob(filepath.Join(s.tasksDir(), "*.json")); len(records) != 0 {
			t.Errorf("window fails %v: a record was saved: %q", windowFails, records)
		}
	}
}

func TestInScopeGivesTheTaskItsScope(t *testing.T) {
	base := StartOptions{Env: []string{"A=1", "QTASK_SCOPE=old", "B=2"}, Scope: "old"}
	got := base.InScope("gemini:s1")
	if got.Scope != "gemini:s1" || strings.Join(got.Env, " ") != "A=1 B=2 QTASK_SCOPE=gemini:s1" {
		t.Errorf("InScope = scope %q, env %q; want gemini:s1 and the variable replaced", got.Scope, got.Env)
	}
	if strings.Join(base.Env, " ") != "A=1 QTASK_SCOPE=old B=2" {
		t.Errorf("InScope changed its receiver's environment: %q", base.Env)
	}
}
