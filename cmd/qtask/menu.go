package main

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/qtask/qtask/tasks"
	"github.com/qtask/qtask/tmux"
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

// menuMaxTasks bounds the list: tmux draws nothing for a menu taller than
// the client.
const menuMaxTasks = 20

func runMenu(ctx context.Context, deps *Deps, opts *menuOptions) error {
	server := deps.Server()
	say := func(text string) error { return server.Message(ctx, opts.Client, "qtask: "+text) }
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
		return server.DisplayMenu(ctx, opts.Client, fmt.Sprintf(" qtask: %d tasks ", len(list)), taskMenu(deps.Self, opts.Client, menuOrder(list)))
	case opts.Action == "":
		t, err := store.Get(opts.Task)
		if err != nil {
			return say(err.Error())
		}
		title := " " + displayCommand(menuRow(t, time.Now()), menuWidth) + " "
		return server.DisplayMenu(ctx, opts.Client, title, actionMenu(deps.Self, opts.Client, t))
	case opts.Action == "view":
		_, t, err := deps.ViewTask(ctx, opts.Task)
		if err == nil && !t.Running() {
			err = &tasks.NotRunningError{Task: t}
		}
		if err == nil {
			err = server.SwitchClientTo(ctx, opts.Client, tmux.PaneID(t.PaneID))
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
// status, runtime and name or command.
func menuRow(t *tasks.Task, now time.Time) string {
	return fmt.Sprintf("%-8s  %-12s  %8s  %s", t.ID, shortStatus(t), formatRuntime(t.Runtime(now)), t.Label())
}

// menuWidth bounds a line of tmux's menu, which draws nothing if the menu
// is wider than the client.
const menuWidth = 72

// taskMenu lists the tasks, each opening its actions; keys 1-9 pick the
// first nine.
func taskMenu(self, client string, list []*tasks.Task) []tmux.MenuItem {
	if len(list) == 0 {
		return []tmux.MenuItem{{Name: "-No tasks"}}
	}
	var items []tmux.MenuItem
	now := time.Now()
	for i, t := range list {
		if i == menuMaxTasks {
			items = append(items, tmux.MenuItem{Name: fmt.Sprintf("-… %d more: qtask ls", len(list)-i)})
			break
		}
		key := ""
		if i < 9 {
			key = fmt.Sprint(i + 1)
		}
		items = append(items, tmux.MenuItem{Name: displayCommand(menuRow(t, now), menuWidth), Key: key, Command: menuRun(self, client, "--task", t.ID)})
	}
	return items
}

// actionMenu is one task's actions. Reading or following the log opens a
// window of its own (there is no popup to show it in).
func actionMenu(self, client string, t *tasks.Task) []tmux.MenuItem {
	window := func(name, script string) []string {
		return []string{"new-window", "-n", name + " " + t.ID, tmux.ShellCommand([]string{"sh", "-c", script, self, t.ID})}
	}
	return []tmux.MenuItem{
		{Name: "View its pane", Key: "v", Command: menuRun(self, client, "--task", t.ID, "--action", "view")},
		{Name: "Read the log", Key: "l", Command: window("log", `"$0" logs "$1" | ${PAGER:-less}`)},
		{Name: "Follow the log", Key: "f", Command: window("follow", `"$0" logs -f "$1"; printf '[qtask: the task ended; Enter closes]'; read x`)},
		{Name: "Stop", Key: "s", Command: menuRun(self, client, "--task", t.ID, "--action", "stop")},
		{Name: "Remove", Key: "x", Command: menuRun(self, client, "--task", t.ID, "--action", "rm")},
	}
}

// menuRun is a menu item running `qtask _menu` again for client.
func menuRun(self, client string, args ...string) []string {
	return []string{"run-shell", "-b", tmux.ShellCommand(append([]string{self, "_menu", "--tmux-client", client}, args...))}
}
