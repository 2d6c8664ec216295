package tasks

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/qtask/qtask/tasks/capture"
	"github.com/qtask/qtask/tasks/procs"
	"github.com/qtask/qtask/tasks/taskid"
	"github.com/qtask/qtask/tmux"
)

// AdoptOptions describes a command a human typed in an interactive shell,
// as the shell hooks recorded it, and where to move it.
type AdoptOptions struct {
	Server         tmux.Server
	Pane           tmux.PaneID
	ShellPID       int
	Command        string
	StartedAt      time.Time
	Scope          string
	Session        string // background session the pane moves to
	Self           string // qtask binary, for the capture's argv
	OutputMaxBytes int64
	KeepFullScreen bool
	StatusFormat   string // the tmux status segment's format
	// Claim runs once the task id exists and before output capture starts:
	// the shell hooks use it to mark the pane, so the prompt hook that
	// follows the command's end reports to this task.
	Claim func(id string) error
	// OutputStart, if set, is the index of the first of the pane's lines
	// (its history, then its screen's rows) that the command printed: the
	// shell hooks know the prompt and the echoed command line that come
	// before it. Without it every line is kept.
	OutputStart func(lines []string) int
	// Running tells, per the shell hooks, whether the command line still
	// runs. (The terminal's foreground group cannot: while the shell itself
	// runs part of the line, a loop say, the shell is in the foreground.)
	Running func() bool
}

// Adopt turns the command running in the foreground of an interactive pane
// into a background task without touching its processes: the pane's
// history becomes the start of the output file, pipe-pane captures the
// rest (starting from the screen the pane shows), a fresh shell takes the pane's place in the user's window, and the
// pane moves to the background session. The shell's prompt hook later
// reports the exit code (FinishAdopted).
func (s *Store) Adopt(ctx context.Context, opts AdoptOptions) (*Task, error) {
	info, err := s.panes(opts.Server).PaneInfo(ctx, opts.Pane)
	if err != nil {
		return nil, err
	}
	if info.PID != opts.ShellPID {
		// The hooks' record is from another shell (or server) than this pane's.
		return nil, &NothingRunningError{Pane: opts.Pane}
	}
	id, err := s.reserveID()
	if err != nil {
		return nil, err
	}
	r, err := adoptRecord(id, s.outputPath(id), opts, info)
	if err != nil {
		return nil, err
	}
	s.statusLine().Start(id)
	abandon := func(err error) (*Task, error) {
		os.Remove(s.recordPath(id))
		os.Remove(s.outputPath(id))
		s.statusLine().Unstart(id)
		return nil, err
	}
	if err := s.save(r); err != nil {
		return abandon(err)
	}
	s.announceStart(r)
	if opts.Claim != nil {
		if err := opts.Claim(id); err != nil {
			return abandon(err)
		}
	}
	capture := s.helperArgv(opts.Self, CaptureVerb, id)
	snap, err := s.panes(opts.Server).CaptureAndPipe(ctx, opts.Pane, capture)
	if err != nil {
		return abandon(fmt.Errorf("capture pane %s: %w", opts.Pane, err))
	}
	if err := s.writeAdoptedStart(ctx, r, snap, opts.OutputStart); err != nil {
		return &r.Task, err
	}
	if opts.Running != nil && !opts.Running() {
		// It ended while we were adopting it: its prompt hook settles it
		// (or the caller, if the hook ran before the pane was claimed);
		// nothing is moved.
		return &r.Task, nil
	}
	shell := typedShell(opts.ShellPID, info.Path)
	if _, err := s.panes(opts.Server).ReplaceWithShell(ctx, info, opts.Session, id, shell); err != nil {
		return &r.Task, fmt.Errorf("task %s is in the background list, but its pane could not be moved: %w", id, err)
	}
	return &r.Task, nil
}

// typedShell is how to start again, in the user's place, the shell pid
// that the promoted command was typed in: its program (/proc/PID/exe, by
// the name it was started by, see shellProgram), interactive, in its own
// directory. Not with its arguments: they may hold a start-up command
// (`fish -C CMD`, `bash --rcfile FILE`) that must not run a second time,
// or a file that is gone (`--rcfile <(…)`). tmux's default-shell need not be that shell (a pane
// opened as `tmux new-window fish`, a shell replaced by `exec zsh`), and
// the pane's current path is its foreground command's, which may have
// moved (`make -C sub`). A login shell (argv[0] "-bash", as
// tmux starts default-shell) gets -l. What /proc cannot say is left to
// tmux: no program, the default-shell; no directory, paneDir.
func typedShell(pid int, paneDir string) tmux.ShellSpec {
	spec := tmux.ShellSpec{Dir: paneDir}
	if dir, err := os.Readlink(fmt.Sprintf("/proc/%d/cwd", pid)); err == nil && present(dir) {
		spec.Dir = dir
	}
	exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid))
	cmdline, err2 := procs.ReadFile(pid, "cmdline")
	args := strings.Split(strings.TrimSuffix(string(cmdline), "\x00"), "\x00")
	if err != nil || err2 != nil || !present(exe) || len(cmdline) == 0 {
		return spec
	}
	// Two words: tmux runs a lone word through default-shell -c, two it
	// execs itself, as the pane's own process. On the pane's terminal a
	// login shell (-l) is interactive too.
	flag := "-i"
	if strings.HasPrefix(args[0], "-") {
		flag = "-l"
	}
	spec.Argv = []string{shellProgram(args[0], exe), flag}
	return spec
}

