package procs

import (
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Command is a task's command as its wrapper runs it in the pane.
type Command struct {
	Shell  string // the caller's shell, by name or path: run as Shell -c Script
	Script string
	Dir    string // the caller's directory; "" for the wrapper's
	Env    []string
	TTY    *os.File // the pane's terminal, the command's stdin
	Out    *os.File // the pane's terminal, the command's stdout and stderr
}

// StartCommand starts c as the pane runs it: under the caller's shell, in
// the caller's directory, on the pane's terminal, in a process group of
// its own that is the terminal's foreground (keys such as Ctrl+C in the
// pane reach it, and `stop` can signal the whole group). It returns the
// command's pid. syscall rather than os/exec: os.StartProcess first
// checks, once per process, that pidfds work, with a clone of its own that
// every task's wrapper would pay for a pidfd it never uses.
func StartCommand(c Command) (int, error) {
	shell := c.Shell
	if !strings.Contains(shell, "/") {
		path, err := exec.LookPath(shell)
		if err != nil {
			return 0, err
		}
		shell = path
	}
	if c.Dir != "" {
		if _, err := os.Stat(c.Dir); err != nil {
			return 0, &fs.PathError{Op: "chdir", Path: c.Dir, Err: errors.Unwrap(err)}
		}
	}
	attr := &syscall.SysProcAttr{Setpgid: true}
	if isTerminal(c.TTY) {
		// The command's group becomes the terminal's foreground group, as
		// a shell would do: keystrokes and Ctrl+C in the pane go to it.
		attr.Foreground, attr.Ctty = true, int(c.TTY.Fd())
	}
	files := []uintptr{c.TTY.Fd(), c.Out.Fd(), c.Out.Fd()}
	pid, err := syscall.ForkExec(shell, []string{c.Shell, "-c", c.Script}, &syscall.ProcAttr{
		Dir: c.Dir, Env: c.Env, Files: files, Sys: attr,
	})
	if err != nil {
		return 0, &fs.PathError{Op: "fork/exec", Path: shell, Err: err}
	}
	return pid, nil
}

// WaitCommand waits for the command pid, the leader of its own process
// group, to exit and says how it did. A command stopped by Ctrl+Z in its
// pane (SIGTSTP) is continued at once: a task's pane has no shell to bring
// it back, so it would sit stopped, and the task running, for ever. A
// program tmux runs as a pane's own command is not stopped by Ctrl+Z
// either. Other stops (SIGSTOP from a debugger or a person) are left be.
func WaitCommand(pid int) (syscall.WaitStatus, error) {
	var ws syscall.WaitStatus
	for {
		_, err := syscall.Wait4(pid, &ws, syscall.WUNTRACED, nil)
		switch {
		case errors.Is(err, syscall.EINTR):
		case err == nil && ws.Stopped():
			if ws.StopSignal() == syscall.SIGTSTP {
				syscall.Kill(-pid, syscall.SIGCONT)
			}
		default:
			return ws, err
		}
	}
}

// ForwardSignals passes signals sent to the wrapper on to the command's
// group. SIGHUP means the pane itself went away (killed window, dead
// server): the command is told, and killed if it ignores the hint.
func ForwardSignals(sigs <-chan os.Signal, t Task, grace time.Duration, paneClosed *atomic.Bool) {
	for sig := range sigs {
		sysSig := sig.(syscall.Signal)
		if sysSig == syscall.SIGHUP {
			paneClosed.Store(true)
		}
		signalOwned(OS{}, t, t.PGID, sysSig)
		if sysSig == syscall.SIGHUP {
			go KillLeftovers(t, grace)
		}
	}
}

// KillLeftovers ends every process the task has left: its command's
// process group and the strays that left it, SIGTERM, then SIGKILL once
// grace has passed; the group only once proved the task's, the strays as
// the wrapper's descendants. Nothing left costs one kill(2) probe and one
// waitid(2).
func KillLeftovers(t Task, grace time.Duration) {
	p := OS{}
	if t.PGID <= 1 || leftoversGone(p, t) {
		return
	}
	signalOwned(p, t, t.PGID, syscall.SIGTERM, syscall.SIGCONT)
	SignalStrays(p, t, t.PGID, syscall.SIGTERM, syscall.SIGCONT)
	deadline := time.Now().Add(grace)
	for time.Now().Before(deadline) {
		if leftoversGone(p, t) {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	signalOwned(p, t, t.PGID, syscall.SIGKILL)
	SignalStrays(p, t, t.PGID, syscall.SIGKILL)
}

// leftoversGone reports whether nothing of the task runs any more: its
// group is empty and the wrapper, subreaper of all the rest, has no child
// but its own (or none at all, which needs no look at /proc).
func leftoversGone(p OS, t Task) bool {
	if !groupEmpty(t.PGID) {
		return false
	}
	var info unix.Siginfo
	err := unix.Waitid(unix.P_ALL, 0, &info, unix.WEXITED|unix.WNOHANG|unix.WNOWAIT, nil)
	return errors.Is(err, unix.ECHILD) || len(strays(p, p.Self(), t, t.PGID)) == 0
}

// reapOrphansEvery bounds how often ReapOrphans looks for its dead
// children: a task whose processes daemonize by the thousand costs the
// wrapper a look at most this often.
const reapOrphansEvery = 100 * time.Millisecond

// ReapOrphans collects the task's orphans as they die: the wrapper is
// their subreaper, and a zombie left unreaped would hold its pid for as
// long as the task runs. It reaps, by pid, only dead children outside the
// wrapper's own process group other than the command: the command's
// status is WaitCommand's, and the tmux calls the wrapper makes (children
// in its group) are waited for by os/exec, whose wait a wait4(-1) here
// would steal.
func ReapOrphans(command int) {
	sigchld := make(chan os.Signal, 1)
	signal.Notify(sigchld, syscall.SIGCHLD)
	me, mine := os.Getpid(), syscall.Getpgrp()
	for range sigchld {
		// A look that reaps nothing first: Linux zeroes info when no
		// child is dead, and only then are the children listed (also
		// when the dead one is the command, not yet waited for: a task
		// in five ends so). Its own children only, not all of /proc:
		// that cost a read of every process's stat at those ends.
		var info unix.Siginfo
		err := unix.Waitid(unix.P_ALL, 0, &info, unix.WEXITED|unix.WNOHANG|unix.WNOWAIT, nil)
		if err != nil || info.Signo == 0 {
			continue
		}
		dead, _ := groupMembers(ownChildren{}, func(st Stat) bool {
			return st.PPID == me && st.State == 'Z' && st.Pgrp != mine
		})
		for _, m := range dead {
			if m.PID != command {
				syscall.Wait4(m.PID, nil, syscall.WNOHANG, nil)
			}
		}
		time.Sleep(reapOrphansEvery)
	}
}

// groupEmpty reports whether no live process is left in group pgid.
// kill(2) counts zombies too, and an orphan's zombie lasts as long as pid 1
// leaves it unreaped (for ever under an init that reaps nothing, as in
// some containers): only a member that still runs may hold the task's end
// until the grace runs out.
func groupEmpty(pgid int) bool {
	if syscall.Kill(-pgid, 0) != nil {
		return true
	}
	live, err := groupMembers(OS{}, func(st Stat) bool { return st.Pgrp == pgid && st.State != 'Z' })
	return err == nil && len(live) == 0
}

// HungUp reports whether terminal f has hung up: its pane is gone (tmux
// closed the pane's pty, killing the pane or dying). Linux marks the
// terminal as the pty's other side closes, before it sends the SIGHUP or
// fails a write to it, so the wrapper of a command that ended on that
// failure finds it marked.
func HungUp(f *os.File) bool {
	// A hung-up terminal answers no termios ioctl (isTerminal), but stays
	// a character device; a pipe's POLLHUP would mean something else.
	var st unix.Stat_t
	if f == nil || unix.Fstat(int(f.Fd()), &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFCHR {
		return false
	}
	fds := []unix.PollFd{{Fd: int32(f.Fd())}} // POLLHUP is reported unasked
	n, err := unix.Poll(fds, 0)
	return err == nil && n > 0 && fds[0].Revents&unix.POLLHUP != 0
}

func isTerminal(f *os.File) bool {
	if f == nil {
		return false
	}
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}
