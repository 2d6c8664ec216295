package tmux

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"
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
	Env       []string // NAME=value set for the pane's program (new-window -e)
	// Meanwhile, if set, is work of the caller's that needs nothing from
	// the window: StartWindow calls it exactly once before it returns,
	// while the server opens the window when it can (after sending the
	// command, before reading the answer), so a start overlaps its own
	// file work with tmux's without a second thread.
	Meanwhile func()
}

// StartWindow opens a detached window running spec.Argv in spec.Session and
// returns its pane id and the pid of the pane's first process (spec.Argv
// itself: tmux execs it directly), so the caller can tell at once whether
// what it started is alive. The common case is a single tmux call; when the session
// (or the whole server) does not exist yet it is created with this window as
// its first, so no placeholder shell is left behind. Concurrent starters that
// race to create the session retry into the winner's session.
func (s Server) StartWindow(ctx context.Context, spec WindowSpec) (PaneID, int, error) {
	meanwhile := sync.OnceFunc(func() {
		if spec.Meanwhile != nil {
			spec.Meanwhile()
		}
	})
	defer meanwhile()
	open := func(verb, targetFlag, target string) (PaneID, int, error) {
		args := []string{verb, targetFlag, literalArg(target), "-d", "-P", "-F", "#{pane_id}" + fieldSep + "#{pane_pid}", "-n", formatArg(spec.Name)}
		if spec.Dir != "" {
			args = append(args, "-c", formatArg(spec.Dir))
		}
		for _, kv := range spec.Env {
			args = append(args, "-e", literalArg(kv))
		}
		if len(spec.Argv) > 0 {
			args = append(args, "--")
			for _, a := range spec.Argv {
				args = append(args, literalArg(a))
			}
		}
		out, err := s.runMeanwhile(ctx, meanwhile, args...)
		if err != nil {
			return "", 0, err
		}
		id, pid, _ := strings.Cut(out, fieldSep)
		pane, err := ParsePaneID(id)
		if err != nil {
			return "", 0, err
		}
		n, err := strconv.Atoi(pid)
		if err != nil || n <= 0 {
			return "", 0, fmt.Errorf("tmux: unexpected pane pid %q for new pane %s", pid, pane)
		}
		return pane, n, nil
	}
	if spec.SessionID != "" {
		return open("new-window", "-t", string(spec.SessionID)+":")
	}
	var lastErr error
	for attempt := range 8 {
		time.Sleep(time.Duration(attempt) * 10 * time.Millisecond)
		// "=name:" is the session matched exactly, next free window index.
		pane, pid, err := open("new-window", "-t", "="+spec.Session+":")
		if err == nil || !errors.Is(err, ErrNotFound) && !errors.Is(err, ErrNoServer) {
			return pane, pid, err
		}
		pane, pid, err = open("new-session", "-s", spec.Session)
		if err == nil {
			s.keepClientsOnDestroy(ctx, spec.Session)
		}
		if err == nil || !errors.Is(err, ErrDuplicateSession) && !errors.Is(err, ErrNoServer) {
			return pane, pid, err
		}
		lastErr = err
	}
	return "", 0, fmt.Errorf("could not create or find session %q: %w", spec.Session, lastErr)
}

// keepClientsOnDestroy sets detach-on-destroy off on qtask's own session
// (this session only), just created: a person who switched to a task's
// pane (qtask attach, the menu) is in this session, and when its last task
// ends and tmux destroys it, tmux's default would detach their client and
// drop them out of tmux; off moves the client to the most recently used
// session left (tmux 3.3 has no "previous"). Best effort: the session
// works without it.
func (s Server) keepClientsOnDestroy(ctx context.Context, session string) {
	s.run(ctx, "set-option", "-t", "="+session+":", "detach-on-destroy", "off")
}

// PipeToCommand sends everything pane prints from now on to a shell
// command (tmux runs it as `/bin/sh -c command`, the pipe on its stdin).
// The pipe is attached before this returns, so output written after it is
// not lost. Plain pipe-pane (no -o) replaces any existing pipe: -o would
// toggle it off. command is shell text qtask wrote, not user text; its '#'
// is doubled all the same, so tmux never expands a format in it. In the
// same call the pane's window gets remain-on-exit off, so the window closes
// when its task ends even on a server where the user turned it on globally
// (the option is set on this window only).
func (s Server) PipeToCommand(ctx context.Context, pane PaneID, command string) error {
	_, err := s.run(ctx, "pipe-pane", "-t", string(pane), "--", pipeCommandArg(command), ";",
		"set-option", "-w", "-t", string(pane), "remain-on-exit", "off")
	return err
}

// pipeCommandArg is command as pipe-pane's argument: '#' doubled against
// format expansion, a final ';' kept from ending tmux's command.
func pipeCommandArg(command string) string {
	return literalArg(strings.ReplaceAll(command, "#", "##"))
}

