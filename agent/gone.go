package agent

import (
	"context"
	"errors"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// ErrAgentGone is the cause of a context ended by UntilAgentExits or
// UntilUnread: the agent that ran this process is gone, and nothing this
// process prints will be read.
var ErrAgentGone = errors.New("the agent that ran this process is gone")

// UntilAgentExits returns a context that also ends, with cause
// ErrAgentGone, when the agent, this process's parent ppid, exits: Claude
// Code runs its shell prefix as its own child (measured), and a Claude
// killed with SIGKILL leaves it running, reparented. Take ppid
// (os.Getppid) as early as the process can: an agent that dies before it
// is taken has made another process the parent.
func UntilAgentExits(ctx context.Context, ppid int) (context.Context, context.CancelFunc) {
	return until(ctx, func(ctx context.Context) bool { return awaitParentExit(ctx, ppid) })
}

// UntilUnread returns a context that also ends, with cause ErrAgentGone,
// once nobody is left at the other end of out, a pipe or a socket: the
// agent reads its hooks' answers through one (Claude Code: a Unix socket,
// measured), and a hook outlives an agent killed with SIGKILL (Claude runs
// a hook under `sh -c` and its shell prefix, so the hook's parent, a
// shell, is still there). For anything else (a terminal, a file) it never
// ends so.
func UntilUnread(ctx context.Context, out *os.File) (context.Context, context.CancelFunc) {
	return until(ctx, func(ctx context.Context) bool {
		if fi, err := out.Stat(); err != nil || fi.Mode()&(os.ModeNamedPipe|os.ModeSocket) == 0 {
			return false
		}
		// The write end of a pipe polls POLLERR once its last reader has
		// closed it, and a connected Unix socket POLLHUP once its peer
		// has, whatever events are asked for.
		return pollFor(ctx, int(out.Fd()), 0)
	})
}

// until runs wait in a goroutine and ends the returned context with
// ErrAgentGone when it returns true.
func until(ctx context.Context, wait func(context.Context) bool) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancelCause(ctx)
	go func() {
		if wait(ctx) {
			cancel(ErrAgentGone)
		}
	}()
	return ctx, func() { cancel(context.Canceled) }
}

// awaitParentExit waits until the parent process ppid has exited (true)
// or ctx ends (false). It watches a pidfd of the parent, checked to be
// the parent still once opened (a pid can be reused once the parent is
// gone); without pidfds (Linux before 5.3) it looks at its parent pid
// every second.
func awaitParentExit(ctx context.Context, ppid int) bool {
	if ppid <= 1 {
		return false // no agent known to outlive (init, or outside the pid namespace)
	}
	fd, err := unix.PidfdOpen(ppid, 0)
	if err == nil {
		defer unix.Close(fd)
	}
	if os.Getppid() != ppid {
		return true // reparented: the parent has exited
	}
	if err == nil {
		// A pidfd polls readable once its process has exited.
		return pollFor(ctx, fd, unix.POLLIN)
	}
	for ctx.Err() == nil {
		time.Sleep(time.Second)
		if os.Getppid() != ppid {
			return true
		}
	}
	return false
}

// pollFor waits until fd polls an event (events, or an error or hang-up,
// which poll always reports): true; or until ctx ends: false. The
// timeout only lets ctx's end be seen.
func pollFor(ctx context.Context, fd int, events int16) bool {
	fds := []unix.PollFd{{Fd: int32(fd), Events: events}}
	for ctx.Err() == nil {
		n, err := unix.Poll(fds, 1000)
		if n > 0 {
			return true
		}
		if err != nil && err != unix.EINTR {
			return false
		}
	}
	return false
}
