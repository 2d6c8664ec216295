// Package procstest is a fake process table for the tests of what proves
// and signals a task's processes (package procs, and the stops of package
// tasks): the tests mean the same wherever they run, and no real process
// is ever looked at or signalled. It is a package, not a _test.go file,
// because the tests of both packages share this one fake: a _test.go file
// is compiled only into its own package's tests, and a copy in each would
// drift apart.
package procstest

import (
	"io/fs"
	"sort"

	"github.com/qtask/qtask/tasks/procs"
)

// Table is a process table: pid → what /proc would say of it.
type Table map[int]Process

// Process is one process of a Table.
type Process struct {
	Stat   procs.Stat
	TaskID string // the QTASK_TASK_ID in its environment
}

// Running is a live (sleeping) process in group pgrp and session session,
// started at start, carrying taskID ("" for none).
func Running(pgrp, session int, start uint64, taskID string) *Process {
	return &Process{Stat: procs.Stat{State: 'S', Pgrp: pgrp, Session: session, StartTime: start}, TaskID: taskID}
}

// Under makes p a child of ppid, and returns it.
func (p *Process) Under(ppid int) *Process {
	p.Stat.PPID = ppid
	return p
}

// Stat is the process's stat, fs.ErrNotExist for a pid not in t.
func (t Table) Stat(pid int) (procs.Stat, error) {
	p, ok := t[pid]
	if !ok {
		return procs.Stat{}, fs.ErrNotExist
	}
	return p.Stat, nil
}

// PIDs lists t's pids in order.
func (t Table) PIDs() ([]int, error) {
	var pids []int
	for pid := range t {
		pids = append(pids, pid)
	}
	sort.Ints(pids)
	return pids, nil
}

// TaskID is the QTASK_TASK_ID of pid, "" if none.
func (t Table) TaskID(pid int) string { return t[pid].TaskID }

// With returns a copy of t with pid replaced (p set) or removed (p nil).
func (t Table) With(pid int, p *Process) Table {
	u := Table{}
	for k, v := range t {
		u[k] = v
	}
	if p == nil {
		delete(u, pid)
	} else {
		u[pid] = *p
	}
	return u
}
