package capture

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// Where the kernel will not let the wrapper duplicate the pane's pipe out
// of the pipe's shell (pidfd_getfd needs ptrace rights over it, which Yama's
// ptrace_scope 1, Ubuntu's default, gives a user without CAP_SYS_PTRACE only
// over its own descendants), the shell execs the wrapper's own program as
// HandoverVerb instead, which passes the pipe over a unix socket
// (SCM_RIGHTS) and exits. That costs one process start per task, where the
// cat it replaces would stay between tmux and the wrapper for the task's
// whole life, woken for every piece of output.

// HandoverVerb is run by a pane pipe's shell where the kernel will not let
// the wrapper take the pipe itself: it passes its stdin, the pipe, to the
// wrapper waiting on the abstract unix socket NAME, and exits:
// `_handover NAME` (see Handover). The CLI serves it.
const HandoverVerb = "_handover"

// handoverPrefix begins the name of the abstract unix socket a wrapper
// waits on for its pipe; a random suffix makes it one attach's.
const handoverPrefix = "qtask-pipe-"

// handoverWait bounds the wait for the helper to pass the pipe: a process
// start and one message.
const handoverWait = 5 * time.Second

// handoverListener is the socket a wrapper waits on for its pipe: abstract
// (no file is created, it goes with the process), and named at random.
type handoverListener struct {
	fd   int
	name string
}

func listenHandover() (*handoverListener, error) {
	var b [12]byte
	rand.Read(b[:])
	name := handoverPrefix + hex.EncodeToString(b[:])
	fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC|unix.SOCK_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	if err := unix.Bind(fd, &unix.SockaddrUnix{Name: "@" + name}); err != nil {
		unix.Close(fd)
		return nil, err
	}
	if err := unix.Listen(fd, 1); err != nil {
		unix.Close(fd)
		return nil, err
	}
	return &handoverListener{fd: fd, name: name}, nil
}

func (l *handoverListener) close() { unix.Close(l.fd) }

// receive waits up to wait for the helper, process pid (helper: its
// pidfd), and returns the pipe it passed. Only that process is heard: it is
// the pipe's shell after its exec, so other processes that find the
// socket's name (abstract names are listed in /proc/net/unix) are turned
// away and the wait goes on. A helper that exits without passing a pipe
// ends the wait at once.
func (l *handoverListener) receive(pid, helper int, wait time.Duration, stop <-chan struct{}) (*os.File, error) {
	deadline := time.Now().Add(wait)
	for {
		ready, err := awaitReadable([]int{l.fd, helper}, deadline, stop)
		if err != nil {
			return nil, err
		}
		conn, _, err := unix.Accept4(l.fd, unix.SOCK_CLOEXEC)
		if err != nil {
			if !ready[0] && ready[1] {
				return nil, errors.New("the handover helper exited without passing the pipe")
			}
			continue // EAGAIN: a caller that gave up
		}
		pipe, err := takeOffered(conn, pid, deadline, stop)
		unix.Close(conn)
		if err == nil || !errors.Is(err, errNotTheHelper) {
			return pipe, err
		}
	}
}

// errNotTheHelper: a process other than the handover helper connected.
var errNotTheHelper = errors.New("not the handover helper")

// takeOffered reads the pipe the helper, process pid, sends on conn.
func takeOffered(conn, pid int, deadline time.Time, stop <-chan struct{}) (*os.File, error) {
	cred, err := unix.GetsockoptUcred(conn, unix.SOL_SOCKET, unix.SO_PEERCRED)
	if err != nil || int(cred.Pid) != pid || int(cred.Uid) != os.Geteuid() {
		return nil, errNotTheHelper
	}
	if _, err := awaitReadable([]int{conn}, deadline, stop); err != nil {
		return nil, err
	}
	oob := make([]byte, unix.CmsgSpace(4))
	_, oobn, _, _, err := unix.Recvmsg(conn, make([]byte, 1), oob, unix.MSG_CMSG_CLOEXEC)
	if err != nil {
		return nil, err
	}
	msgs, err := unix.ParseSocketControlMessage(oob[:oobn])
	if err != nil || len(msgs) != 1 {
		return nil, errors.New("no pipe in the helper's message")
	}
	fds, err := unix.ParseUnixRights(&msgs[0])
	if err != nil || len(fds) != 1 {
		for _, fd := range fds {
			unix.Close(fd)
		}
		return nil, errors.New("no pipe in the helper's message")
	}
	return socketFile(fds[0])
}

// awaitReadable waits until one of fds is readable (which ones it says),
// deadline passes or stop is closed (checked every captureCheck).
func awaitReadable(fds []int, deadline time.Time, stop <-chan struct{}) ([]bool, error) {
	polls := make([]unix.PollFd, len(fds))
	for i, fd := range fds {
		polls[i] = unix.PollFd{Fd: int32(fd), Events: unix.POLLIN}
	}
	for {
		select {
		case <-stop:
			return nil, errors.New("the capture was stopped")
		default:
		}
		left := time.Until(deadline)
		if left <= 0 {
			return nil, os.ErrDeadlineExceeded
		}
		n, err := unix.Poll(polls, int(min(left, captureCheck).Milliseconds())+1)
		if err != nil && !errors.Is(err, unix.EINTR) {
			return nil, err
		}
		if n > 0 {
			ready := make([]bool, len(fds))
			for i, p := range polls {
				ready[i] = p.Revents != 0
			}
			return ready, nil
		}
	}
}

// socketFile is fd as a file if it is a unix stream socket, as a pane's
// pipe is (tmux makes it with socketpair); anything else is closed and
// refused.
func socketFile(fd int) (*os.File, error) {
	domain, err1 := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_DOMAIN)
	typ, err2 := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_TYPE)
	if err1 != nil || err2 != nil || domain != unix.AF_UNIX || typ != unix.SOCK_STREAM {
		unix.Close(fd)
		return nil, errors.New("what was offered is not a pane's pipe")
	}
	return os.NewFile(uintptr(fd), "pane pipe"), nil
}

// Handover is HandoverVerb: it passes pipe, a pane's pipe (its caller's
// stdin), to the wrapper waiting on the socket name, and returns.
func Handover(name string, pipe *os.File) error {
	if !strings.HasPrefix(name, handoverPrefix) {
		return fmt.Errorf("%q is not a wrapper's socket", name)
	}
	fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	if err := unix.Connect(fd, &unix.SockaddrUnix{Name: "@" + name}); err != nil {
		return fmt.Errorf("reach the wrapper: %w", err)
	}
	return unix.Sendmsg(fd, []byte{0}, unix.UnixRights(int(pipe.Fd())), nil, 0)
}
