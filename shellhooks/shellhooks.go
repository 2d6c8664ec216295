// Package shellhooks lets qtask promote commands a human typed in an
// interactive bash, zsh or fish pane. It owns the hook snippets that `qtask
// init` prints and the small per-pane files they write: which command runs
// in the pane's foreground, since when, under which shell.
//
// The hooks run at every prompt, so they do as little as possible: one
// write with shell builtins, no process started, nothing printed, and any
// failure (no state dir, read-only disk, no qtask) is silent.
package shellhooks

import (
	"bytes"
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"text/template"
	"time"

	"github.com/qtask/qtask/tasks"
	"github.com/qtask/qtask/tmux"
)

//go:embed snippets
var snippets embed.FS

// Shells are the shells qtask has hooks for.
var Shells = []string{"bash", "zsh", "fish"}

// loadLines say where each shell loads qtask's hooks.
var loadLines = map[string]string{
	"bash": `eval "$(qtask init bash)" in ~/.bashrc`,
	"zsh":  `eval "$(qtask init zsh)" in ~/.zshrc`,
	"fish": "qtask init fish | source in ~/.config/fish/config.fish",
}

// HowToLoad says how shell loads qtask's hooks, for a fix to print:
// `eval "$(qtask init bash)" in ~/.bashrc`; "" for a shell without hooks.
func HowToLoad(shell string) string { return loadLines[shell] }

// UnhookedError is a promote of a pane whose shell runs a command but has
// not loaded the hooks: qtask cannot see what was typed there. It says how
// to load them, and is a *tasks.NothingRunningError for errors.As.
type UnhookedError struct {
	tasks.NothingRunningError
	Shell string
}

func (e *UnhookedError) Error() string {
	return fmt.Sprintf("cannot promote what runs in pane %s: its %s has no qtask hooks; add %s", e.Pane, e.Shell, HowToLoad(e.Shell))
}

func (e *UnhookedError) Unwrap() error { return &e.NothingRunningError }

// Dir is where the hooks keep their per-pane files inside the state dir.
func Dir(stateDir string) string { return filepath.Join(stateDir, "panes") }

// Snippet is the hook code for shell, bound to the qtask binary at bin and
// the state directory stateDir (both quoted for that shell).
func Snippet(shell, bin, stateDir string) (string, error) {
	var file string
	quote := posixQuote
	switch shell {
	case "bash":
		file = "snippets/bash.sh"
	case "zsh":
		file = "snippets/zsh.zsh"
	case "fish":
		file, quote = "snippets/fish.fish", fishQuote
	default:
		return "", fmt.Errorf("no hooks for shell %q: choose one of %s", shell, strings.Join(Shells, ", "))
	}
	text, err := snippets.ReadFile(file)
	if err != nil {
		return "", err
	}
	tmpl, err := template.New(shell).Parse(string(text))
	if err != nil {
		return "", err
	}
	var b bytes.Buffer
	err = tmpl.Execute(&b, struct{ Bin, State string }{quote(bin), quote(stateDir)})
	return b.String(), err
}

// posixQuote single-quotes s for bash and zsh.
func posixQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// fishQuote single-quotes s for fish, where \ and ' are escaped inside.
func fishQuote(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s) + "'"
}

// Prepare creates the pane directory (0700) so the hooks' writes succeed.
func Prepare(stateDir string) error {
	if err := os.MkdirAll(Dir(stateDir), 0o700); err != nil {
		return fmt.Errorf("create %s: %w", Dir(stateDir), err)
	}
	return nil
}

// Foreground is what the hooks recorded about the command running in a pane.
type Foreground struct {
	ShellPID  int
	Command   string
	StartedAt time.Time // when the hook wrote the file: the command's start
}

// paneFile is the hooks' file for pane ("%12" → "panes/12").
func paneFile(dir string, pane tmux.PaneID) string {
	return filepath.Join(dir, strings.TrimPrefix(string(pane), "%"))
}

// Hooked reports whether the shell in pane has loaded the hooks: they
// write the pane's file at every prompt.
func Hooked(stateDir string, pane tmux.PaneID) bool {
	_, err := os.Stat(paneFile(Dir(stateDir), pane))
	return err == nil
}

