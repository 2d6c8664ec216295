package procs

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// Before qtask sends a signal to a process group it proves the group is the
// task's, from the process table as it is now: a record is only a file, and
// the pid it names may have been recycled, planted, or be pid 1 (kill(-1)
// reaches every process the caller may signal). Every path that signals a
// task's processes — stop, reconcile, the wrapper — goes through
// ProveGroup, so there is one rule to read and to test.

// Task is what a task's record says of its processes: all the proof and
// the signals need of it.
type Task struct {
	ID string // the QTASK_TASK_ID its processes carry
	// PGID is the command's process group, led by the command the
	// wrapper started; CommandStart is that leader's start time.
	PGID         int
	CommandStart uint64
	WrapperPID   int
	WrapperStart uint64
	Session      int // the wrapper's session
	// Adopted: a command a person typed in a shell and promoted; its
	// "wrapper" is that shell, not qtask's.
	Adopted bool
}

// Table is the process table as the ownership proof reads it; the real
// one is OS, tests pass a fake.
type Table interface {
	Stat(pid int) (Stat, error)
	PIDs() ([]int, error)
	// TaskID is the QTASK_TASK_ID in pid's environment, "" if it has none
	// or it cannot be read.
	TaskID(pid int) string
}

// TaskIDEnv names the variable the wrapper gives the command, inherited by
// everything it starts unless a program scrubs its environment.
const TaskIDEnv = "QTASK_TASK_ID"

// Caller is the process about to send a signal: neither it nor its own
// group is ever a target, whatever a record says.
type Caller struct{ PID, Pgrp, Session int }

// Self is the calling process.
func Self() Caller {
	sid, _ := unix.Getsid(0)
	return Caller{PID: os.Getpid(), Pgrp: syscall.Getpgrp(), Session: sid}
}

// GroupGoneError says a task's process group has no process left: nothing
// to signal, and for a task whose wrapper lives, an end about to be
// recorded rather than a lost task.
type GroupGoneError struct{ PGID int }

func (e *GroupGoneError) Error() string {
	return fmt.Sprintf("its process group %d has no processes left", e.PGID)
}

// Member is one process of a group, as the proof needs it.
type Member struct {
	PID int
	Stat
}

// A task's processes are all of its command's descendants, whatever
// process group or session they moved to. Those that left the command's
// group (`setsid`, a `set -m` job, a daemon's double fork) are found by
// ancestry: the wrapper is the child subreaper of everything the command
// starts, so an orphan comes back to it rather than to pid 1, even one
// that scrubbed its environment. They are signalled one by one, each
// checked against its start time (Processes.SignalProcess), and only while
// the wrapper is alive as itself.

// ProveGroup returns nil if process group pgid belongs to task t, and
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
func ProveGroup(table Table, me Caller, t Task, pgid int) error {
	switch {
	case pgid <= 1:
		return fmt.Errorf("its record names process group %d, which is never a task's", pgid)
	case pgid == me.Pgrp:
		return fmt.Errorf("its record names process group %d, which is qtask's own", pgid)
	}
	if t.CommandStart != 0 && pgid == t.PGID {
		if st, err := table.Stat(pgid); err == nil && st.Pgrp == pgid && st.StartTime == t.CommandStart {
			return nil
		}
	}
	members, err := groupMembers(table, func(st Stat) bool { return st.Pgrp == pgid })
	if err != nil {
		return err
	}
	if len(members) == 0 {
		return &GroupGoneError{PGID: pgid}
	}
	wrapperLive := t.wrapperLeadsSession(table)
	for _, m := range members {
		inSession := t.Session > 1 && m.Session == t.Session
		switch {
		case t.ID != "" && table.TaskID(m.PID) == t.ID:
			return nil
		case inSession && wrapperLive:
			return nil
		case inSession && pgid == t.PGID && t.CommandStart != 0 && m.StartTime >= t.CommandStart:
			return nil
		}
	}
	return fmt.Errorf("process group %d is not the one qtask started for it "+
		"(its leader is another process and none of its processes carries the task's id)", pgid)
}

// wrapperLeadsSession reports whether the task's wrapper is still alive, as
// itself, in the session recorded for the task.
func (t Task) wrapperLeadsSession(table Table) bool {
	if t.Session <= 1 || t.WrapperStart == 0 {
		return false
	}
	st, err := table.Stat(t.WrapperPID)
	return err == nil && st.StartTime == t.WrapperStart && st.Session == t.Session
}

// groupMembers lists the processes whose stat matches.
func groupMembers(table Table, match func(Stat) bool) ([]Member, error) {
	pids, err := table.PIDs()
	if err != nil {
		return nil, err
	}
	var out []Member
	for _, pid := range pids {
		if st, err := table.Stat(pid); err == nil && match(st) {
			out = append(out, Member{PID: pid, Stat: st})
		}
	}
	return out, nil
}

