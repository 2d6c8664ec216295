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

// caller is the process about to send a signal: neither it nor its own
// group is ever a target, whatever a record says.
type caller struct{ pid, pgrp, session int }

func self() caller {
	sid, _ := unix.Getsid(0)
	return caller{pid: os.Getpid(), pgrp: syscall.Getpgrp(), session: sid}
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

// A task's processes are all of its command's descendants, whatever
// process group or session they moved to. Those that left the command's
// group (`setsid`, a `set -m` job, a daemon's double fork) are found by
// ancestry: the wrapper is the child subreaper of everything the command
// starts (Exec), so an orphan comes back to it rather than to pid 1, even
// one that scrubbed its environment. They are signalled one by one, each
// checked against its start time (signalProcess), and only while the
// wrapper is alive as itself.

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

// strays lists the live processes of task r outside process group pgid
// (the command's group, which is signalled as a whole): every descendant
// of the task's wrapper, except the wrapper's own children in its own
// process group (the tmux calls it makes), the caller, its group and
// pid 1. Nothing while the wrapper is not alive as itself (pid and start
// time as recorded), and nothing for an adopted command, whose pane's
// first process is the user's shell, not a wrapper. Callers signal strays
// only once the task's group has been proved its own (proveGroup): a
// record that fails that proof names no wrapper worth trusting.
func strays(procs procTable, me caller, r *record, pgid int) []member {
	if r.Adopted || r.WrapperPID <= 1 || r.WrapperStart == 0 {
		return nil
	}
	wrapper, err := procs.stat(r.WrapperPID)
	if err != nil || wrapper.startTime != r.WrapperStart || wrapper.state == 'Z' {
		return nil
	}
	all, err := groupMembers(procs, func(procStat) bool { return true })
	if err != nil {
		return nil
	}
	children := map[int][]member{}
	for _, m := range all {
		children[m.ppid] = append(children[m.ppid], m)
	}
	var out []member
	queue := []int{r.WrapperPID}
	for len(queue) > 0 {
		parent := queue[0]
		queue = queue[1:]
		for _, m := range children[parent] {
			if parent == r.WrapperPID && m.pgrp == wrapper.pgrp || m.pid <= 1 || m.pid == r.WrapperPID {
				continue
			}
			queue = append(queue, m.pid)
			if m.state != 'Z' && m.pgrp != pgid && m.pid != me.pid && m.pgrp != me.pgrp {
				out = append(out, m)
			}
		}
	}
	return out
}

// signalStrays sends sigs, in order, to each of task r's strays (those
// outside the group pgid). The caller has proved pgid the task's.
func signalStrays(procs processes, r *record, pgid int, sigs ...syscall.Signal) {
	for _, m := range strays(procs, procs.self(), r, pgid) {
		for _, sig := range sigs {
			procs.signalProcess(m.pid, m.startTime, sig)
		}
	}
}

// descendsFrom reports whether the caller runs under the task's live
// wrapper: a process of the task, whatever group or session it moved to
// (the wrapper is its subreaper, so even an orphan has it as an ancestor).
func (r *record) descendsFrom(procs procTable, me caller) bool {
	if r.WrapperPID <= 1 || r.WrapperStart == 0 || me.pid <= 1 {
		return false
	}
	// Parent links cannot loop; the bound only guards a misread table.
	pid := me.pid
	for range 1 << 16 {
		st, err := procs.stat(pid)
		if err != nil || st.ppid <= 1 {
			return false
		}
		if st.ppid == r.WrapperPID {
			w, err := procs.stat(st.ppid)
			return err == nil && w.startTime == r.WrapperStart && w.state != 'Z'
		}
		pid = st.ppid
	}
	return false
}

// carriers lists the live processes that carry task r's QTASK_TASK_ID and
// started no earlier than its command, in any group or session: what a
// lost task left that its wrapper, gone, can no longer find by ancestry.
// Never the caller, its group or pid 1, and nothing for a record without
// an id or a start time (a process of an older boot or an older task
// would pass).
func carriers(procs procTable, me caller, r *record) []member {
	since := r.CommandStart
	if since == 0 {
		since = r.WrapperStart
	}
	if r.ID == "" || since == 0 {
		return nil
	}
	members, err := groupMembers(procs, func(st procStat) bool {
		return st.startTime >= since && st.state != 'Z' && st.pgrp != me.pgrp
	})
	if err != nil {
		return nil
	}
	var out []member
	for _, m := range members {
		if m.pid > 1 && m.pid != me.pid && procs.taskID(m.pid) == r.ID {
			out = append(out, m)
		}
	}
	return out
}
