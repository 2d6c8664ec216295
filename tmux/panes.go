package tmux

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
)

// PaneInfo is what qtask needs to know about a pane to move or replace it.
type PaneInfo struct {
	Pane        PaneID
	Window      WindowID
	Session     SessionID
	PID         int    // the pane's first process (a shell, or qtask _exec)
	Path        string // current directory of the pane's foreground process
	Width       int
	Height      int
	Dead        bool
	Active      bool // the active pane of its window
	WindowPanes int  // panes in the pane's window
}

// fieldSep separates format fields. It is printable ASCII because tmux 3.3a
// rewrites every non-printable byte of -F output (a \x1f came back as "_")
// when the client has no UTF-8 locale; no id or number can hold it. Every
// field but the last is an id or a number; the one free-text field (the path,
// which may hold any byte, "|" included) comes last and the line is split
// with a count, so nothing in it can shift the others.
const fieldSep = "|"

var paneFormat = strings.Join([]string{
	"#{pane_id}", "#{window_id}", "#{session_id}", "#{pane_pid}",
	"#{pane_width}", "#{pane_height}", "#{window_panes}", "#{pane_active}#{pane_dead}", "#{pane_current_path}",
}, fieldSep)

// PaneInfo describes one pane. A missing pane is ErrNotFound.
func (s Server) PaneInfo(ctx context.Context, pane PaneID) (PaneInfo, error) {
	out, err := s.display(ctx, string(pane), paneFormat)
	if err != nil {
		return PaneInfo{}, err
	}
	return parsePaneInfo(out)
}

func parsePaneInfo(line string) (PaneInfo, error) {
	f := strings.SplitN(line, fieldSep, 9)
	if len(f) != 9 {
		return PaneInfo{}, fmt.Errorf("tmux: unexpected pane description %q", line)
	}
	var info PaneInfo
	var err error
	if info.Pane, err = ParsePaneID(f[0]); err != nil {
		return PaneInfo{}, err
	}
	if info.Window, err = ParseWindowID(f[1]); err != nil {
		return PaneInfo{}, err
	}
	if info.Session, err = ParseSessionID(f[2]); err != nil {
		return PaneInfo{}, err
	}
	nums := make([]int, 4)
	for i, s := range f[3:7] {
		if nums[i], err = strconv.Atoi(s); err != nil {
			return PaneInfo{}, fmt.Errorf("tmux: unexpected number %q in pane description", s)
		}
	}
	info.PID, info.Width, info.Height, info.WindowPanes = nums[0], nums[1], nums[2], nums[3]
	info.Active, info.Dead = len(f[7]) == 2 && f[7][0] == '1', len(f[7]) == 2 && f[7][1] == '1'
	info.Path = f[8]
	return info, nil
}

// MovePaneToSession moves a pane into a window of its own in the named
// session (created if it does not exist), without selecting it, so whoever
// watches the source is not yanked along. A pane alone in its window moves
// with its window; one sharing a window is broken out of it. Its processes
// and its pipe-pane carry on untouched.
func (s Server) MovePaneToSession(ctx context.Context, info PaneInfo, session string) error {
	move := func() error {
		var err error
		if info.WindowPanes <= 1 {
			_, err = s.run(ctx, "move-window", "-d", "-s", string(info.Window), "-t", "="+session+":")
		} else {
			_, err = s.run(ctx, "break-pane", "-d", "-s", string(info.Pane), "-t", "="+session+":")
		}
		return err
	}
	err := move()
	if err == nil || !errors.Is(err, ErrNotFound) {
		return err
	}
	// No such session: create it, move the pane in, and drop the shell
	// window new-session had to start with.
	out, err := s.run(ctx, "new-session", "-d", "-s", formatArg(session), "-P", "-F", "#{window_id}")
	if err != nil && !errors.Is(err, ErrDuplicateSession) {
		return err
	}
	if err := move(); err != nil {
		return err
	}
	if placeholder, perr := ParseWindowID(out); perr == nil {
		_, err = s.run(ctx, "kill-window", "-t", string(placeholder))
	}
	return err
}

