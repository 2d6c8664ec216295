package tmux

import (
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"strconv"

	"golang.org/x/sys/unix"
)

// This file decides whether a server's socket is one qtask may talk to.
// Everything a client sends reaches whoever listens on the socket: the
// identify messages carry the caller's whole environment (tokens and all)
// and working directory, and the command carries the task's. Another local
// user who made /tmp/tmux-UID before us, or planted a socket in a
// directory we share, must get none of it. So before the first byte:
//
//   - a socket in a directory named tmux-UID (our uid), where tmux keeps the
//     sockets of `tmux -L` (ours, `-L qtask`, and $TMUX's of an ordinary
//     server), gets tmux's own check of that directory (tmux.c make_label:
//     a real directory, owned by us, no bits for others), and no bits for
//     its group either, also when the path came from $TMUX or a record
//     rather than from -L;
//   - the socket, if it exists, belongs to us or root;
//   - the process listening on it runs as us or root (SO_PEERCRED on the
//     connected socket): the check no race can slip past.
//
// A socket path named outside tmux-UID (QTASK_TMUX_SOCKET) is the user's
// choice, as `tmux -S` is, and its directory is not judged; its socket and
// listener still are. A server of another user is never of use to qtask
// anyway: its tasks would run as that user, who cannot read our state.

// UnsafeSocketError is a socket qtask refused to send anything to: its
// directory, the socket or the process listening on it may be another
// user's. Nothing was sent.
type UnsafeSocketError struct {
	Dir  bool   // Path is the socket's directory
	Path string // the directory or socket found unsafe
	// Problem is what is wrong with it, naming its owner ("owned by bob
	// (uid 1001), not by you").
	Problem string
	Fix     string // what to do, as a command or a setting
}

func (e *UnsafeSocketError) Error() string {
	what := "tmux socket"
	if e.Dir {
		what += " directory"
	}
	return fmt.Sprintf("unsafe %s %s: %s; nothing was sent to it (%s)", what, e.Path, e.Problem, e.Fix)
}

// checkSocket is what is checked before a command is sent to path, over
// the socket or by the forked client: its tmux-UID directory and the
// socket itself.
func checkSocket(path string) error {
	dir := filepath.Dir(path)
	if filepath.Base(dir) == "tmux-"+strconv.Itoa(os.Getuid()) {
		if err := checkSocketDir(dir); err != nil {
			return err
		}
	}
	var st unix.Stat_t
	if unix.Stat(path, &st) != nil || trusted(st.Uid) {
		return nil // nothing there: the client starts a server, or says none runs
	}
	return &UnsafeSocketError{Path: path, Problem: "owned by " + owner(st.Uid) + ", not by you",
		Fix: "remove it, or set QTASK_TMUX_SOCKET to a server of your own"}
}

// checkSocketDir is tmux's check of its socket directory, which tmux's
// client makes for -L but not for -S: not followed if a symlink, owned by
// us, and, stricter than tmux (which allows group bits), nothing for
// group or others. A directory not there yet is tmux's to create (0700).
func checkSocketDir(dir string) error {
	var st unix.Stat_t
	if unix.Lstat(dir, &st) != nil {
		return nil
	}
	elsewhere := "remove it, or set TMUX_TMPDIR to a directory of your own"
	switch {
	case st.Mode&unix.S_IFMT != unix.S_IFDIR:
		return &UnsafeSocketError{Dir: true, Path: dir, Problem: "not a directory (owned by " + owner(st.Uid) + ")", Fix: elsewhere}
	case int(st.Uid) != os.Getuid():
		return &UnsafeSocketError{Dir: true, Path: dir, Problem: "owned by " + owner(st.Uid) + ", not by you", Fix: elsewhere}
	case st.Mode&0o077 != 0:
		return &UnsafeSocketError{Dir: true, Path: dir, Problem: fmt.Sprintf("yours but open to others (mode %04o)", st.Mode&0o7777),
			Fix: "chmod 700 " + dir}
	}
	return nil
}

// checkPeer checks who listens on the connected socket fd (path): us or
// root. It returns the listener's pid, for messages.
func checkPeer(fd int, path string) (pid int, err error) {
	cred, err := unix.GetsockoptUcred(fd, unix.SOL_SOCKET, unix.SO_PEERCRED)
	if err != nil {
		return 0, &UnsafeSocketError{Path: path, Problem: fmt.Sprintf("cannot say who listens on it (%v)", err),
			Fix: "set QTASK_TMUX_SOCKET to a server of your own"}
	}
	if !trusted(cred.Uid) {
		return 0, &UnsafeSocketError{Path: path,
			Problem: fmt.Sprintf("listened on by pid %d of %s, not by you", cred.Pid, owner(cred.Uid)),
			Fix:     "stop that process, or set QTASK_TMUX_SOCKET to a server of your own"}
	}
	return int(cred.Pid), nil
}

// trusted: a socket or server of ours, or root's (who can read our state
// anyway).
func trusted(uid uint32) bool { return uid == 0 || int(uid) == os.Getuid() }

// owner names uid as a person reads it: "bob (uid 1001)".
func owner(uid uint32) string {
	id := strconv.FormatUint(uint64(uid), 10)
	if u, err := user.LookupId(id); err == nil {
		return u.Username + " (uid " + id + ")"
	}
	return "uid " + id
}
