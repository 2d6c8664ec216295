package tasks

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

// Before qtask sends a signal to a process group it proves the group is the
// task's, from the process table as it is now: a record is only a file, and
// the pid it names may have been recycled, planted, or be pid 1 (kill(-1)
// reaches every process the caller may signal). Every path that signals a
// task's processes — stop, reconcile, the wrapper — goes through
// proveGroup, so there is one rule to read and to test.

// procTable is the process table as the ownership proof reads it; the real
// one is procfs, tests pass a fake.
type procTable interface {
	stat(pid int) (procStat, error)
	pids() ([]int, error)
	// taskID is the QTASK_TASK_ID in pid's environment, "" if it has none
	// or it cannot be read.
	taskID(pid int) string
}

// procfs is the machine's process table.
type procfs struct{}

func (procfs) stat(pid int) (procStat, error) { return readProcStat(pid) }

func (procfs) pids() ([]int, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, fmt.Errorf("list processes: %w", err)
	}
	pids := make([]int, 0, len(entries))
	for _, e := range entries {
		if pid, err := strconv.Atoi(e.Name()); err == nil {
			pids = append(pids, pid)
		}
	}
	return pids, nil
}

func (procfs) taskID(pid int) string {
	env, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "environ"))
	if err != nil {
		return ""
	}
	for _, kv := range bytes.Split(env, []byte{0}) {
		if id, ok := bytes.CutPrefix(kv, []byte(taskIDEnv+"=")); ok {
			return string(id)
		}
	}
	return ""
}

// taskIDEnv names the variable the wrapper gives the command, inherited by
// everything it starts unless a program scrubs its environment.
const taskIDEnv = "QTASK_TASK_ID"

// caller is the process about to send a signal: its own group is never a
// target, whatever a record says.
type caller struct{ pgrp, session int }

func self() caller {
	sid, _ := unix.Getsid(0)
	return caller{pgrp: syscall.Getpgrp(), session: sid}
}

// groupGoneError says a task's process group has no process left: nothing
// to signal, and for a task whose wrapper lives, an end about to be
// recorded rather than a lost task.
type groupGoneError struct{ pgid int }

func (e *groupGoneError) Error() string {
	return fmt.Sprintf("its process group %d has no processes left", e.pgid)
}

// member is one process of a group, as the proof needs it.
type member struct {
	pid int
	procStat
}

// proveGroup returns nil if process group pgid belongs to task r, and
// otherwise says why not. A group is the task's when
//   - its leader is still the command the wrapper started (pid and start
//     time as recorded: a recycled pid has another start time), or
//   - one of its processes carries the task's QTASK_TASK_ID, or
//   - one of its processes is in the wrapper's session while the wrapper
//     still lives (a pane's session holds nothing but what its first
//     process started), or, the wrapper gone, the group is the command's
//     own and in that session, started no earlier than the command (both
//     numbers would have to be recycled together for a stranger to pass).
//
// Never pgid <= 1 (kill(-1) is every process) nor the caller's own group.
func proveGroup(procs procTable, me caller, r *record, pgid int) error {
	switch {
	case pgid <= 1:
		return fmt.Errorf("its record names process group %d, which is never a task's", pgid)
	case pgid == me.pgrp:
		return fmt.Errorf("its record names process group %d, which is qtask's own", pgid)
	}
	if r.CommandStart != 0 && pgid == r.PID {
		if st, err := procs.stat(pgid); err == nil && st.pgrp == pgid && st.startTime == r.CommandStart {
			return nil
		}
	}
	members, err := groupMembers(procs, func(st procStat) bool { return st.pgrp == pgid })
	if err != nil {
		return err
	}
	if len(members) == 0 {
		return &groupGoneError{pgid: pgid}
	}
	wrapperLive := r.wrapperLeadsSession(procs)
	for _, m := range members {
		inSession := r.Session > 1 && m.session == r.Session
		switch {
		case r.ID != "" && procs.taskID(m.pid) == r.ID:
			return nil
		case inSession && wrapperLive:
			return nil
		case inSession && pgid == r.PID && r.CommandStart != 0 && m.startTime >= r.CommandStart:
			return nil
		}
	}
	return fmt.Errorf("process group %d is not the one qtask started for it "+
		"(its leader is another process and none of its processes carries the task's id)", pgid)
}

// wrapperLeadsSession reports whether the task's wrapper is still alive, as
// itself, in the session recorded for the task.
func (r *record) wrapperLeadsSession(procs procTable) bool {
	if r.Session <= 1 || r.WrapperStart == 0 {
		return false
	}
	st, err := procs.stat(r.WrapperPID)
	return err == nil && st.startTime == r.WrapperStart && st.session == r.Session
}

// groupMembers lists the processes whose stat matches.
func groupMembers(procs procTable, match func(procStat) bool) ([]member, error) {
	pids, err := procs.pids()
	if err != nil {
		return nil, err
	}
	var out []member
	for _, pid := range pids {
		if st, err := procs.stat(pid); err == nil && match(st) {
			out = append(out, member{pid: pid, procStat: st})
		}
	}
	return out, nil
}

// signalOwned sends sigs, in order, to process group pgid once it is
// proved to be task r's; otherwise it sends nothing and says why.
func signalOwned(procs processes, r *record, pgid int, sigs ...syscall.Signal) error {
	if err := proveGroup(procs, procs.self(), r, pgid); err != nil {
		return err
	}
	for _, sig := range sigs {
		procs.signalGroup(pgid, sig)
	}
	return nil
}

// leftoverGroups lists the process groups of a task whose wrapper is gone:
// the command's own group and every other group in the wrapper's session
// (jobs a shell inside the task started), for killing those proved the
// task's.
func leftoverGroups(procs procTable, r *record) []int {
	members, err := groupMembers(procs, func(st procStat) bool {
		return r.PID > 1 && st.pgrp == r.PID || r.Session > 1 && st.session == r.Session
	})
	if err != nil {
		return nil
	}
	seen := map[int]bool{}
	var groups []int
	for _, m := range members {
		if !seen[m.pgrp] {
			seen[m.pgrp] = true
			groups = append(groups, m.pgrp)
		}
	}
	return groups
}
