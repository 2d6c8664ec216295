package procs

import (
	"errors"
	"syscall"
)

// CommandEnded reports whether the command the wrapper started has exited
// (its leader gone, recycled or a zombie) while the wrapper, still alive,
// has not recorded it yet. An adopted task's leader is only the job that
// was in the foreground when it was promoted, so it does not count there.
func (t Task) CommandEnded(table Table) bool {
	if t.Adopted || t.CommandStart == 0 || !Same(t.WrapperPID, t.WrapperStart) {
		return false
	}
	st, err := table.Stat(t.PGID)
	return err != nil || st.StartTime != t.CommandStart || st.State == 'Z'
}

// Contains reports whether the caller runs inside the task: in the group a
// stop would signal, in the task's session (a shell inside the task), or
// anywhere under its wrapper (a process that left both: descendsFrom).
// A task still starting has neither on record yet (its wrapper writes them
// once the command runs), but its wrapper, the pane's session leader, is on
// record from the first write: a caller in the wrapper's session is the
// command just started, or one of its children.
// (Ids 0 say nothing: a process whose group or session leader lives outside
// its pid namespace sees 0.)
func (t Task) Contains(table Table, me Caller) bool {
	g := t.targetGroup(table)
	if g > 1 && me.Pgrp == g || t.Session > 1 && me.Session == t.Session || t.descendsFrom(table, me) {
		return true
	}
	if t.Session != 0 || t.WrapperPID <= 1 || me.Session <= 1 {
		return false
	}
	st, err := table.Stat(t.WrapperPID)
	return err == nil && st.StartTime == t.WrapperStart && st.State != 'Z' && st.Session == me.Session
}

// SignalTarget sends sig, then SIGCONT, to the group a stop signals
// (targetGroup). An adopted command line's foreground job can end between
// reading the terminal's foreground group and signalling it (a loop runs
// one short job after another) without the line having ended: the group is
// looked up again, a few times, before its going counts as the end.
func SignalTarget(p Processes, t Task, sig syscall.Signal) error {
	err := signalOwned(p, t, t.targetGroup(p), sig, syscall.SIGCONT)
	for try := 0; try < 3 && t.Adopted && errors.As(err, new(*GroupGoneError)); try++ {
		err = signalOwned(p, t, t.targetGroup(p), sig, syscall.SIGCONT)
	}
	return err
}

// targetGroup is the process group a stop signals: the command's own group,
// or for an adopted command whatever is in its shell's terminal foreground
// now, as for Ctrl+C: a job, or, between two jobs (a loop's test, a builtin),
// the shell itself, which runs the line. The job that was in the foreground
// at the promote may be long gone while the line runs on.
func (t Task) targetGroup(table Table) int {
	if t.Adopted {
		st, err := table.Stat(t.WrapperPID)
		if err == nil && st.StartTime == t.WrapperStart && st.State != 'Z' && st.TPGID > 1 {
			return st.TPGID
		}
	}
	return t.PGID
}
