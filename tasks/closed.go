package tasks

import (
	"context"
	"time"

	"golang.org/x/sys/unix"

	"github.com/qtask/qtask/tasks/procs"
	"github.com/qtask/qtask/tmux"
)

// SettleClosedPanes settles the running tasks on server whose pane tmux no
// longer has: tmux runs it (a hook the plugin sets) when a window or pane
// goes away, so a task whose pane the user killed ends now, and the status
// segment says so, instead of at the next reader. A task's wrapper notices
// a killed pane itself (SIGHUP) and settles its task; a promoted shell
// command's wrapper is the user's shell, which dies with the pane and
// settles nothing. Either way the pane's process may still be on its way
// out when the hook runs, so each is given up to patience to exit before
// its task is reconciled, which settles a task whose wrapper is gone.
func (s *Store) SettleClosedPanes(ctx context.Context, server tmux.Server, patience time.Duration) error {
	// tmux runs this whenever any window closes, each task's own at its
	// end included: only the running tasks' records are read, found by
	// the status line's markers (a task whose marker could not be written
	// is left to the next reader).
	ids, err := s.statusLine().Running()
	if err != nil {
		return err
	}
	var mine []*record
	for _, id := range ids {
		r, err := s.load(id)
		if err == nil && r.Running() && r.PaneID != "" && r.TmuxServer.Same(server) {
			mine = append(mine, r)
		}
	}
	if len(mine) == 0 {
		return nil
	}
	panes, err := server.PaneCommands(ctx)
	if err != nil {
		return err
	}
	deadline := time.Now().Add(patience)
	for _, r := range mine {
		if _, open := panes[tmux.PaneID(r.PaneID)]; open {
			continue
		}
		if r.WrapperPID != 0 {
			awaitExit(r.WrapperPID, r.WrapperStart, time.Until(deadline))
		}
		if cur, err := s.load(r.ID); err == nil {
			s.reconcile(ctx, cur)
		}
	}
	return nil
}

// awaitExit waits up to timeout for the process pid that started at start
// to exit (a zombie has exited). A pid that is no longer that process
// returns at once.
func awaitExit(pid int, start uint64, timeout time.Duration) {
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		return // gone already, or no pidfd: reconcile judges it as it is
	}
	defer unix.Close(fd)
	if !procs.Same(pid, start) {
		return
	}
	fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	for end := time.Now().Add(timeout); time.Now().Before(end); {
		n, err := unix.Poll(fds, int(time.Until(end).Milliseconds())+1)
		if n > 0 || err != nil && err != unix.EINTR {
			return
		}
	}
}
