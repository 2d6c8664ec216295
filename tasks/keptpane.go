package tasks

import (
	"context"
	"time"

	"github.com/qtask/qtask/tasks/statusline"
	"github.com/qtask/qtask/tmux"
)

// A failed task's pane can be kept for a look (config keep_failed_pane):
// its wrapper, the pane's program, tells tmux to leave the pane open, dead,
// when it exits, with the screen, colours and scrollback the command left.
// tmux closes it once someone has looked and left it (tmux.KeepDeadPane);
// removing the task (rm, prune) closes it too. The task is settled before
// the wrapper exits, so a kept pane never keeps a task running.

// keptPaneTimeout bounds the tmux calls that keep or close a kept pane.
const keptPaneTimeout = 5 * time.Second

// keepPane asks tmux to keep the wrapper's pane once it exits, for a task
// ending as o, and reports whether it will.
func keepPane(opts ExecOptions) bool {
	if opts.Pane == "" {
		return false
	}
	ctx, cancel := context.WithTimeout(context.Background(), keptPaneTimeout)
	defer cancel()
	return opts.Server.KeepDeadPane(ctx, opts.Pane) == nil
}

// keptPaneNote is the kept pane's last line, which the wrapper prints
// into it once the task is settled: why it is there and how it goes.
func keptPaneNote(r *record, o outcome) string {
	why := "failed"
	if o.reason != "" {
		why += ": " + o.reason
	}
	return statusline.ShortLabel("qtask: task "+r.ID+" "+why+". This pane closes once you leave it; qtask rm "+r.ID+" closes it now.", 200)
}

// releasePane undoes keepPane: the pane closes when the wrapper exits.
func releasePane(opts ExecOptions) {
	ctx, cancel := context.WithTimeout(context.Background(), keptPaneTimeout)
	defer cancel()
	opts.Server.ReleaseDeadPane(ctx, opts.Pane)
}

// closeKeptPanes closes the kept panes of tasks being removed. Only a pane
// whose program was the task's wrapper is closed: a new tmux server numbers
// its panes from %0 again.
func closeKeptPanes(removed []*record) {
	for _, r := range removed {
		if !r.PaneKept || r.PaneID == "" || r.WrapperPID <= 0 {
			continue
		}
		server, err := r.server()
		if err != nil {
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), keptPaneTimeout)
		server.KillTaskPane(ctx, tmux.PaneID(r.PaneID), r.WrapperPID)
		cancel()
	}
}

// keptPaneOpen reports whether t's kept pane is still open: it closes once
// someone has looked at it.
func keptPaneOpen(server tmux.Server, t *Task) bool {
	ctx, cancel := context.WithTimeout(context.Background(), keptPaneTimeout)
	defer cancel()
	info, err := server.PaneInfo(ctx, tmux.PaneID(t.PaneID))
	return err == nil && info.Dead
}