// Read returns what runs in the pane per its hooks, or ok=false when the
// pane is at its prompt or has no hooks.
func Read(dir string, pane tmux.PaneID) (fg Foreground, ok bool, err error) {
	path := paneFile(dir, pane)
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return Foreground{}, false, nil
	}
	if err != nil {
		return Foreground{}, false, fmt.Errorf("read shell hook state: %w", err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		return Foreground{}, false, fmt.Errorf("read shell hook state: %w", err)
	}
	fg, ok = parse(string(data))
	fg.StartedAt = fi.ModTime()
	return fg, ok, nil
}

// parse reads "PID h|c\n" followed by the command: a history line ("  42  make")
// from bash's history, or the command line itself.
func parse(data string) (Foreground, bool) {
	head, rest, found := strings.Cut(data, "\n")
	if !found {
		return Foreground{}, false
	}
	pidText, kind, _ := strings.Cut(head, " ")
	pid, err := strconv.Atoi(pidText)
	if err != nil || pid <= 0 {
		return Foreground{}, false
	}
	cmd := strings.TrimSuffix(rest, "\n")
	if kind == "h" {
		cmd = stripHistoryNumber(cmd)
	}
	if strings.TrimSpace(cmd) == "" {
		return Foreground{}, false
	}
	return Foreground{ShellPID: pid, Command: cmd}, true
}

// stripHistoryNumber removes the prefix bash's `history 1` puts before the
// command: the entry number, then '*' (entry edited) or ' ', then ' '.
func stripHistoryNumber(line string) string {
	s := strings.TrimLeft(line, " ")
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	rest := s[i:]
	switch {
	case i == 0:
		return line
	case rest == "":
		return ""
	case rest[0] != '*' && rest[0] != ' ':
		return line
	}
	return strings.TrimPrefix(rest[1:], " ")
}

// promotedFile marks a pane whose command was adopted; it holds the task
// id for the prompt hook that follows the command's end.
func promotedFile(dir string, pane tmux.PaneID) string { return paneFile(dir, pane) + ".promoted" }

// MarkPromoted records that pane's running command is task id.
func MarkPromoted(dir string, pane tmux.PaneID, id string) error {
	f, err := os.OpenFile(promotedFile(dir, pane), os.O_CREATE|os.O_TRUNC|os.O_WRONLY|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return fmt.Errorf("mark pane %s promoted: %w", pane, err)
	}
	_, err = f.WriteString(id + "\n")
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// TakePromoted returns and clears the task id marked for pane.
func TakePromoted(dir string, pane tmux.PaneID) (string, error) {
	path := promotedFile(dir, pane)
	data, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("pane %s has no promoted command: %w", pane, err)
	}
	os.Remove(path)
	return strings.TrimSpace(string(data)), nil
}

// Forget removes the hook files a pruned task leaves in dir: the claim on
// its pane, if it still names the task (the pane was killed before its
// prompt hook ran), and the pane's own file, if the shell that wrote it is
// gone. A live shell's file is left alone: pane ids come back after a tmux
// server restarts.
func Forget(dir string, t *tasks.Task) {
	pane, err := tmux.ParsePaneID(t.PaneID)
	if err != nil {
		return // not a pane id: never a path to remove
	}
	if data, err := os.ReadFile(promotedFile(dir, pane)); err == nil && strings.TrimSpace(string(data)) == t.ID {
		os.Remove(promotedFile(dir, pane))
	}
	data, err := os.ReadFile(paneFile(dir, pane))
	if err != nil {
		return
	}
	if fg, ok := parse(string(data)); ok && errors.Is(syscall.Kill(fg.ShellPID, 0), syscall.ESRCH) {
		os.Remove(paneFile(dir, pane))
	}
}

// PromoteOptions says which pane to promote and where it goes.
type PromoteOptions struct {
	StateDir       string
	Server         tmux.Server
	Pane           tmux.PaneID
	Scope          string
	Session        string
	Self           string
	OutputMaxBytes int64
	KeepFullScreen bool
	StatusFormat   string
}

