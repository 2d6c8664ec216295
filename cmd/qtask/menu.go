package main

import (
	"context"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/qtask/qtask/cmd/internal/launch"
	"github.com/qtask/qtask/tasks"
	"github.com/qtask/qtask/tmux/plugin"
)

// menuOptions are the flags of the hidden `qtask _menu`.
type menuOptions struct {
	Client string // the tmux client that pressed the key
	Task   string // with it: that task's actions
	Action string // with Task: do it (view, stop, rm) and say how it went
}

// newCmdMenu builds the hidden `qtask _menu`, the task menu in tmux's own
// display-menu, for a tmux without popups (before 3.2) or a user who
// prefers it (@qtask-menu-style menu). It runs from run-shell: it shows a
// menu and returns, and each item runs it again, with --task for one task's
// actions and --action to act. Results go to display-message.
func newCmdMenu(deps *Deps) *cobra.Command {
	opts := &menuOptions{}
	cmd := &cobra.Command{
		Use:    "_menu --tmux-client NAME [--task ID [--action view|stop|rm]]",
		Hidden: true,
		Args:   exactArgs(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runMenu(cmd.Context(), deps, opts)
		},
	}
	cmd.Flags().StringVar(&opts.Client, "tmux-client", "", "the client to show the menu on")
	cmd.Flags().StringVar(&opts.Task, "task", "", "show this task's actions")
	cmd.Flags().StringVar(&opts.Action, "action", "", "act on the task: view, stop or rm")
	cmd.MarkFlagRequired("tmux-client")
	return cmd
}

func runMenu(ctx context.Context, deps *Deps, opts *menuOptions) error {
	server := launch.Server(deps.Env)
	say := func(text string) error { return plugin.Say(ctx, server, opts.Client, "qtask: "+text) }
	store, err := deps.Store(ctx)
	if err != nil {
		return say(err.Error())
	}
	switch {
	case opts.Task == "":
		list, _, err := store.List(tasks.Filter{})
		if err != nil {
			return say(err.Error())
		}
		return plugin.ShowTaskMenu(ctx, server, deps.Self, opts.Client, fmt.Sprintf(" qtask: %d tasks ", len(list)), menuRows(menuOrder(list)))
	case opts.Action == "":
		t, err := store.Get(opts.Task)
		if err != nil {
			return say(err.Error())
		}
		title := " " + displayCommand(menuRow(t, time.Now(), 0), menuWidth) + " "
		return plugin.ShowActionMenu(ctx, server, deps.Self, opts.Client, title, t.ID)
	case opts.Action == "view":
		_, t, err := deps.ViewTask(ctx, opts.Task)
		if err == nil && !t.Running() && !t.PaneKept {
			err = &tasks.NotRunningError{Task: t}
		}
		if err == nil {
			err = plugin.ShowPane(ctx, server, opts.Client, t.PaneID)
		}
		if err != nil {
			return say(err.Error())
		}
		return nil
	case opts.Action == "stop" || opts.Action == "rm":
		return say(quietly(ctx, deps.Self, opts.Action, opts.Task))
	}
	return usageErrorf("--action %q: want view, stop or rm", opts.Action)
}

// menuRow is how a task shows in the menus, tmux's and the ui's: id, short
// status padded to statusWidth (see menuStatusWidth), runtime and name or
// command.
func menuRow(t *tasks.Task, now time.Time, statusWidth int) string {
	return fmt.Sprintf("%-8s  %-*s  %8s  %s", t.ID, statusWidth, shortStatus(t), formatRuntime(t.Runtime(now)), t.Label())
}

// maxMenuStatusWidth bounds the status column of the menus: a monitor's
// status ("completed (max events reached, 1000 events)") would otherwise
// push every row's name out of tmux's 72-column menu. Wider statuses
// overflow their own row only.
const maxMenuStatusWidth = 20

// menuStatusWidth is the width of the menus' status column: the widest
// status in list, so that the runtimes and names line up whatever the mix
// ("running" beside "completed (exit 0)"), up to maxMenuStatusWidth.
func menuStatusWidth(list []*tasks.Task) int {
	width := 0
	for _, t := range list {
		width = max(width, utf8.RuneCountInString(shortStatus(t)))
	}
	return min(width, maxMenuStatusWidth)
}

// menuWidth bounds a line of tmux's menu, which draws nothing if the menu
// is wider than the client.
const menuWidth = 72

// menuRows is how the tasks show in tmux's menu.
func menuRows(list []*tasks.Task) []plugin.MenuRow {
	rows := make([]plugin.MenuRow, len(list))
	now, width := time.Now(), menuStatusWidth(list)
	for i, t := range list {
		rows[i] = plugin.MenuRow{ID: t.ID, Label: displayCommand(menuRow(t, now, width), menuWidth)}
	}
	return rows
}
