package tasks

import (
	"context"
	"fmt"
	"os"
	"strings"
	"syscall"
	"time"

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
	// Claim runs once the task id exists and before output capture starts:
	// the shell hooks use it to mark the pane, so the prompt hook that
	// follows the command's end reports to this task.
	Claim func(id string) error
}

// Adopt turns the command running in the foreground of an interactive pane
// into a background task without touching its processes: the pane's
// scrollback becomes the start of the output file, pipe-pane captures the
// rest, a fresh shell takes the pane's place in the user's window, and the
// pane moves to the background session. The shell's prompt hook later
// reports the exit code (FinishAdopted).
func (s *Store) Adopt(ctx context.Context, opts AdoptOptions) (*Task, error) {
	info, err := opts.Server.PaneInfo(ctx, opts.Pane)
	if err != nil {
		return nil, err
	}
	fg, ok := foregroundGroup(opts.ShellPID)
	if info.PID != opts.ShellPID || !ok {
		return nil, &NothingRunningError{Pane: opts.Pane}
	}
	id, err := s.reserveID()
	if err != nil {
		return nil, err
	}
	marker, err := newID()
	if err != nil {
		return nil, err
	}
	now := time.Now().UTC()
	r := &record{
		Task: Task{
			ID: id, Kind: KindShell, Command: opts.Command, Cwd: info.Path, Scope: opts.Scope,
			Status: StatusRunning, PID: fg, PaneID: string(opts.Pane), StartedAt: opts.StartedAt.UTC(),
			OutputPath: s.outputPath(id), Background: true,
		},
		WrapperPID: opts.ShellPID, WrapperStart: processStart(opts.ShellPID),
		TmuxServer: opts.Server.String(), EndMarker: "qtask-end:" + id + ":" + marker,
		OutputMaxBytes: opts.OutputMaxBytes, Adopted: true, AwaitScrollback: true, PromotedAt: &now,
	}
	if err := s.save(r); err != nil {
		return nil, err
	}
	abandon := func(err error) (*Task, error) {
		os.Remove(s.recordPath(id))
		os.Remove(s.outputPath(id))
		return nil, err
	}
	if opts.Claim != nil {
		if err := opts.Claim(id); err != nil {
			return abandon(err)
		}
	}
	capture := []string{opts.Self, "_capture", "--state-dir", s.dir, id}
	scrollback, err := opts.Server.CaptureAndPipe(ctx, opts.Pane, capture)
	if err != nil {
		return abandon(fmt.Errorf("capture pane %s: %w", opts.Pane, err))
	}
	werr := appendFile(r.OutputPath, commandOutput(scrollback, opts.Command))
	if _, err := s.update(id, func(r *record) error { r.AwaitScrollback = false; return nil }); werr == nil {
		werr = err
	}
	if werr != nil {
		return &r.Task, werr
	}
	if _, still := foregroundGroup(opts.ShellPID); !still {
		// It ended while we were adopting it: the prompt hook settles it;
		// nothing is moved.
		return &r.Task, nil
	}
	if _, err := opts.Server.ReplaceWithShell(ctx, info, opts.Session, info.Path, id); err != nil {
		return &r.Task, fmt.Errorf("task %s is in the background list, but its pane could not be moved: %w", id, err)
	}
	return &r.Task, nil
}

// foregroundGroup returns the process group in the foreground of the
// shell's terminal, if it is not the shell itself (an idle prompt).
func foregroundGroup(shellPID int) (int, bool) {
	st, err := readProcStat(shellPID)
	if err != nil || st.tpgid <= 0 || st.tpgid == st.pgrp {
		return 0, false
	}
	return st.tpgid, true
}

// commandOutput keeps what the pane showed after the command line was
// typed, without the trailing blank screen rows capture-pane includes. The
// command line is found from the bottom up: a line holding the start of
// the command, continued (a shell may wrap or echo it over several rows)
// until all of the command has been seen.
func commandOutput(scrollback, command string) string {
	lines := strings.Split(scrollback, "\n")
	for i := range lines {
		lines[i] = strings.TrimRight(lines[i], " ")
	}
	for len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	if end := commandLineEnd(lines, command); end >= 0 {
		lines = lines[end+1:]
	}
	if len(lines) == 0 {
		return ""
	}
	return strings.Join(lines, "\n") + "\n"
}

// commandLineEnd is the index of the last row of the last echo of command
// in lines, or -1.
func commandLineEnd(lines []string, command string) int {
	want := strings.Join(strings.Fields(command), "")
	if want == "" {
		return -1
	}
	head := want[:min(len(want), 16)]
	for i := len(lines) - 1; i >= 0; i-- {
		seen := strings.Join(strings.Fields(lines[i]), "")
		at := strings.Index(seen, head)
		if at < 0 {
			continue
		}
		seen = seen[at:]
		for j := i; j < len(lines) && j-i < 64; j++ {
			if j > i {
				seen += strings.Join(strings.Fields(lines[j]), "")
			}
			if strings.HasPrefix(seen, want) {
				return j
			}
		}
	}
	return -1
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
	code := status
	o := outcome{status: StatusCompleted, exitCode: &code}
	if status != 0 {
		o = outcome{status: StatusFailed, exitCode: &code, reason: fmt.Sprintf("exited with code %d", status)}
	}
	s.finish(r, ExecOptions{ID: id, Out: tty}, false, r.stopOutcome(o))
	if keepPane {
		return nil
	}
	server, err := tmux.ParseServer(r.TmuxServer)
	if err != nil {
		return err
	}
	// This closes the shell that called us, and so us: it comes last.
	return server.KillPane(ctx, tmux.PaneID(r.PaneID))
}
