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
	if err == nil {
		s.keepClientsOnDestroy(ctx, session)
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

// SwitchClientTo makes client show pane: its session, window and the pane
// itself. "" is the current client, which tmux takes from the caller's
// pane; where tmux runs the caller with no pane (a menu's run-shell, a
// popup) it is a guess, the client used last, so those name theirs.
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

// PaneSnapshot is what a pane shows at one moment: the lines that have
// scrolled into its history (wrapped lines joined), its screen row by row,
// the cursor, and whether a full-screen program has the alternate screen.
type PaneSnapshot struct {
	History          []string
	Screen           []string
	CursorX, CursorY int
	Alternate        bool
}

// snapshotFormat is the first line of CaptureAndPipe's answer.
const snapshotFormat = "#{cursor_x}|#{cursor_y}|#{history_size}|#{pane_height}|#{alternate_on}"

// CaptureAndPipe returns what the pane shows and attaches a pipe-pane to
// argv in the same tmux command list: the server runs them all before it
// reads the pane again, so no output falls between the snapshot and the
// pipe, and none is in both.
func (s Server) CaptureAndPipe(ctx context.Context, pane PaneID, argv []string) (PaneSnapshot, error) {
	t := string(pane)
	out, err := s.run(ctx, "display-message", "-p", "-t", t, snapshotFormat, ";",
		"capture-pane", "-p", "-S", "0", "-E", "-", "-t", t, ";",
		"capture-pane", "-p", "-J", "-S", "-", "-E", "-1", "-t", t, ";",
		"pipe-pane", "-t", t, "--", ShellCommand(argv))
	if err != nil {
		return PaneSnapshot{}, err
	}
	return parseSnapshot(out)
}

// parseSnapshot reads CaptureAndPipe's answer: the snapshotFormat line,
// the screen's rows, then the history (tmux prints a screen row for an
// empty history's range, so it is read only when there is one).
func parseSnapshot(out string) (PaneSnapshot, error) {
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	var f [5]int
	fields := strings.Split(lines[0], "|")
	if len(fields) != len(f) {
		return PaneSnapshot{}, fmt.Errorf("unexpected pane snapshot %q", lines[0])
	}
	for i, field := range fields {
		n, err := strconv.Atoi(field)
		if err != nil || n < 0 {
			return PaneSnapshot{}, fmt.Errorf("unexpected pane snapshot %q", lines[0])
		}
		f[i] = n
	}
	history, height := f[2], f[3]
	if len(lines) < 1+height {
		return PaneSnapshot{}, fmt.Errorf("pane snapshot has %d screen rows, want %d", len(lines)-1, height)
	}
	snap := PaneSnapshot{Screen: lines[1 : 1+height], CursorX: f[0], CursorY: f[1], Alternate: f[4] == 1}
	if history > 0 {
		snap.History = lines[1+height:]
	}
	return snap, nil
}

// ShellSpec is the shell ReplaceWithShell starts: Argv run as is (two
// words or more: tmux hands a lone word to default-shell -c), none for
// the server's default command; in Dir.
type ShellSpec struct {
	Argv []string
	Dir  string
}

// ReplaceWithShell puts a fresh shell in pane's exact place — same window,
// size and layout cell — and moves pane itself into a new window of the
// named session. If pane was its window's active pane, the fresh shell
// becomes the active one.
func (s Server) ReplaceWithShell(ctx context.Context, info PaneInfo, session, windowName string, shell ShellSpec) (PaneID, error) {
	fresh, _, err := s.StartWindow(ctx, WindowSpec{Session: session, Name: windowName, Dir: shell.Dir, Argv: shell.Argv})
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
