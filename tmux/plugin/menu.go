package plugin

import (
	"context"
	"fmt"

	"github.com/qtask/qtask/tmux"
)

// MenuRow is a task as the tmux menu lists it: its id and the line shown.
type MenuRow struct {
	ID, Label string
}

// MenuMaxRows bounds the task menu: tmux draws nothing for a menu taller
// than the client.
const MenuMaxRows = 20

// The tmux menu (@qtask-menu-style menu) is qtask's task list in tmux's own
// display-menu, for a tmux without popups (before 3.2) or a user who
// prefers it. It is stateless: each item runs `bin _menu --tmux-client
// CLIENT …` again, for one task's actions (--task) or to act (--action).

// ShowTaskMenu shows rows on client, each opening its task's actions; keys
// 1-9 pick the first nine, and rows beyond MenuMaxRows are one line saying
// how many more there are.
func ShowTaskMenu(ctx context.Context, server tmux.Server, bin, client, title string, rows []MenuRow) error {
	items := []tmux.MenuItem{{Name: "-No tasks"}}
	if len(rows) > 0 {
		items = items[:0]
	}
	for i, r := range rows {
		if i == MenuMaxRows {
			items = append(items, tmux.MenuItem{Name: fmt.Sprintf("-… %d more: qtask ls", len(rows)-i)})
			break
		}
		key := ""
		if i < 9 {
			key = fmt.Sprint(i + 1)
		}
		items = append(items, tmux.MenuItem{Name: r.Label, Key: key, Command: menuRun(bin, client, "--task", r.ID)})
	}
	return server.DisplayMenu(ctx, client, title, items)
}

// ShowActionMenu shows task id's actions on client. Reading or following
// the log opens a window of its own (there is no popup to show it in).
func ShowActionMenu(ctx context.Context, server tmux.Server, bin, client, title, id string) error {
	window := func(name, script string) []string {
		return []string{"new-window", "-n", name + " " + id, tmux.ShellCommand([]string{"sh", "-c", script, bin, id})}
	}
	return server.DisplayMenu(ctx, client, title, []tmux.MenuItem{
		{Name: "View its pane", Key: "v", Command: menuRun(bin, client, "--task", id, "--action", "view")},
		{Name: "Read the log", Key: "l", Command: window("log", `"$0" logs "$1" | ${PAGER:-less}`)},
		{Name: "Follow the log", Key: "f", Command: window("follow", `"$0" logs -f "$1"; printf '[qtask: the task ended; Enter closes]'; read x`)},
		{Name: "Stop", Key: "s", Command: menuRun(bin, client, "--task", id, "--action", "stop")},
		{Name: "Remove", Key: "x", Command: menuRun(bin, client, "--task", id, "--action", "rm")},
	})
}

// menuRun is a menu item running `bin _menu` again for client.
func menuRun(bin, client string, args ...string) []string {
	return []string{"run-shell", "-b", tmux.ShellCommand(append([]string{bin, "_menu", "--tmux-client", client}, args...))}
}

// Say shows text on client's status line, the way commands run from key
// bindings report (see ShowTaskMenu).
func Say(ctx context.Context, server tmux.Server, client, text string) error {
	return server.Message(ctx, client, text)
}
