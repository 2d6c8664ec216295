// Package procs is qtask's knowledge of the machine's processes: reading
// /proc, proving which processes belong to a task before anything is
// signalled, signalling them safely, and the wrapper's own process
// mechanics (starting the command in its group, waiting, reaping the
// orphans it is subreaper of). It is separate from tasks because none of
// it needs a record or the state directory: it is given the few ids and
// start times a task has on record (Task), and the ownership rule lives in
// one place, to read and to test over a fake process table.
package procs

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"syscall"

	"github.com/qtask/qtask/tasks/statefs"
)

// Stat is the part of /proc/PID/stat qtask uses.
type Stat struct {
	Comm      string // the process's name (its main thread's, as /proc/PID/comm)
	State     byte   // 'R', 'S', … 'Z' for a zombie: exited, not yet reaped
	PPID      int    // the parent: the task's wrapper, for an orphan of the task
	Pgrp      int
	Session   int
	TPGID     int    // foreground process group of the process's terminal
	StartTime uint64 // clock ticks since boot: with the pid, a process's identity
}

// ReadStat parses /proc/PID/stat. The command name (field 2) may hold
// spaces and parentheses, so fields are counted from the last ')'.
func ReadStat(pid int) (Stat, error) {
	data, err := ReadFile(pid, "stat")
	if err != nil {
		return Stat{}, err
	}
	return parseStat(string(data))
}

// ReadFile reads /proc/PID/NAME, a small file, with plain system calls:
// `ls` reads two for each running task, and os.ReadFile makes twice the
// calls (a stat, a poller registration the kernel refuses, a second read).
func ReadFile(pid int, name string) ([]byte, error) {
	path := "/proc/" + strconv.Itoa(pid) + "/" + name
	fd, err := statefs.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	defer syscall.Close(fd)
	return statefs.ReadToEnd(fd, path, make([]byte, 0, 512))
}

func parseStat(s string) (Stat, error) {
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return Stat{}, errors.New("malformed /proc stat")
	}
	// After ')': state(3) ppid(4) pgrp(5) session(6) tty_nr(7) tpgid(8) … starttime(22).
	f := strings.Fields(s[i+1:])
	if len(f) < 20 {
		return Stat{}, errors.New("short /proc stat")
	}
	st := Stat{State: f[0][0]}
	if open := strings.IndexByte(s, '('); open >= 0 && open < i {
		st.Comm = s[open+1 : i]
	}
	var err error
	if st.PPID, err = strconv.Atoi(f[1]); err != nil {
		return Stat{}, fmt.Errorf("/proc stat ppid: %w", err)
	}
	if st.Pgrp, err = strconv.Atoi(f[2]); err != nil {
		return Stat{}, fmt.Errorf("/proc stat pgrp: %w", err)
	}
	if st.Session, err = strconv.Atoi(f[3]); err != nil {
		return Stat{}, fmt.Errorf("/proc stat session: %w", err)
	}
	if st.TPGID, err = strconv.Atoi(f[5]); err != nil {
		return Stat{}, fmt.Errorf("/proc stat tpgid: %w", err)
	}
	if st.StartTime, err = strconv.ParseUint(f[19], 10, 64); err != nil {
		return Stat{}, fmt.Errorf("/proc stat starttime: %w", err)
	}
	return st, nil
}

// StartTime is a process's start time, 0 when it cannot be read (no
// procfs); identity checks then fall back to the pid alone.
func StartTime(pid int) uint64 {
	st, err := ReadStat(pid)
	if err != nil {
		return 0
	}
	return st.StartTime
}

// Same tells whether pid still is the live process that started at
// start: a pid recycled after a crash or reboot does not pass, nor does a
// zombie (dead, and never reaped where init does not reap, e.g. a
// container's pid 1, once its parent is gone).
func Same(pid int, start uint64) bool {
	_, same := SameStat(pid, start)
	return same
}

// SameStat is Same, also returning what /proc/PID/stat says of the
// process when it was read (not when start is 0).
func SameStat(pid int, start uint64) (Stat, bool) {
	if start != 0 {
		if st, err := ReadStat(pid); err == nil {
			return st, st.StartTime == start && st.State != 'Z'
		}
		if _, err := os.Stat("/proc/self/stat"); err == nil {
			return Stat{}, false // procfs works and the pid is gone
		}
	}
	return Stat{}, Alive(pid)
}

// Alive reports whether a process pid exists, even one the caller may not
// signal.
func Alive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// Runs says whether process pid is there and neither stopped nor dead:
// the capture asks it of the cat or handover helper it reads.
func Runs(pid int) bool {
	st, err := ReadStat(pid)
	return err == nil && st.State != 'T' && st.State != 't' && st.State != 'Z'
}
