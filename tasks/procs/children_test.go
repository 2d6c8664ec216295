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

// tableOnly hides OS's children lists: strays reads the whole table.
type tableOnly struct{ procs.Table }

// TestStraysWalkIsTheTables: on a real process tree, the strays found by
// walking down the children lists are those found in the whole table: a
// wrapper's children outside its group, their own children, not its
// children in its group, nor a process of the command's group.
func TestStraysWalkIsTheTables(t *testing.T) {
	requireProcfs(t)
	if _, ok := procs.ChildrenOf(os.Getpid()); !ok {
		t.Skip("this kernel has no /proc/PID/task/TID/children")
	}
	// sh plays the wrapper, leader of its own group: sleep 44 is its child
	// in its group (as its tmux calls are), sleep 45 the command's group's.
	wrapper := exec.Command("sh", "-c", `setsid sleep 41 & setsid sh -c 'sleep 42 & sleep 43 & wait' & sleep 44 & `+
		`set -m; sleep 45 & echo $! >&3; wait`)
	wrapper.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	wrapper.ExtraFiles = []*os.File{w}
	if err := wrapper.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	var command int
	var found []procs.Member
	defer func() {
		for _, m := range found {
			syscall.Kill(m.PID, syscall.SIGKILL)
		}
		syscall.Kill(-command, syscall.SIGKILL)
		syscall.Kill(-wrapper.Process.Pid, syscall.SIGKILL)
		wrapper.Wait()
	}()
	line := make([]byte, 32)
	n, _ := r.Read(line)
	command, _ = strconv.Atoi(strings.TrimSpace(string(line[:n])))
	task := procs.Task{ID: "walk", PGID: command, WrapperPID: wrapper.Process.Pid, WrapperStart: procs.StartTime(wrapper.Process.Pid)}
	pids := func(ms []procs.Member) []int {
		var out []int
		for _, m := range ms {
			out = append(out, m.PID)
		}
		slices.Sort(out)
		return out
	}
	var walked, table []int
	for range 200 { // until sleep 41, sh -c, sleep 42 and sleep 43 run, each as itself
		found = procs.Strays(procs.OS{}, procs.Self(), task, command)
		walked, table = pids(found), pids(procs.Strays(tableOnly{procs.OS{}}, procs.Self(), task, command))
		if len(walked) == 4 && slices.Equal(walked, table) && slices.IndexFunc(found, func(m procs.Member) bool { return m.State == 'Z' }) < 0 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if len(walked) != 4 || !slices.Equal(walked, table) {
		t.Fatalf("strays by the children lists %v, by the whole table %v; want the same 4 (sleep 41, sh -c, sleep 42, sleep 43)", walked, table)
	}
	if slices.Contains(walked, command) {
		t.Errorf("strays %v include %d, of the command's group", walked, command)
	}
}
