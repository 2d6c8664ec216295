package tasks

import (
	"bufio"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/qtask/qtask/tmux"
)

// A stop signals an adopted command and records its request in one locked
// step; the prompt hook that reports the command's end may run before that
// step is written. Its verdict must wait for the step and see the stop:
// the SIGINT is why the command exited 130.
func TestFinishAdoptedSeesAStopSignalledUnderTheLock(t *testing.T) {
	s := newTestStore(t)
	r := saveRunning(t, s, "abcd0001", time.Now().UTC())
	r.Adopted, r.OutputAcked, r.EndMarker = true, true, "qtask-end:abcd0001:x"
	if err := s.save(r); err != nil {
		t.Fatal(err)
	}
	tty, hook, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer tty.Close()
	finished := make(chan error, 1)
	_, err = s.update(context.Background(), r.ID, func(r *record) error {
		// Here beginStop has signalled; the command ends and its prompt
		// hook reports at once.
		go func() {
			finished <- s.FinishAdopted(context.Background(), r.ID, 130, hook, true)
			hook.Close()
		}()
		// A hook that decides without the lock prints the end marker now;
		// one that waits for the lock prints nothing until it is released.
		tty.SetReadDeadline(time.Now().Add(time.Second))
		tty.Read(make([]byte, 64))
		r.requestStop("")
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := <-finished; err != nil {
		t.Fatal(err)
	}
	got, err := s.load(r.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != StatusCancelled {
		t.Errorf("adopted command stopped by SIGINT settled %s (%q), want cancelled", got.Status, got.Error)
	}
}

// failingPanes is fakePanes with one operation refused.
type failingPanes struct {
	*fakePanes
	failReplace bool
	failCapture bool
}

func (f failingPanes) ReplaceWithShell(ctx context.Context, info tmux.PaneInfo, session, name string, shell tmux.ShellSpec) (tmux.PaneID, error) {
	if f.failReplace {
		return "", tmux.ErrNotFound
	}
	return f.fakePanes.ReplaceWithShell(ctx, info, session, name, shell)
}

func (f failingPanes) CaptureAndPipe(ctx context.Context, pane tmux.PaneID, argv []string) (tmux.PaneSnapshot, error) {
	if f.failCapture {
		return tmux.PaneSnapshot{}, tmux.ErrNoServer
	}
	return f.fakePanes.CaptureAndPipe(ctx, pane, argv)
}

// TestAdopt drives Adopt against a fake tmux; the "shell" is a sleep this
// test starts in a session of its own (and kills), so the record's pids are
// the test's own child's.
func TestAdopt(t *testing.T) {
	shell := exec.Command("sleep", "300")
	shell.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := shell.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { shell.Process.Kill(); shell.Wait() })
	for _, tc := range []struct {
		name      string
		otherPID  bool // the pane's first process is not the hooks' shell
		ended     bool // the command ended while it was being adopted
		panes     failingPanes
		wantErr   string
		wantTask  bool
		wantCalls []string
	}{
		{name: "adopted: scrollback kept after the echo, pane replaced", wantTask: true,
			wantCalls: []string{"capture-and-pipe %101", "replace %101 with a shell, moving it to qtask"}},
		{name: "another shell's pane is refused", otherPID: true, wantErr: "nothing running in pane"},
		{name: "ended meanwhile: listed, not moved", ended: true, wantTask: true,
			wantCalls: []string{"capture-and-pipe %101"}},
		{name: "a failed capture leaves nothing", panes: failingPanes{failCapture: true}, wantErr: "capture pane %101"},
		{name: "a failed move is reported, the task kept", panes: failingPanes{failReplace: true}, wantTask: true,
			wantErr: "could not be moved", wantCalls: []string{"capture-and-pipe %101"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fake := newFakePanes("user", "qtask")
			tc.panes.fakePanes = fake
			s := newTestStore(t, withPanes(func(tmux.Server) Panes { return tc.panes }))
			pane := fake.addPane("user")
			info := fake.panes[pane]
			info.PID = shell.Process.Pid
			if tc.otherPID {
				info.PID = os.Getpid()
			}
			fake.panes[pane] = info
			task, err := s.Adopt(context.Background(), AdoptOptions{
				Server: tmux.NewSocketServer("/run/fake.sock"), Pane: pane, ShellPID: shell.Process.Pid,
				Command: "make", StartedAt: time.Now(), Session: "qtask", Self: "/bin/true",
				OutputStart: func(lines []string) int { return slices.Index(lines, "$ make") + 1 },
				Running:     func() bool { return !tc.ended },
			})
			if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Fatalf("Adopt: %v, want error %q", err, tc.wantErr)
			}
			if !slices.Equal(fake.calls, tc.wantCalls) {
				t.Errorf("tmux calls %q, want %q", fake.calls, tc.wantCalls)
			}
			list, _, _ := s.List(context.Background(), Filter{})
			if (len(list) == 1) != tc.wantTask || (task != nil) != tc.wantTask {
				t.Fatalf("tasks listed %d, returned %v; want a task: %v", len(list), task, tc.wantTask)
			}
			if !tc.wantTask {
				return
			}
			if got := mustReadFile(t, task.OutputPath); got != "building\n" {
				t.Errorf("the output file starts with %q, want the history after the command line", got)
			}
			seed, ok, err := s.takeSeed(task.ID)
			if !ok || err != nil || !slices.Equal(seed.Rows, []string{"step 1 of 3", ""}) || seed.Hidden != 0 || seed.CursorX != 11 {
				t.Errorf("the capture's screen: %+v (found %v, %v); want the pane's screen and cursor", seed, ok, err)
			}
			if task.PID != shell.Process.Pid || !task.Background || !task.Running() {
				t.Errorf("adopted task: pid %d background %v status %s; want the shell's pid, background, running", task.PID, task.Background, task.Status)
			}
		})
	}
}

func mustReadFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// typedShell starts the shell again as it was started: its program, its
// arguments, -l for a login shell (argv[0] "-bash"), -i when alone (tmux
// would hand a lone word to default-shell -c), in its own directory; and
// leaves to tmux what /proc cannot tell.
// awaitEcho waits until a cat started by the test copies a line back:
// until then its exec may not be over. Start returns once the exec is past
// its point of no return, and /proc/PID/cmdline reads empty until the
// kernel has put the new program's arguments in place (seen: typedShell
// found no argv in about 1 run of TestTypedShell in 40).
func awaitEcho(t *testing.T, stdin io.Writer, stdout io.Reader) {
	t.Helper()
	echoed := make(chan error, 1)
	go func() {
		_, err := io.WriteString(stdin, "up\n")
		if err == nil {
			_, err = bufio.NewReader(stdout).ReadString('\n')
		}
		echoed <- err
	}()
	select {
	case err := <-echoed:
		if err != nil {
			t.Fatalf("the stand-in shell did not echo: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the stand-in shell did not echo within 10 s")
	}
}

func TestTypedShell(t *testing.T) {
	cat, err := exec.LookPath("cat")
	if err != nil {
		t.Fatal(err)
	}
	exe, _ := filepath.EvalSymlinks(cat)
	alias := filepath.Join(t.TempDir(), "sh-alias") // a program acting on its name (bash as sh)
	if err := os.Symlink(exe, alias); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args []string // of a cat standing in for the shell
		want []string
	}{
		{"alone", []string{"cat"}, []string{exe, "-i"}},
		{"its arguments not again", []string{"cat", "-u", "-"}, []string{exe, "-i"}}, // as a start-up command (fish -C) would run twice
		{"login", []string{"-cat", "-"}, []string{exe, "-l"}},
		{"by another name", []string{alias, "-"}, []string{alias, "-i"}},
		{"by a name that leads elsewhere", []string{"/bin/true", "-"}, []string{exe, "-i"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir, _ := filepath.EvalSymlinks(t.TempDir())
			shell := &exec.Cmd{Path: cat, Args: tc.args, Dir: dir}
			stdin, err := shell.StdinPipe() // it runs until this closes
			if err != nil {
				t.Fatal(err)
			}
			stdout, err := shell.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := shell.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { stdin.Close(); shell.Wait() })
			awaitEcho(t, stdin, stdout)
			got := typedShell(shell.Process.Pid, "/pane/dir")
			if !slices.Equal(got.Argv, tc.want) || got.Dir != dir {
				t.Fatalf("typedShell = %q in %s, want %q in %s", got.Argv, got.Dir, tc.want, dir)
			}
		})
	}
	shell := exec.Command("true")
	shell.Run() // gone, and reaped
	if got := typedShell(shell.Process.Pid, "/pane/dir"); got.Argv != nil || got.Dir != "/pane/dir" {
		t.Fatalf("typedShell of a process that is gone = %q in %s, want tmux's default in the pane's directory", got.Argv, got.Dir)
	}
}