// signalOwned sends sigs, in order, to process group pgid once it is
// proved to be task t's; otherwise it sends nothing and says why.
func signalOwned(p Processes, t Task, pgid int, sigs ...syscall.Signal) error {
	if err := ProveGroup(p, p.Self(), t, pgid); err != nil {
		return err
	}
	for _, sig := range sigs {
		p.SignalGroup(pgid, sig)
	}
	return nil
}

// leftoverGroups lists the process groups of a task whose wrapper is gone:
// the command's own group and every other group in the wrapper's session
// (jobs a shell inside the task started), for killing those proved the
// task's.
func leftoverGroups(table Table, t Task) []int {
	members, err := groupMembers(table, func(st Stat) bool {
		return t.PGID > 1 && st.Pgrp == t.PGID || t.Session > 1 && st.Session == t.Session
	})
	if err != nil {
		return nil
	}
	seen := map[int]bool{}
	var groups []int
	for _, m := range members {
		if !seen[m.Pgrp] {
			seen[m.Pgrp] = true
			groups = append(groups, m.Pgrp)
		}
	}
	return groups
}

// strays lists the live processes of task t outside process group pgid
// (the command's group, which is signalled as a whole): every descendant
// of the task's wrapper, except the wrapper's own children in its own
// process group (the tmux calls it makes), the caller, its group and
// pid 1. Nothing while the wrapper is not alive as itself (pid and start
// time as recorded), and nothing for an adopted command, whose pane's
// first process is the user's shell, not a wrapper. Callers signal strays
// only once the task's group has been proved its own (ProveGroup): a
// record that fails that proof names no wrapper worth trusting.
func strays(table Table, me Caller, t Task, pgid int) []Member {
	if t.Adopted || t.WrapperPID <= 1 || t.WrapperStart == 0 {
		return nil
	}
	wrapper, err := table.Stat(t.WrapperPID)
	if err != nil || wrapper.StartTime != t.WrapperStart || wrapper.State == 'Z' {
		return nil
	}
	// The whole table, not the wrapper's children lists (ownChildren):
	// the kernel builds those without a lock and may leave a live child
	// out while others exit, which is when strays are looked for.
	all, err := groupMembers(table, func(Stat) bool { return true })
	if err != nil {
		return nil
	}
	children := map[int][]Member{}
	for _, m := range all {
		children[m.PPID] = append(children[m.PPID], m)
	}
	var out []Member
	queue := []int{t.WrapperPID}
	for len(queue) > 0 {
		parent := queue[0]
		queue = queue[1:]
		for _, m := range children[parent] {
			if parent == t.WrapperPID && m.Pgrp == wrapper.Pgrp || m.PID <= 1 || m.PID == t.WrapperPID {
				continue
			}
			queue = append(queue, m.PID)
			if m.State != 'Z' && m.Pgrp != pgid && m.PID != me.PID && m.Pgrp != me.Pgrp {
				out = append(out, m)
			}
		}
	}
	return out
}

// SignalStrays sends sigs, in order, to each of task t's strays (its live
// processes outside the group pgid, found by ancestry from its wrapper).
// The caller has proved pgid the task's.
func SignalStrays(p Processes, t Task, pgid int, sigs ...syscall.Signal) {
	for _, m := range strays(p, p.Self(), t, pgid) {
		for _, sig := range sigs {
			p.SignalProcess(m.PID, m.StartTime, sig)
		}
	}
}

// descendsFrom reports whether the caller runs under the task's live
// wrapper: a process of the task, whatever group or session it moved to
// (the wrapper is its subreaper, so even an orphan has it as an ancestor).
func (t Task) descendsFrom(table Table, me Caller) bool {
	if t.WrapperPID <= 1 || t.WrapperStart == 0 || me.PID <= 1 {
		return false
	}
	// Parent links cannot loop; the bound only guards a misread table.
	pid := me.PID
	for range 1 << 16 {
		st, err := table.Stat(pid)
		if err != nil || st.PPID <= 1 {
			return false
		}
		if st.PPID == t.WrapperPID {
			w, err := table.Stat(st.PPID)
			return err == nil && w.StartTime == t.WrapperStart && w.State != 'Z'
		}
		pid = st.PPID
	}
	return false
}

// carriers lists the live processes that carry task t's QTASK_TASK_ID and
// started no earlier than its command, in any group or session: what a
// lost task left that its wrapper, gone, can no longer find by ancestry.
// Never the caller, its group or pid 1, and nothing for a record without
// an id or a start time (a process of an older boot or an older task
// would pass).
func carriers(table Table, me Caller, t Task) []Member {
	since := t.CommandStart
	if since == 0 {
		since = t.WrapperStart
	}
	if t.ID == "" || since == 0 {
		return nil
	}
	members, err := groupMembers(table, func(st Stat) bool {
		return st.StartTime >= since && st.State != 'Z' && st.Pgrp != me.Pgrp
	})
	if err != nil {
		return nil
	}
	var out []Member
	for _, m := range members {
		if m.PID > 1 && m.PID != me.PID && table.TaskID(m.PID) == t.ID {
			out = append(out, m)
		}
	}
	return out
}