// SessionID returns the id of the session named name.
func (s Server) SessionID(ctx context.Context, name string) (SessionID, error) {
	out, err := s.display(ctx, "="+name+":", "#{session_id}")
	if err != nil {
		return "", err
	}
	return ParseSessionID(out)
}

// SessionOf returns the session holding a pane, for starting a foreground
// task's window beside the caller.
func (s Server) SessionOf(ctx context.Context, pane PaneID) (SessionID, error) {
	info, err := s.PaneInfo(ctx, pane)
	return info.Session, err
}

// SwitchTo makes the current client (the one whose pane ran qtask) show
// pane: its session, window and the pane itself.
func (s Server) SwitchTo(ctx context.Context, pane PaneID) error {
	return s.SwitchClientTo(ctx, "", pane)
}

// SwitchClientTo is SwitchTo for a named client ("" the current one), for
// callers tmux runs with no current client (a menu's run-shell).
func (s Server) SwitchClientTo(ctx context.Context, client string, pane PaneID) error {
	info, err := s.PaneInfo(ctx, pane)
	if err != nil {
		return err
	}
	argv := []string{"switch-client", "-t", string(info.Session)}
	if client != "" {
		argv = append(argv, "-c", client)
	}
	_, err = s.run(ctx, append(argv, ";",
		"select-window", "-t", string(info.Window), ";", "select-pane", "-t", string(pane))...)
	return err
}

// Attach runs a tmux client attached to this server, showing pane, on the
// caller's terminal until it detaches. The client runs as a child in the
// caller's process group (so it owns the terminal as the caller did), not
// exec'd in its place: when tmux refuses (no terminal, an unknown $TERM)
// its reason comes back as an error for qtask to report in its own words.
func (s Server) Attach(ctx context.Context, pane PaneID, env []string) error {
	info, err := s.PaneInfo(ctx, pane)
	if err != nil {
		return err
	}
	path, err := exec.LookPath("tmux")
	if err != nil {
		return ErrNotInstalled
	}
	args := append(s.Args(), "attach-session", "-t", string(info.Session), ";",
		"select-window", "-t", string(info.Window), ";", "select-pane", "-t", string(pane))
	cmd := exec.Command(path, args...)
	var stderr bytes.Buffer
	cmd.Env, cmd.Stdin, cmd.Stdout, cmd.Stderr = env, os.Stdin, os.Stdout, &stderr
	if err := cmd.Run(); err != nil {
		return &Error{Args: []string{"attach-session"}, Stderr: stderr.String(), Err: err}
	}
	return nil
}

// JoinHere moves pane into the window of herePane, split beside it.
func (s Server) JoinHere(ctx context.Context, pane, herePane PaneID) error {
	_, err := s.run(ctx, "join-pane", "-s", string(pane), "-t", string(herePane))
	return err
}

// CaptureAndPipe returns the pane's scrollback and screen as plain text and
// attaches a pipe-pane to argv in the same tmux command list: the server
// runs both before it reads the pane again, so no output falls between the
// scrollback and the pipe, and none is in both.
func (s Server) CaptureAndPipe(ctx context.Context, pane PaneID, argv []string) (string, error) {
	return s.run(ctx, "capture-pane", "-p", "-J", "-S", "-", "-E", "-", "-t", string(pane), ";",
		"pipe-pane", "-t", string(pane), "--", ShellCommand(argv))
}

// ReplaceWithShell puts a fresh shell (the server's default command) in
// pane's exact place — same window, size and layout cell, started in dir —
// and moves pane itself into a new window of the named session. If pane
// was its window's active pane, the fresh shell becomes the active one.
func (s Server) ReplaceWithShell(ctx context.Context, info PaneInfo, session, dir, windowName string) (PaneID, error) {
	fresh, _, err := s.StartWindow(ctx, WindowSpec{Session: session, Name: windowName, Dir: dir})
	if err != nil {
		return "", err
	}
	args := []string{"swap-pane", "-s", string(fresh), "-t", string(info.Pane)}
	if !info.Active {
		args = append(args, "-d")
	}
	if _, err := s.run(ctx, args...); err != nil {
		s.KillPane(ctx, fresh)
		return "", err
	}
	return fresh, nil
}
