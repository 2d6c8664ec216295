package procs_test

import (
	"os/exec"
	"testing"
	"time"

	"github.com/qtask/qtask/tasks/procs"
)

// TestZombieIsNotTheSameProcess: a process that exited but was not reaped
// is dead; a wrapper left so must not keep its task running.
func TestZombieIsNotTheSameProcess(t *testing.T) {
	cmd := exec.Command("sleep", "0")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	pid := cmd.Process.Pid
	start := procs.StartTime(pid)
	if start == 0 {
		t.Skip("no procfs")
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		st, err := procs.ReadStat(pid)
		if err != nil {
			t.Fatal(err)
		}
		if st.State == 'Z' {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("sleep 0 (pid %d) did not exit: state %c", pid, st.State)
		}
		time.Sleep(5 * time.Millisecond)
	}
	if procs.Same(pid, start) {
		t.Errorf("a zombie (pid %d, exited, not reaped) counts as the live process", pid)
	}
}