// PromotePane promotes what runs in a pane: a qtask task, else a command a
// human typed in a shell with these hooks; else it reports the task that
// just ended there (a promote racing the end), or *tasks.NothingRunningError.
func PromotePane(ctx context.Context, store *tasks.Store, opts PromoteOptions) (*tasks.PromoteResult, error) {
	res, err := store.PromotePane(ctx, opts.Server, opts.Pane, opts.Session)
	var nothing *tasks.NothingRunningError
	if !errors.As(err, &nothing) {
		return res, err
	}
	t, err := adopt(ctx, store, opts)
	if errors.As(err, new(*tasks.NothingRunningError)) && nothing.Ended != nil {
		return &tasks.PromoteResult{Task: nothing.Ended, AlreadyFinished: true}, nil
	}
	if t == nil {
		return nil, err
	}
	return &tasks.PromoteResult{Task: t, AlreadyFinished: !t.Running()}, err
}

// adopt makes the command the hooks say runs in the pane a background
// task. A pane at its prompt, or without hooks, is
// *tasks.NothingRunningError.
func adopt(ctx context.Context, store *tasks.Store, opts PromoteOptions) (*tasks.Task, error) {
	dir := Dir(opts.StateDir)
	fg, ok, err := Read(dir, opts.Pane)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, nothingSeen(ctx, opts)
	}
	running := func() bool {
		now, ok, err := Read(dir, opts.Pane)
		return err == nil && ok && now.ShellPID == fg.ShellPID && now.StartedAt.Equal(fg.StartedAt)
	}
	t, err := store.Adopt(ctx, tasks.AdoptOptions{
		Server: opts.Server, Pane: opts.Pane, ShellPID: fg.ShellPID, Command: fg.Command,
		StartedAt: fg.StartedAt, Scope: opts.Scope, Session: opts.Session, Self: opts.Self,
		OutputMaxBytes: opts.OutputMaxBytes, KeepFullScreen: opts.KeepFullScreen, StatusFormat: opts.StatusFormat,
		OutputStart: func(lines []string) int { return OutputStart(lines, fg.Command) },
		Claim:       func(id string) error { return MarkPromoted(dir, opts.Pane, id) },
		Running:     running,
	})
	if t == nil {
		os.Remove(promotedFile(dir, opts.Pane))
		return nil, err
	}
	if !running() {
		// Ended during the promote. If its prompt hook ran before the pane
		// was claimed, the claim is still there and nobody else will settle it.
		if _, serr := os.Stat(promotedFile(dir, opts.Pane)); serr == nil {
			os.Remove(promotedFile(dir, opts.Pane))
			if serr := store.SettleUnseen(ctx, t.ID); err == nil {
				err = serr
			}
		}
		t, _ = store.Get(ctx, t.ID)
	}
	return t, err
}

// nothingSeen is the error for a pane where the hooks say nothing runs:
// *tasks.NothingRunningError, or *UnhookedError when the pane's shell has
// no hooks and a command runs in its foreground (tmux names that command;
// a shell at its prompt is its own foreground command).
func nothingSeen(ctx context.Context, opts PromoteOptions) error {
	nothing := tasks.NothingRunningError{Pane: opts.Pane}
	if Hooked(opts.StateDir, opts.Pane) {
		return &nothing
	}
	info, err := opts.Server.PaneInfo(ctx, opts.Pane)
	if err != nil {
		return &nothing
	}
	comm, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", info.PID))
	shell := strings.TrimSpace(string(comm))
	if err != nil || HowToLoad(shell) == "" {
		return &nothing // not a shell qtask has hooks for
	}
	if commands, err := opts.Server.PaneCommands(ctx); err != nil || commands[opts.Pane] == shell {
		return &nothing // at its prompt, or unknown
	}
	return &UnhookedError{NothingRunningError: nothing, Shell: shell}
}

// Done is the prompt hook's report that an adopted command ended with
// status: the task settles and, unless keepPane, its pane closes.
func Done(ctx context.Context, store *tasks.Store, stateDir string, pane tmux.PaneID, status int, tty *os.File, keepPane bool) error {
	id, err := TakePromoted(Dir(stateDir), pane)
	if err != nil {
		return err
	}
	return store.FinishAdopted(ctx, id, status, tty, keepPane)
}
