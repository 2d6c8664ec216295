package main

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/qtask/qtask/cmd/internal/launch"
	"github.com/qtask/qtask/tasks"
	"github.com/qtask/qtask/tmux/plugin"
	"github.com/qtask/qtask/tmux/plugin/menuui"
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
	store, err := deps.Store()
	if err != nil {
		return say(err.Error())
	}
	switch {
	case opts.Task == "":
		list, _, err := store.List(ctx, tasks.Filter{})
		if err != nil {
			return say(err.Error())
		}
		return plugin.ShowTaskMenu(ctx, server, deps.Self, opts.Client, fmt.Sprintf(" qtask: %d tasks ", len(list)), displayMenuRows(menuOrder(list)))
	case opts.Action == "":
		t, err := store.Get(ctx, opts.Task)
		if err != nil {
			return say(err.Error())
		}
		title := " " + displayCommand(menuRow(t, time.Now()).Line(0), menuWidth) + " "
		return plugin.ShowActionMenu(ctx, server, deps.Self, opts.Client, title, t.ID)
	case opts.Action == "view":
		// As the popup's attach: a pane of another server is not this
		// server's pane of the same id.
		store, t, err := deps.ViewTask(ctx, opts.Task)
		var show *tasks.Showing
		if err == nil {
			show, err = store.Show(t, tasks.ShowOptions{InTmux: &server, Client: opts.Client})
		}
		if err == nil {
			err = show.Do(ctx)
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

// menuRow is task t as the menus list it, its text made safe for a
// terminal. The label is bounded: no screen is wider.
func menuRow(t *tasks.Task, now time.Time) menuui.Row {
	return menuui.Row{
		ID:      displayValue(t.ID),
		Status:  displayValue(shortStatus(t)),
		Runtime: formatRuntime(t.Runtime(now)),
		Label:   displayCommand(t.Label(), 1000),
		Running: t.Running(),
	}
}

// menuRows lists tasks as the menus show them.
func menuRows(list []*tasks.Task, now time.Time) []menuui.Row {
	rows := make([]menuui.Row, len(list))
	for i, t := range list {
		rows[i] = menuRow(t, now)
	}
	return rows
}

// menuWidth bounds a line of tmux's menu, which draws nothing if the menu
// is wider than the client.
const menuWidth = 72

// displayMenuRows is how the tasks show in tmux's menu.
func displayMenuRows(list []*tasks.Task) []plugin.MenuRow {
	rows := menuRows(list, time.Now())
	width := menuui.StatusWidth(rows, menuui.MaxStatusWidth)
	shown := make([]plugin.MenuRow, len(rows))
	for i, r := range rows {
		shown[i] = plugin.MenuRow{ID: list[i].ID, Label: displayCommand(r.Line(width), menuWidth)}
	}
	return shown
}
