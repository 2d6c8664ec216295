package tmux

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// WindowSpec describes a window to start for a task.
type WindowSpec struct {
	// SessionID, when set, is an existing session to open the window in
	// (the caller's own, for foreground runs); it is never created.
	SessionID SessionID
	Session   string   // otherwise: session name; created on demand, targeted as "=name"
	Name      string   // window name shown in the status line
	Dir       string   // start directory of the pane
	Argv      []string // the pane's program, passed to tmux as argv (never a shell string)
}

// StartWindow opens a detached window running spec.Argv in spec.Session and
// returns its pane id. The common case is a single tmux call; when the session
// (or the whole server) does not exist yet it is created with this window as
// its first, so no placeholder shell is left behind. Concurrent starters that
// race to create the session retry into the winner's session.
func (s Server) StartWindow(ctx context.Context, spec WindowSpec) (PaneID, error) {
	if len(spec.Argv) == 0 {
		return "", errors.New("tmux: StartWindow needs a program to run")
	}
	common := []string{"-d", "-P", "-F", "#{pane_id}", "-n", spec.Name}
	if spec.Dir != "" {
		common = append(common, "-c", spec.Dir)
	}
	if spec.SessionID != "" {
		args := append(append([]string{"new-window", "-t", string(spec.SessionID) + ":"}, common...), "--")
		out, err := s.run(ctx, append(args, spec.Argv...)...)
		if err != nil {
			return "", err
		}
		return ParsePaneID(out)
	}
	var lastErr error
	for range 4 {
		// "=name:" is the session matched exactly, next free window index.
		args := append(append([]string{"new-window", "-t", "=" + spec.Session + ":"}, common...), "--")
		out, err := s.run(ctx, append(args, spec.Argv...)...)
		if err == nil {
			return ParsePaneID(out)
		}
		if !errors.Is(err, ErrNotFound) && !errors.Is(err, ErrNoServer) {
			return "", err
		}
		args = append(append([]string{"new-session", "-s", spec.Session}, common...), "--")
		out, err = s.run(ctx, append(args, spec.Argv...)...)
		if err == nil {
			return ParsePaneID(out)
		}
		if !errors.Is(err, ErrDuplicateSession) {
			return "", err
		}
		lastErr = err
	}
	return "", fmt.Errorf("could not create or find session %q: %w", spec.Session, lastErr)
}

// PipePane sends everything pane prints from now on to argv's stdin. The pipe
// is attached before this returns, so output written after it is not lost.
// Plain pipe-pane (no -o) replaces any existing pipe: -o would toggle it off.
func (s Server) PipePane(ctx context.Context, pane PaneID, argv []string) error {
	_, err := s.run(ctx, "pipe-pane", "-t", string(pane), "--", ShellCommand(argv))
	return err
}

// KillPane closes a pane and, with it, the processes on its terminal.
func (s Server) KillPane(ctx context.Context, pane PaneID) error {
	_, err := s.run(ctx, "kill-pane", "-t", string(pane))
	return err
}

// PaneExists reports whether the pane is still open on this server. A missing
// server means the pane is gone too.
func (s Server) PaneExists(ctx context.Context, pane PaneID) (bool, error) {
	_, err := s.run(ctx, "display-message", "-p", "-t", string(pane), "#{pane_id}")
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, ErrNotFound), errors.Is(err, ErrNoServer):
		return false, nil
	default:
		return false, err
	}
}

// ShellCommand renders argv as the one string tmux hands to /bin/sh -c (for
// pipe-pane and run-shell): every word single-quoted, and '#' doubled because
// tmux expands #{formats} in these commands before the shell sees them. The
// program is exec'd so no idle shell sits between tmux and it.
func ShellCommand(argv []string) string {
	var b strings.Builder
	b.WriteString("exec")
	for _, a := range argv {
		b.WriteByte(' ')
		b.WriteString(shellQuote(a))
	}
	return strings.ReplaceAll(b.String(), "#", "##")
}

func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