// shellProgram is the path to start the shell argv0 names, whose program
// is exe: argv0 itself (without a login shell's "-", looked up in PATH)
// when it still leads to exe, for a program that acts on the name it is
// called by (bash as sh, a multi-call binary); else exe.
func shellProgram(argv0, exe string) string {
	name := strings.TrimPrefix(argv0, "-")
	if !strings.Contains(name, "/") {
		var err error
		if name, err = exec.LookPath(name); err != nil {
			return exe
		}
	}
	if real, err := filepath.EvalSymlinks(name); err == nil && real == exe && filepath.IsAbs(name) {
		return name
	}
	return exe
}

// present tells whether path, as a /proc link reads it, still exists: the
// kernel appends " (deleted)" to a file or directory that has gone (a
// shell upgraded since it started, a directory removed).
func present(path string) bool {
	_, err := os.Stat(path)
	return err == nil && !strings.HasSuffix(path, " (deleted)")
}

// writeAdoptedStart starts an adopted task's output with what its pane
// showed when it was captured, from the line outputStart picks (the
// command's own, not the prompt's): the history's lines go to the output
// file, final; the screen's rows seed the capture's model (writeSeed),
// since the command can still redraw them. The record then stops waiting
// for the scrollback, even if a write failed.
func (s *Store) writeAdoptedStart(ctx context.Context, r *record, snap tmux.PaneSnapshot, outputStart func([]string) int) error {
	start := 0
	if outputStart != nil {
		start = outputStart(append(slices.Clip(snap.History), snap.Screen...))
	}
	final, seed := capture.SplitSnapshot(snap, start)
	werr := appendFile(r.OutputPath, final)
	if werr == nil {
		werr = s.writeSeed(r.ID, seed)
	}
	if _, err := s.update(ctx, r.ID, func(r *record) error { r.AwaitScrollback = false; return nil }); werr == nil {
		werr = err
	}
	return werr
}

// adoptRecord is the record of task id for the command line the shell
// opts.ShellPID runs in the pane info describes: the terminal's
// foreground job is the command's group (or the shell itself, running the
// line right now), and the shell stands in for the wrapper.
func adoptRecord(id, outputPath string, opts AdoptOptions, info tmux.PaneInfo) (*record, error) {
	fg, ok := foregroundGroup(opts.ShellPID)
	if !ok {
		fg = opts.ShellPID
	}
	shell, _ := procs.ReadStat(opts.ShellPID)
	marker, err := taskid.New()
	if err != nil {
		return nil, err
	}
	now := time.Now().UTC()
	return &record{
		Task: Task{
			ID: id, Kind: KindShell, Command: opts.Command, Cwd: info.Path, Scope: opts.Scope,
			Status: StatusRunning, PID: fg, PaneID: string(opts.Pane), StartedAt: opts.StartedAt.UTC(),
			OutputPath: outputPath, Background: true, OutputComplete: true,
		},
		WrapperPID: opts.ShellPID, WrapperStart: shell.StartTime, Session: shell.Session, CommandStart: procs.StartTime(fg),
		TmuxServer: opts.Server, EndMarker: "qtask-end:" + id + ":" + marker,
		OutputMaxBytes: opts.OutputMaxBytes, KeepFullScreen: opts.KeepFullScreen, Adopted: true, AwaitScrollback: true, PromotedAt: &now,
		StatusFormat: opts.StatusFormat,
	}, nil
}

// foregroundGroup returns the process group in the foreground of the
// shell's terminal, if it is not the shell itself (an idle prompt).
func foregroundGroup(shellPID int) (int, bool) {
	st, err := procs.ReadStat(shellPID)
	if err != nil || st.TPGID <= 0 || st.TPGID == st.Pgrp {
		return 0, false
	}
	return st.TPGID, true
}

func appendFile(path, text string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|syscall.O_NOFOLLOW, fileMode)
	if err != nil {
		return fmt.Errorf("write output: %w", err)
	}
	_, err = f.WriteString(text)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// SettleUnseen settles an adopted task whose command ended while it was
// being adopted, before its pane was claimed, so no prompt hook will ever
// report its exit status.
func (s *Store) SettleUnseen(ctx context.Context, id string) error {
	_, _, err := s.settle(ctx, id, outcome{status: StatusFailed,
		reason: "lost: the command ended while it was being promoted; its exit status was not seen"})
	return err
}

// FinishAdopted is called by the prompt hook of an adopted command's shell
// when the command has ended with status: it settles the task once the
// capture has everything (the same end-marker handshake as the wrapper's),
// then closes the pane unless keepPane.
func (s *Store) FinishAdopted(ctx context.Context, id string, status int, tty *os.File, keepPane bool) error {
	r, err := s.load(id)
	if err != nil {
		return err
	}
	if !r.Adopted {
		return fmt.Errorf("task %s was not adopted from a shell", id)
	}
	// The exit goes on record under the lock under which a stop signals
	// and records its request (noteExit), so the verdict sees a stop whose
	// SIGINT is why the command ended, and a stop that comes later finds
	// the end instead of turning it into "cancelled".
	o := codeOutcome(status)
	// Not ctx: the end goes on record however long the lock takes, as the
	// wrapper's does (see settleEnd).
	if cur, err := s.noteExit(context.Background(), id, o); err == nil {
		r = cur
	}
	o = r.stopOutcome(o)
	o.outputLoss = s.awaitAck(r, tty)
	// The prompt hook waits on this: one try, no retries.
	s.settleEnd(context.Background(), r, tty, o, 0)
	if keepPane {
		return nil
	}
	server, err := r.server()
	if err != nil {
		return err
	}
	// This closes the shell that called us, and so us: it comes last.
	return s.panes(server).KillPane(ctx, tmux.PaneID(r.PaneID))
}
