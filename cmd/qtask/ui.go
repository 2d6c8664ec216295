package main

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/qtask/qtask/tasks"
	"github.com/qtask/qtask/tmux/plugin/menuui"
)

// NewCmdUI builds `qtask ui`, the task menu the plugin opens in a popup
// (prefix T); it works in any terminal. The menu itself is menuui; this
// command gives it the task store.
func NewCmdUI(deps *Deps) *cobra.Command {
	var client string
	cmd := &cobra.Command{
		Use:   "ui",
		Short: "A full-screen task list: view, read the log, follow, stop or remove a task",
		Long: `A full-screen list of tasks, running first, then newest first, with status,
runtime and name. Keys: up/down (or k/j) move; Enter views the task's pane
(qtask attach); l reads its log in $PAGER (default less); f follows it
(Ctrl+C returns); s stops it; x removes it and its output (qtask rm; a
running task after y confirms, as qtask rm --force); q or Esc quits. The
tmux plugin opens it in a popup with prefix T.`,
		Args: exactArgs(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runUI(cmd.Context(), deps, client)
		},
	}
	cmd.Flags().StringVar(&client, "tmux-client", "", "the tmux client Enter switches to a task (the popup's: tmux gives a popup no way to tell)")
	return cmd
}

func runUI(ctx context.Context, deps *Deps, client string) error {
	store, err := deps.Store()
	if err != nil {
		return err
	}
	tty, ok := deps.IO.In.(*os.File)
	if !ok || !isTTY(tty) {
		return usageErrorf("ui needs a terminal; use qtask ls to list tasks")
	}
	return menuui.Run(ctx, tty, deps.IO.Out, deps.IO.ErrOut, &menuSource{deps: deps, store: store, client: client})
}

// splitKeys is how the ui reads its keys (menuui.SplitKeys), under the
// name its first tests know it by.
var splitKeys = menuui.SplitKeys

// menuSource is the task store as the menus see it: rows, and qtask's own
// commands (attach, logs, stop, rm) for the actions, so that the menus do
// what those commands do.
type menuSource struct {
	deps   *Deps
	store  *tasks.Store
	client string // the tmux client Enter switches; "" the current one
}

func (s *menuSource) Rows(ctx context.Context) ([]menuui.Row, error) {
	list, _, err := s.store.List(ctx, tasks.Filter{})
	if err != nil {
		return nil, shownError(err)
	}
	return menuRows(menuOrder(list), time.Now()), nil
}

func (s *menuSource) Row(ctx context.Context, id string) (menuui.Row, error) {
	t, err := s.store.Get(ctx, id)
	if err != nil {
		return menuui.Row{}, shownError(err)
	}
	return menuRow(t, time.Now()), nil
}

// Viewable reads the task afresh and asks tasks.Show, as attach would: a
// task of another tmux server than the ui's would nest a tmux client in
// this one.
func (s *menuSource) Viewable(ctx context.Context, id string) error {
	t, err := s.store.Get(ctx, id)
	if err == nil {
		opts := tasks.ShowOptions{Caller: s.deps.Caller(), InTmux: s.deps.tmuxServer(), Client: s.client}
		_, err = s.store.Show(t, opts)
	}
	return shownError(err)
}

func (s *menuSource) Stop(ctx context.Context, id string) string {
	return shownNote(quietly(ctx, s.deps.Self, "stop", id))
}

func (s *menuSource) Remove(ctx context.Context, id string, force bool) string {
	if force {
		return shownNote(quietly(ctx, s.deps.Self, "rm", "--force", id))
	}
	return shownNote(quietly(ctx, s.deps.Self, "rm", id))
}

// View is attach, on the ui's client when it was told which (the plugin's
// popup).
func (s *menuSource) View(id string) *exec.Cmd {
	if s.client != "" {
		return exec.Command(s.deps.Self, "attach", "--tmux-client", s.client, id)
	}
	return exec.Command(s.deps.Self, "attach", id)
}

func (s *menuSource) Log(id string) *exec.Cmd {
	return exec.Command("sh", "-c", `"$0" logs "$1" | ${PAGER:-less}`, s.deps.Self, id)
}

func (s *menuSource) Follow(id string) *exec.Cmd {
	return exec.Command(s.deps.Self, "logs", "-f", id)
}

// shownNote is what a command said, safe for the menu's note lines: the
// note is wrapped between words, so its line breaks are spaces.
func shownNote(said string) string {
	return displayValue(strings.Join(strings.Fields(said), " "))
}

// shownError is err with its text safe for the menu's note lines (nil
// stays nil).
func shownError(err error) error {
	if err == nil {
		return nil
	}
	return errors.New(shownNote(err.Error()))
}

// quietly runs a qtask command that needs no terminal (stop, rm) and
// returns what it said, its result or its one-line error, for the ui's
// bottom line or the menu's message.
func quietly(ctx context.Context, self string, args ...string) string {
	out, err := exec.CommandContext(ctx, self, args...).CombinedOutput()
	said := strings.TrimSpace(string(out))
	if err != nil && said == "" {
		said = err.Error()
	}
	return said
}

// menuOrder sorts tasks as the menus show them: running first, then newest
// first.
func menuOrder(list []*tasks.Task) []*tasks.Task {
	slices.SortStableFunc(list, func(a, b *tasks.Task) int {
		if a.Running() != b.Running() {
			if a.Running() {
				return -1
			}
			return 1
		}
		return b.StartedAt.Compare(a.StartedAt)
	})
	return list
}

func isTTY(f *os.File) bool { return term.IsTerminal(int(f.Fd())) }
