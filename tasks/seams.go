package tasks

import (
	"context"

	"github.com/qtask/qtask/tasks/procs"
	"github.com/qtask/qtask/tmux"
)

// Panes is what tasks asks of the tmux server holding a task's pane: start
// its window, describe, move and close panes, and attach the pipes that
// carry their output. tmux.Server is the real one; tests pass a fake
// (the withPanes option) so that Start, Adopt and Promote are tested without tmux.
type Panes interface {
	// StartWindow calls spec.Meanwhile, if set, exactly once before it
	// returns, whatever the outcome.
	StartWindow(ctx context.Context, spec tmux.WindowSpec) (tmux.PaneID, int, error)
	SessionOf(ctx context.Context, pane tmux.PaneID) (tmux.SessionID, error)
	SessionID(ctx context.Context, name string) (tmux.SessionID, error)
	PaneInfo(ctx context.Context, pane tmux.PaneID) (tmux.PaneInfo, error)
	MovePaneToSession(ctx context.Context, info tmux.PaneInfo, session string) error
	CaptureAndPipe(ctx context.Context, pane tmux.PaneID, argv []string) (tmux.PaneSnapshot, error)
	PipeToCommand(ctx context.Context, pane tmux.PaneID, command string) error
	ReplaceWithShell(ctx context.Context, info tmux.PaneInfo, session, windowName string, shell tmux.ShellSpec) (tmux.PaneID, error)
	KillPane(ctx context.Context, pane tmux.PaneID) error
}

// panes is the Panes of server: the server itself, unless a test opened
// the store with a fake (withPanes).
func (s *Store) panes(server tmux.Server) Panes {
	if s.panesOf != nil {
		return s.panesOf(server)
	}
	return server
}

// procs is the store's processes: the machine's, unless a test opened
// the store with a fake (withProcesses).
func (s *Store) procs() procs.Processes {
	if s.procsOf != nil {
		return s.procsOf
	}
	return procs.OS{}
}
