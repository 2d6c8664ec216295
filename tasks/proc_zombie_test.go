package tasks

import (
	"os/exec"
	"testing"
	"time"
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
	start := processStart(pid)
	if start == 0 {
		t.Skip("no procfs")
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		st, err := readProcStat(pid)
		if err != nil {
			t.Fatal(err)
		}
		if st.state == 'Z' {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("sleep 0 (pid %d) did not exit: state %c", pid, st.state)
		}
		time.Sleep(5 * time.Millisecond)
	}
	if sameProcess(pid, start) {
		t.Errorf("a zombie (pid %d, exited, not reaped) counts as the live process", pid)
	}
}
