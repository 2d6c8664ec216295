package procs_test

import (
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/qtask/qtask/tasks/procs"
)

// TestOwnChildrenAreTheParentsInProc: the wrapper's short list of its
// children (ReapOrphans) names exactly the processes all of /proc gives it
// as their parent: children forked from different threads, a dead one not
// yet reaped, and an orphan that came back to it as their subreaper.
func TestOwnChildrenAreTheParentsInProc(t *testing.T) {
	requireProcfs(t)
	if _, ok := procs.ChildrenOf(os.Getpid()); !ok {
		t.Skip("this kernel has no /proc/PID/task/TID/children")
	}
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		t.Fatal(err)
	}
	defer unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0)
	var mine []int
	reap := func(pid int) { syscall.Kill(pid, syscall.SIGKILL); syscall.Wait4(pid, nil, 0, nil) }
	// Each from a thread of its own: a thread lists the children it forked.
	for range 4 {
		done := make(chan int)
		go func() {
			runtime.LockOSThread() // the thread ends with the goroutine, its child passed on
			cmd := exec.Command("sleep", "30")
			if err := cmd.Start(); err != nil {
				t.Error(err)
			}
			done <- cmd.Process.Pid
		}()
		pid := <-done
		defer reap(pid)
		mine = append(mine, pid)
	}
	dead := exec.Command("true")
	if err := dead.Start(); err != nil {
		t.Fatal(err)
	}
	defer dead.Wait()
	mine = append(mine, dead.Process.Pid)
	out, err := exec.Command("sh", "-c", "sleep 30 </dev/null >/dev/null 2>&1 & echo $!").Output()
	if err != nil {
		t.Fatal(err)
	}
	orphan, _ := strconv.Atoi(strings.TrimSpace(string(out)))
	defer reap(orphan)
	mine = append(mine, orphan)

	parented := func(table procs.Table) []int {
		members, err := procs.GroupMembers(table, func(st procs.Stat) bool { return st.PPID == os.Getpid() })
		if err != nil {
			t.Fatal(err)
		}
		var pids []int
		for _, m := range members {
			pids = append(pids, m.PID)
		}
		slices.Sort(pids)
		return pids
	}
	var short, all []int
	for range 100 { // until the orphan has come back and `true` has died
		short, all = parented(procs.OwnChildren{}), parented(procs.OS{})
		if st, err := procs.ReadStat(dead.Process.Pid); err == nil && st.State == 'Z' && slices.Contains(all, orphan) && slices.Equal(short, all) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if !slices.Equal(short, all) {
		t.Fatalf("own children %v, but /proc names %v as this process's", short, all)
	}
	for _, pid := range mine {
		if !slices.Contains(short, pid) {
			t.Errorf("own children %v lack %d (children started: %v; the last is the orphan, the one before the dead one)", short, pid, mine)
		}
	}
}