// KillPane closes a pane and, with it, the processes on its terminal.
func (s Server) KillPane(ctx context.Context, pane PaneID) error {
	_, err := s.run(ctx, "kill-pane", "-t", string(pane))
	return err
}

// KeepDeadPane makes pane stay open, dead, once its program exits, with
// its screen, colours and scrollback, and no line of tmux's own (the
// program prints what the pane should say: tmux 3.3a draws
// remain-on-exit-format only once the pane's pty has closed, its program
// been reaped and its pipe drained, which a pty closed first can skip). It
// closes itself after someone has looked: once it has had a client's focus
// and loses it (the client leaves it, switches away or detaches), tmux
// kills it. A pane nobody is looking at never has the focus, so it stays
// until then. Pane options override the window's remain-on-exit off that
// PipeToCommand set. The pane's pipe is closed: the capture is done.
func (s Server) KeepDeadPane(ctx context.Context, pane PaneID) error {
	t := string(pane)
	_, err := s.run(ctx, "set-option", "-p", "-t", t, "remain-on-exit", "on", ";",
		"set-option", "-p", "-t", t, "remain-on-exit-format", "", ";",
		// tmux 3.3a fires pane-focus-out with focus-events off too: a
		// client counts as focused until its terminal says otherwise.
		"set-hook", "-p", "-t", t, "pane-focus-out", commandLine([]string{"kill-pane", "-t", t}), ";",
		"pipe-pane", "-t", t)
	return err
}

// ReleaseDeadPane undoes KeepDeadPane before the pane's program exits:
// the pane closes with it, as the window's remain-on-exit says.
func (s Server) ReleaseDeadPane(ctx context.Context, pane PaneID) error {
	t := string(pane)
	_, err := s.run(ctx, "set-option", "-p", "-u", "-t", t, "remain-on-exit", ";",
		"set-hook", "-p", "-u", "-t", t, "pane-focus-out")
	return err
}

// KillTaskPane closes pane if its program was pid (the pane's first
// process, dead or alive): pane ids start again at %0 on a new server, so
// a pane of another program is never closed for it. A pane or server that
// is gone is no error.
func (s Server) KillTaskPane(ctx context.Context, pane PaneID, pid int) error {
	info, err := s.PaneInfo(ctx, pane)
	if errors.Is(err, ErrNotFound) || errors.Is(err, ErrNoServer) {
		return nil
	}
	if err != nil || info.PID != pid {
		return err
	}
	err = s.KillPane(ctx, pane)
	if errors.Is(err, ErrNotFound) {
		return nil
	}
	return err
}

// display expands format for target. tmux 3.3a's display-message exits 0
// with an empty line when the target does not exist, so an empty answer is
// turned into the not-found error tmux did not give.
func (s Server) display(ctx context.Context, target, format string) (string, error) {
	args := []string{"display-message", "-p", "-t", literalArg(target), format}
	out, err := s.run(ctx, args...)
	if err == nil && out == "" {
		return "", &Error{Args: args, Stderr: "can't find " + target}
	}
	return out, err
}

// literalArg protects an argument from tmux's own command parsing: an
// argument ending in ";" would end the command there (tmux takes "\;" as a
// literal semicolon).
func literalArg(s string) string {
	if strings.HasSuffix(s, ";") {
		return s[:len(s)-1] + `\;`
	}
	return s
}

// formatArg is literalArg for the arguments tmux also expands as formats
// (new-window/new-session -n, -c, -s): "#{…}" and "#(…)" in a directory or
// task name must stay text, never run a command, so '#' is doubled.
func formatArg(s string) string {
	return literalArg(strings.ReplaceAll(s, "#", "##"))
}

// WindowLabel is the start of text's first line, at most max characters,
// made into a window name nothing reading a window list misreads: control
// characters become spaces, and ':' becomes '_' (gotmux splits list output
// on "-:-").
func WindowLabel(text string, max int) string {
	line, _, _ := strings.Cut(strings.TrimSpace(text), "\n")
	var b strings.Builder
	n := 0
	for _, r := range line {
		if n == max {
			b.WriteString("…")
			break
		}
		switch {
		case unicode.IsControl(r) || r == utf8.RuneError:
			r = ' '
		case r == ':':
			r = '_'
		}
		b.WriteRune(r)
		n++
	}
	return strings.TrimSpace(b.String())
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

// CommandArg quotes s as one argument of a tmux command string (what
// run-shell -C, if-shell and a config file parse): in double quotes, with
// the characters tmux interprets there escaped (", \ and $, which names an
// environment variable). Formats in s are left for the command to expand.
func CommandArg(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, `$`, `\$`)
	return `"` + r.Replace(s) + `"`
}

func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
