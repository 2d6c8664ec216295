package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/qtask/qtask/tasks"
	"github.com/qtask/qtask/tasks/taskid"
)

// fakeStore is a TaskStore over a fixed list of tasks, for table tests of
// the run functions of ls, status, stop, wait and promote: what each
// prints and how it exits for each answer the store can give, without
// tmux or a state directory. Each method answers from its fields; calls
// records what was asked.
type fakeStore struct {
	list     []*tasks.Task
	warnings []string
	err      error // returned by every method that can fail
	stops    []tasks.StopResult
	waited   []*tasks.Task
	waitErr  error
	ready    *tasks.ReadyResult
	promoted *tasks.PromoteResult
	seen     []string
	calls    []string
}

func (f *fakeStore) call(format string, a ...any) {
	f.calls = append(f.calls, fmt.Sprintf(format, a...))
}

func (f *fakeStore) List(_ context.Context, filter tasks.Filter) ([]*tasks.Task, []string, error) {
	f.call("List %s %s", filter.Status, filter.Scope)
	return f.list, f.warnings, f.err
}

func (f *fakeStore) Get(_ context.Context, id string) (*tasks.Task, error) {
	f.call("Get %s", id)
	if f.err != nil {
		return nil, f.err
	}
	for _, t := range f.list {
		if strings.HasPrefix(t.ID, id) {
			return t, nil
		}
	}
	return nil, taskid.ErrNotFound
}

func (f *fakeStore) MarkSeen(t *tasks.Task) error {
	f.seen = append(f.seen, t.ID)
	return nil
}

func (f *fakeStore) StopMany(ctx context.Context, ids []string, opts tasks.StopOptions) []tasks.StopResult {
	f.call("StopMany %v %s", ids, opts.Grace)
	return f.stops
}

func (f *fakeStore) StopAll(ctx context.Context, opts tasks.StopOptions) ([]tasks.StopResult, error) {
	f.call("StopAll %s", opts.Grace)
	return f.stops, f.err
}

func (f *fakeStore) Wait(ctx context.Context, ids []string) ([]*tasks.Task, error) {
	f.call("Wait %v", ids)
	return f.waited, f.waitErr
}

func (f *fakeStore) AwaitReady(ctx context.Context, id string, opts tasks.ReadyOptions) (*tasks.ReadyResult, error) {
	f.call("AwaitReady %s %s", id, opts.Pattern)
	return f.ready, f.err
}

func (f *fakeStore) Promote(ctx context.Context, id, session string) (*tasks.PromoteResult, error) {
	f.call("Promote %s %s", id, session)
	return f.promoted, f.err
}

// fakeDeps is testDeps with the store replaced by f.
func fakeDeps(f *fakeStore) (*Deps, *strings.Builder, *strings.Builder) {
	deps, out, errOut := testDeps()
	deps.OpenTasks = func() (TaskStore, error) { return f, nil }
	var o, e strings.Builder
	deps.IO.Out, deps.IO.ErrOut = &o, &e
	_, _ = out, errOut
	return deps, &o, &e
}

func intp(n int) *int { return &n }

// fakeTask is a task as the store would give it.
func fakeTask(id string, status tasks.Status, code *int, command string) *tasks.Task {
	started := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	t := &tasks.Task{ID: id, Status: status, ExitCode: code, Command: command, Scope: "default",
		StartedAt: started, OutputPath: "/state/output/" + id + ".log", OutputComplete: true}
	if status != tasks.StatusRunning {
		ended := started.Add(3 * time.Second)
		t.EndedAt = &ended
	}
	if status == tasks.StatusFailed && code != nil {
		t.Error = fmt.Sprintf("exited with code %d", *code)
	}
	return t
}

// exitOf is the exit code err maps to, through Main's own mapping.
func exitOf(err error) int { return exitCode(err, "qtask", io.Discard) }

func TestRunLs(t *testing.T) {
	running := fakeTask("3f9a1c02", tasks.StatusRunning, nil, "npm run dev")
	failed := fakeTask("b7e0d511", tasks.StatusFailed, intp(3), "make lint")
	for _, c := range []struct {
		name     string
		store    fakeStore
		opts     LsOptions
		code     int
		out, err []string // substrings each stream must hold
		call     string
	}{
		{name: "a table of the tasks", store: fakeStore{list: []*tasks.Task{running, failed}},
			out: []string{"ID", "3f9a1c02", "running", "npm run dev", "b7e0d511", "make lint"}, call: "List  "},
		{name: "ids only", store: fakeStore{list: []*tasks.Task{running, failed}}, opts: LsOptions{Quiet: true},
			out: []string{"3f9a1c02\nb7e0d511\n"}},
		{name: "json", store: fakeStore{list: []*tasks.Task{failed}}, opts: LsOptions{JSON: true},
			out: []string{`"id": "b7e0d511"`, `"status": "failed"`, `"exit_code": 3`}},
		{name: "the filter reaches the store", store: fakeStore{}, opts: LsOptions{Status: "failed", Scope: "agent"},
			out: []string{"No failed tasks in scope agent."}, call: "List failed agent"},
		{name: "a bad status is a usage error, nothing read", opts: LsOptions{Status: "done"}, code: exitUsage},
		{name: "warnings go to stderr", store: fakeStore{list: []*tasks.Task{running}, warnings: []string{"task x is lost but cannot be settled"}},
			out: []string{"3f9a1c02"}, err: []string{"warning: task x is lost but cannot be settled"}},
		{name: "a store error is the command's", store: fakeStore{err: errors.New("read state: permission denied")}, code: exitError},
	} {
		t.Run(c.name, func(t *testing.T) {
			deps, out, errOut := fakeDeps(&c.store)
			err := runLs(context.Background(), deps, &c.opts)
			checkRun(t, err, c.code, out.String(), errOut.String(), c.out, c.err)
			checkFirstCall(t, c.store.calls, c.call)
		})
	}
}

