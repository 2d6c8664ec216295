package tasks

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/qtask/qtask/tasks/taskid"
)

// A wrapper that cannot write its task's end says so in its own process
// name (/proc/PID/comm): "qtask~28" while errno 28 (ENOSPC) holds it back.
// A note file would need the very state directory that is full or
// read-only; the process name needs no disk, and it goes away with the
// process, so a dead wrapper never leaves a stale note behind.
const settlingPrefix = "qtask~"

// Backoff between the wrapper's attempts to settle.
const (
	settleRetryMin = 50 * time.Millisecond
	settleRetryCap = 5 * time.Second
)

// selfComm is the wrapper's own process name before any settling note.
var selfComm string

// announceSettling puts why the wrapper cannot settle into its process
// name, or, with nil, takes it out again (nothing to do, and no file
// touched, unless it was put there).
func announceSettling(why error) {
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

// settlingReason is why the wrapper with pid cannot settle its task, as its
// process name says; "" if nothing holds it back. st is what was read of
// the wrapper already: its name, if there, saves reading /proc/PID/comm.
func settlingReason(pid int, st procStat) string {
	comm := st.comm
	if comm == "" {
		data, err := readProcFile(pid, "comm")
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

// settleLate settles the task as o, retrying with backoff for as long as
// patience while the state directory will not take the write (full,
// read-only): a task whose end was seen must end with what was seen, never
// as lost. Meanwhile the wrapper's process name says why (see
// announceSettling). A state directory that no longer exists is not
// waited for: no one can read an end written there, and waiting would
// leave the wrapper behind for nothing.
func (s *Store) settleLate(ctx context.Context, id string, o outcome, patience time.Duration) (*record, error) {
	deadline := time.Now().Add(patience)
	for backoff := settleRetryMin; ; backoff = min(2*backoff, settleRetryCap) {
		r, _, err := s.settle(ctx, id, o)
		if err == nil || errors.Is(err, taskid.ErrNotFound) || errors.Is(err, fs.ErrNotExist) || !time.Now().Before(deadline) {
			announceSettling(nil)
			return r, err
		}
		announceSettling(err)
		time.Sleep(min(backoff, time.Until(deadline)))
	}
}
