package tasks

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// procStat is the part of /proc/PID/stat qtask uses.
type procStat struct {
	comm      string // the process's name (its main thread's, as /proc/PID/comm)
	state     byte   // 'R', 'S', … 'Z' for a zombie: exited, not yet reaped
	ppid      int    // the parent: the task's wrapper, for an orphan of the task (Exec)
	pgrp      int
	session   int
	tpgid     int    // foreground process group of the process's terminal
	startTime uint64 // clock ticks since boot: with the pid, a process's identity
}

// readProcStat parses /proc/PID/stat. The command name (field 2) may hold
// spaces and parentheses, so fields are counted from the last ')'.
func readProcStat(pid int) (procStat, error) {
	data, err := readProcFile(pid, "stat")
	if err != nil {
		return procStat{}, err
	}
	return parseProcStat(string(data))
}

// readProcFile reads /proc/PID/NAME, a small file, with plain system calls:
// `ls` reads two for each running task, and os.ReadFile makes twice the
// calls (a stat, a poller registration the kernel refuses, a second read).
func readProcFile(pid int, name string) ([]byte, error) {
	path := "/proc/" + strconv.Itoa(pid) + "/" + name
	fd, err := openNoEINTR(path, syscall.O_RDONLY|syscall.O_CLOEXEC)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	defer syscall.Close(fd)
	return readToEnd(fd, path, make([]byte, 0, 512))
}

func parseProcStat(s string) (procStat, error) {
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return procStat{}, errors.New("malformed /proc stat")
	}
	// After ')': state(3) ppid(4) pgrp(5) session(6) tty_nr(7) tpgid(8) … starttime(22).
	f := strings.Fields(s[i+1:])
	if len(f) < 20 {
		return procStat{}, errors.New("short /proc stat")
	}
	st := procStat{state: f[0][0]}
	if open := strings.IndexByte(s, '('); open >= 0 && open < i {
		st.comm = s[open+1 : i]
	}
	var err error
	if st.ppid, err = strconv.Atoi(f[1]); err != nil {
		return procStat{}, fmt.Errorf("/proc stat ppid: %w", err)
	}
	if st.pgrp, err = strconv.Atoi(f[2]); err != nil {
		return procStat{}, fmt.Errorf("/proc stat pgrp: %w", err)
	}
	if st.session, err = strconv.Atoi(f[3]); err != nil {
		return procStat{}, fmt.Errorf("/proc stat session: %w", err)
	}
	if st.tpgid, err = strconv.Atoi(f[5]); err != nil {
		return procStat{}, fmt.Errorf("/proc stat tpgid: %w", err)
	}
	if st.startTime, err = strconv.ParseUint(f[19], 10, 64); err != nil {
		return procStat{}, fmt.Errorf("/proc stat starttime: %w", err)
	}
	return st, nil
}

// processStart is a process's start time, 0 when it cannot be read (no
// procfs); identity checks then fall back to the pid alone.
func processStart(pid int) uint64 {
	st, err := readProcStat(pid)
	if err != nil {
		return 0
	}
	return st.startTime
}

// sameProcess tells whether pid still is the live process that started at
// start: a pid recycled after a crash or reboot does not pass, nor does a
// zombie (dead, and never reaped where init does not reap, e.g. a
// container's pid 1, once its parent is gone).
func sameProcess(pid int, start uint64) bool {
	_, same := sameProcessStat(pid, start)
	return same
}

// sameProcessStat is sameProcess, also returning what /proc/PID/stat says
// of the process when it was read (not when start is 0).
func sameProcessStat(pid int, start uint64) (procStat, bool) {
	if start != 0 {
		if st, err := readProcStat(pid); err == nil {
			return st, st.startTime == start && st.state != 'Z'
		}
		if _, err := os.Stat("/proc/self/stat"); err == nil {
			return procStat{}, false // procfs works and the pid is gone
		}
	}
	return procStat{}, processAlive(pid)
}

func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// processRuns says whether process pid is there and neither stopped nor
// dead: the capture asks it of the cat or handover helper it reads.
func processRuns(pid int) bool {
	st, err := readProcStat(pid)
	return err == nil && st.state != 'T' && st.state != 't' && st.state != 'Z'
}
