package tasks

import (
	"context"
	"errors"
	"syscall"

	"golang.org/x/sys/unix"

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

// processes is what tasks asks of the OS about a task's processes: the
// process table the ownership proof reads (procTable), who is asking
// (whose own group and session are never a target), and signals to a
// process group or to one process. The real one is osProcesses; tests pass a fake
// (the withProcesses option) so that Stop is tested without signalling anything,
// and without depending on where the test runs: in a pid namespace whose
// session leader is outside (as in CI), getsid(2) answers 0.
type processes interface {
	procTable
	self() caller
	signalGroup(pgid int, sig syscall.Signal)
	// signalProcess signals pid only while it is still the process that
	// started at start: never a recycled pid.
	signalProcess(pid int, start uint64, sig syscall.Signal)
}

// osProcesses is the machine: /proc, this process and kill(2).
type osProcesses struct{ procfs }

func (osProcesses) self() caller { return self() }

func (osProcesses) signalGroup(pgid int, sig syscall.Signal) { syscall.Kill(-pgid, sig) }

// signalProcess checks pid's start time through a pidfd opened first, so
// that the process checked is the one signalled even if it exits and its
// pid is reused in between. Without pidfds (Linux before 5.3) a plain
// kill(2) follows the check.
func (osProcesses) signalProcess(pid int, start uint64, sig syscall.Signal) {
	if pid <= 1 {
		return
	}
	fd, err := unix.PidfdOpen(pid, 0)
	switch {
	case err == nil:
		defer unix.Close(fd)
		if processStart(pid) == start {
			unix.PidfdSendSignal(fd, sig, nil, 0)
		}
	case errors.Is(err, unix.ENOSYS):
		if processStart(pid) == start {
			syscall.Kill(pid, sig)
		}
	}
}

// procs is the store's processes: the machine's, unless a test opened
// the store with a fake (withProcesses).
func (s *Store) procs() processes {
	if s.procsOf != nil {
		return s.procsOf
	}
	return osProcesses{}
}