// KillOrphans kills what is left of a lost task: its command's process
// group and the other groups in its wrapper's session, each only once
// proved the task's (see ProveGroup), so a recycled pid is never hit; and,
// one by one, the processes that left both (`setsid`) but carry the task's
// QTASK_TASK_ID (carriers): with the wrapper gone, ancestry no longer
// leads to them.
func KillOrphans(p Processes, t Task) {
	for _, pgid := range leftoverGroups(p, t) {
		signalOwned(p, t, pgid, syscall.SIGKILL)
	}
	for _, m := range carriers(p, p.Self(), t) {
		p.SignalProcess(m.PID, m.StartTime, syscall.SIGKILL)
	}
}

// Processes is what qtask asks of the OS about a task's processes: the
// process table the ownership proof reads, who is asking (whose own group
// and session are never a target), and signals to a process group or to
// one process. The real one is OS; tests pass a fake so that a stop is
// tested without signalling anything, and without depending on where the
// test runs: in a pid namespace whose session leader is outside (as in
// CI), getsid(2) answers 0.
type Processes interface {
	Table
	Self() Caller
	SignalGroup(pgid int, sig syscall.Signal)
	// SignalProcess signals pid only while it is still the process that
	// started at start: never a recycled pid.
	SignalProcess(pid int, start uint64, sig syscall.Signal)
}

// OS is the machine: /proc, this process and kill(2).
type OS struct{}

// Stat reads /proc/PID/stat.
func (OS) Stat(pid int) (Stat, error) { return ReadStat(pid) }

// PIDs lists the processes in /proc.
func (OS) PIDs() ([]int, error) {
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

// ownChildren is the process table as far as the calling process's own
// children (see childrenOf): a few small reads where all of /proc is a
// read of every process's stat. A kernel without the children files gets
// all of /proc, which the caller filters by parent as it would have. The
// kernel reads those files without a lock, and a child may be left out
// while others exit: fit for ReapOrphans, whose next look (at the next
// SIGCHLD, or the wrapper's own exit) collects what one missed, not for
// finding what to signal (strays).
type ownChildren struct{ OS }

func (ownChildren) PIDs() ([]int, error) {
	if kids, ok := childrenOf(os.Getpid()); ok {
		return kids, nil
	}
	return OS{}.PIDs()
}

// childrenOf lists pid's children from /proc/PID/task/*/children: each
// thread lists those it forked, or was given as a subreaper. ok is false
// when the kernel has no such files (built without CONFIG_PROC_CHILDREN)
// or pid is gone.
func childrenOf(pid int) (kids []int, ok bool) {
	dir := "/proc/" + strconv.Itoa(pid) + "/task"
	// The main thread's file exists for as long as the process does.
	if _, err := os.Lstat(dir + "/" + strconv.Itoa(pid) + "/children"); err != nil {
		return nil, false
	}
	threads, err := os.ReadDir(dir)
	if err != nil {
		return nil, false
	}
	for _, t := range threads {
		// A thread that has ended is skipped: its children went to another.
		list, _ := ReadFile(pid, "task/"+t.Name()+"/children")
		for f := range strings.FieldsSeq(string(list)) {
			if kid, err := strconv.Atoi(f); err == nil {
				kids = append(kids, kid)
			}
		}
	}
	return kids, true
}

// TaskID reads QTASK_TASK_ID from /proc/PID/environ.
func (OS) TaskID(pid int) string {
	env, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "environ"))
	if err != nil {
		return ""
	}
	for _, kv := range bytes.Split(env, []byte{0}) {
		if id, ok := bytes.CutPrefix(kv, []byte(TaskIDEnv+"=")); ok {
			return string(id)
		}
	}
	return ""
}

// Self is this process.
func (OS) Self() Caller { return Self() }

// SignalGroup is kill(-pgid, sig).
func (OS) SignalGroup(pgid int, sig syscall.Signal) { syscall.Kill(-pgid, sig) }

// SignalProcess checks pid's start time through a pidfd opened first, so
// that the process checked is the one signalled even if it exits and its
// pid is reused in between. Without pidfds (Linux before 5.3) a plain
// kill(2) follows the check.
func (OS) SignalProcess(pid int, start uint64, sig syscall.Signal) {
	if pid <= 1 {
		return
	}
	fd, err := unix.PidfdOpen(pid, 0)
	switch {
	case err == nil:
		defer unix.Close(fd)
		if StartTime(pid) == start {
			unix.PidfdSendSignal(fd, sig, nil, 0)
		}
	case errors.Is(err, unix.ENOSYS):
		if StartTime(pid) == start {
			syscall.Kill(pid, sig)
		}
	}
}
