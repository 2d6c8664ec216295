package procs_test

import (
	"slices"
	"syscall"
	"testing"

	"github.com/qtask/qtask/tasks/procs"
	"github.com/qtask/qtask/tasks/procs/procstest"
)

// movingForeground is a shell (pid 400) running a loop: the first look at
// its terminal's foreground finds a job that has already ended (group 600,
// gone), the next the loop's next job (group 700).
type movingForeground struct {
	procstest.Table
	looks int
	sent  []int
}

func (m *movingForeground) Stat(pid int) (procs.Stat, error) {
	st, err := m.Table.Stat(pid)
	if pid == 400 && err == nil {
		m.looks++
		st.TPGID = 600
		if m.looks > 1 {
			st.TPGID = 700
		}
	}
	return st, err
}

func (m *movingForeground) Self() procs.Caller                     { return procs.Caller{Pgrp: 1000, Session: 1000} }
func (m *movingForeground) SignalGroup(pgid int, _ syscall.Signal) { m.sent = append(m.sent, pgid) }
func (m *movingForeground) SignalProcess(pid int, _ uint64, _ syscall.Signal) {
	m.sent = append(m.sent, -pid)
}

// A stop of an adopted loop that meets a job just ended signals the next
// one: the end of one job is not the end of the line (CI once settled such
// a loop as lost).
func TestStopOfAnAdoptedLoopFindsTheNextJob(t *testing.T) {
	task := procs.Task{ID: "t1", PGID: 600, WrapperPID: 400, WrapperStart: 8000, Session: 400, CommandStart: 9000, Adopted: true}
	machine := &movingForeground{Table: procstest.Table{400: *proc(400, 400, 8000, ""), 701: *proc(700, 400, 9100, "")}}
	if err := procs.SignalTarget(machine, task, syscall.SIGINT); err != nil {
		t.Fatalf("SignalTarget: %v", err)
	}
	if !slices.Equal(machine.sent, []int{700, 700}) {
		t.Errorf("signalled groups %v, want the next job's group 700 (SIGINT, SIGCONT)", machine.sent)
	}
}