func TestRunStatus(t *testing.T) {
	failed := fakeTask("b7e0d511", tasks.StatusFailed, intp(3), "make lint")
	running := fakeTask("3f9a1c02", tasks.StatusRunning, nil, "npm run dev")
	for _, c := range []struct {
		name   string
		store  fakeStore
		output string // the task's output file
		opts   StatusOptions
		code   int
		out    []string
		seen   bool
	}{
		{name: "an ended task: its rows and last lines, and it is seen", store: fakeStore{list: []*tasks.Task{failed}}, output: "lint: 3 errors\n",
			opts: StatusOptions{ID: "b7e"}, seen: true,
			out: []string{"id:       b7e0d511", "status:   failed: exited with code 3", "--- last 10 lines of output ---\nlint: 3 errors\n"}},
		{name: "a running task: its output so far", store: fakeStore{list: []*tasks.Task{running}}, output: "listening on :3000",
			opts: StatusOptions{ID: "3f9"}, seen: true, out: []string{"--- output so far ---\nlistening on :3000\n"}},
		{name: "a long output says it was cut", store: fakeStore{list: []*tasks.Task{running}}, output: strings.Repeat("x", 2001),
			opts: StatusOptions{ID: "3f9"}, seen: true, out: []string{"--- last 2000 characters of output ---"}},
		{name: "json", store: fakeStore{list: []*tasks.Task{failed}}, opts: StatusOptions{ID: "b7e", JSON: true}, seen: true,
			out: []string{`"id": "b7e0d511"`}},
		{name: "an unknown id", store: fakeStore{list: []*tasks.Task{failed}}, opts: StatusOptions{ID: "ffff"}, code: exitError},
	} {
		t.Run(c.name, func(t *testing.T) {
			for i, task := range c.store.list {
				task := *task
				task.OutputPath = filepath.Join(t.TempDir(), task.ID+".log")
				if err := os.WriteFile(task.OutputPath, []byte(c.output), 0o600); err != nil {
					t.Fatal(err)
				}
				c.store.list[i] = &task
			}
			deps, out, errOut := fakeDeps(&c.store)
			err := runStatus(context.Background(), deps, &c.opts)
			checkRun(t, err, c.code, out.String(), errOut.String(), c.out, nil)
			if got := len(c.store.seen) > 0; got != c.seen {
				t.Errorf("marked seen %v, want %v", got, c.seen)
			}
		})
	}
}

func TestRunStop(t *testing.T) {
	grace := 5 * time.Second
	cancelled := fakeTask("3f9a1c02", tasks.StatusCancelled, intp(143), "npm run dev")
	ended := fakeTask("b7e0d511", tasks.StatusFailed, intp(3), "make lint")
	for _, c := range []struct {
		name     string
		store    fakeStore
		opts     StopOptions
		code     int
		out, err []string
		call     string
	}{
		{name: "stopped", store: fakeStore{stops: []tasks.StopResult{{Task: cancelled}}},
			opts: StopOptions{IDs: []string{"3f9"}, Grace: &grace}, out: []string{"Stopped task 3f9a1c02: cancelled"}, call: "StopMany [3f9] 5s"},
		{name: "already ended is not an error", store: fakeStore{stops: []tasks.StopResult{{Err: &tasks.NotRunningError{Task: ended}}}},
			opts: StopOptions{IDs: []string{"b7e"}, Grace: &grace}, out: []string{"Task b7e0d511 already ended: failed: exited with code 3"}},
		{name: "one failure of several: exit 1, the others still said", store: fakeStore{stops: []tasks.StopResult{{Task: cancelled}, {Err: taskid.ErrNotFound}}},
			opts: StopOptions{IDs: []string{"3f9", "ffff"}, Grace: &grace}, code: exitError,
			out: []string{"Stopped task 3f9a1c02"}, err: []string{"qtask: "}},
		{name: "--all with nothing running", opts: StopOptions{All: true, Grace: &grace}, out: []string{"No running tasks."}, call: "StopAll 5s"},
	} {
		t.Run(c.name, func(t *testing.T) {
			deps, out, errOut := fakeDeps(&c.store)
			err := runStop(context.Background(), deps, &c.opts)
			checkRun(t, err, c.code, out.String(), errOut.String(), c.out, c.err)
			checkFirstCall(t, c.store.calls, c.call)
		})
	}
}

