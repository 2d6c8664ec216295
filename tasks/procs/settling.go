package procs

import (
	"errors"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// A wrapper that cannot write its task's end says so in its own process
// name (/proc/PID/comm): "qtask~28" while errno 28 (ENOSPC) holds it back.
// A note file would need the very state directory that is full or
// read-only; the process name needs no disk, and it goes away with the
// process, so a dead wrapper never leaves a stale note behind.
const settlingPrefix = "qtask~"

// selfComm is the wrapper's own process name before any settling note.
var selfComm string

// AnnounceSettling puts why the wrapper cannot settle into its process
// name, or, with nil, takes it out again (nothing to do, and no file
// touched, unless it was put there).
func AnnounceSettling(why error) {
	const comm = "/proc/self/comm" // the main thread's name, which readers see
	if why == nil && selfComm == "" {
		return
	}
	if selfComm == "" {
		data, err := os.ReadFile(comm)
		if err != nil {
			return
		}
		selfComm = strings.TrimSuffix(string(data), "\n")
	}
	name := selfComm
	if why != nil {
		var errno syscall.Errno
		errors.As(why, &errno)
		name = settlingPrefix + strconv.Itoa(int(errno))
	}
	os.WriteFile(comm, []byte(name), 0)
}

// SettlingReason is why the wrapper with pid cannot settle its task, as its
// process name says (AnnounceSettling); "" if nothing holds it back. st is
// what was read of the wrapper already: its name, if there, saves reading
// /proc/PID/comm.
func SettlingReason(pid int, st Stat) string {
	comm := st.Comm
	if comm == "" {
		data, err := ReadFile(pid, "comm")
		if err != nil {
			return ""
		}
		comm = strings.TrimSpace(string(data))
	}
	code, ok := strings.CutPrefix(comm, settlingPrefix)
	if !ok {
		return ""
	}
	if n, err := strconv.Atoi(code); err == nil && n > 0 {
		return syscall.Errno(n).Error()
	}
	return "the state directory cannot be written"
}