func TestRunWait(t *testing.T) {
	ok := fakeTask("3f9a1c02", tasks.StatusCompleted, intp(0), "make")
	bad := fakeTask("b7e0d511", tasks.StatusFailed, intp(3), "make lint")
	lost := fakeTask("c0ffee00", tasks.StatusFailed, nil, "server")
	lost.Error = "lost: its tmux server is gone"
	running := fakeTask("d00d0000", tasks.StatusRunning, nil, "sleep 300")
	second := time.Second
	for _, c := range []struct {
		name     string
		store    fakeStore
		opts     WaitOptions
		code     int
		out, err []string
	}{
		{name: "one task passes its exit code", store: fakeStore{waited: []*tasks.Task{bad}}, opts: WaitOptions{IDs: []string{"b7e"}},
			code: 3, out: []string{"b7e0d511 failed: exited with code 3"}},
		{name: "completed is 0", store: fakeStore{waited: []*tasks.Task{ok}}, opts: WaitOptions{IDs: []string{"3f9"}}, out: []string{"3f9a1c02 completed"}},
		{name: "no exit code is 1", store: fakeStore{waited: []*tasks.Task{lost}}, opts: WaitOptions{IDs: []string{"c0f"}}, code: exitError},
		{name: "several: 0 only if all completed", store: fakeStore{waited: []*tasks.Task{ok, bad}}, opts: WaitOptions{IDs: []string{"3f9", "b7e"}}, code: exitError},
		{name: "a timeout names what still runs", store: fakeStore{waited: []*tasks.Task{ok, running}, waitErr: context.DeadlineExceeded},
			opts: WaitOptions{IDs: []string{"3f9", "d00"}, Timeout: &second}, code: exitTimeout, err: []string{"timed out after 1s; still running: d00d0000\n"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			deps, out, errOut := fakeDeps(&c.store)
			err := runWait(context.Background(), deps, &c.opts)
			checkRun(t, err, c.code, out.String(), errOut.String(), c.out, c.err)
		})
	}
}

func TestRunPromote(t *testing.T) {
	running := fakeTask("3f9a1c02", tasks.StatusRunning, nil, "make -j8")
	done := fakeTask("3f9a1c02", tasks.StatusCompleted, intp(0), "make -j8")
	for _, c := range []struct {
		name  string
		store fakeStore
		code  int
		out   []string
	}{
		{name: "promoted", store: fakeStore{promoted: &tasks.PromoteResult{Task: running}},
			out: []string{"Promoted task 3f9a1c02 to the background; output continues in /state/output/3f9a1c02.log"}},
		{name: "lost the race to the end", store: fakeStore{promoted: &tasks.PromoteResult{Task: done, AlreadyFinished: true, ExitCode: intp(0)}},
			out: []string{"Task 3f9a1c02 already finished, exit 0; nothing to promote."}},
		{name: "already in the background", store: fakeStore{promoted: &tasks.PromoteResult{Task: running, AlreadyBackground: true}},
			out: []string{"Task 3f9a1c02 is already in the background"}},
		{name: "an unknown id", store: fakeStore{err: taskid.ErrNotFound}, code: exitError},
	} {
		t.Run(c.name, func(t *testing.T) {
			deps, out, errOut := fakeDeps(&c.store)
			deps.Env.ConfigPath = "/nonexistent/qtask-test-config.toml" // defaults
			err := runPromote(context.Background(), deps, &PromoteOptions{ID: "3f9"})
			checkRun(t, err, c.code, out.String(), errOut.String(), c.out, nil)
			if len(c.store.calls) == 0 || !strings.HasPrefix(c.store.calls[0], "Promote 3f9 ") {
				t.Errorf("store calls %q, want a Promote of 3f9", c.store.calls)
			}
		})
	}
}

// checkRun checks a run function's exit code and that each stream holds
// each wanted piece.
// checkFirstCall checks that the fake store's first call was want, when
// a case names one.
func checkFirstCall(t *testing.T, calls []string, want string) {
	t.Helper()
	if want != "" && (len(calls) == 0 || calls[0] != want) {
		t.Errorf("store calls %q, want %q first", calls, want)
	}
}

func checkRun(t *testing.T, err error, code int, out, errOut string, wantOut, wantErr []string) {
	t.Helper()
	if got := exitOf(err); got != code {
		t.Errorf("exit %d (%v), want %d\nstdout: %s\nstderr: %s", got, err, code, out, errOut)
	}
	for _, w := range wantOut {
		if !strings.Contains(out, w) {
			t.Errorf("stdout lacks %q:\n%s", w, out)
		}
	}
	for _, w := range wantErr {
		if !strings.Contains(errOut, w) {
			t.Errorf("stderr lacks %q:\n%s", w, errOut)
		}
	}
}
