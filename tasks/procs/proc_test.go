package procs_test

import (
	"os"
	"os/exec"
	"syscall"
	"testing"

	"github.com/qtask/qtask/tasks/procs"
)

// statTail is a /proc/PID/stat line after the command name, from the state
// field on: state S, ppid 1, pgrp 1234, session 1234, tty 34816, tpgid 5678, …,
// starttime 98765, then the rest of a real line.
const statTail = "S 1 1234 1234 34816 5678 4194560 1133 0 0 0 5 2 0 0 20 0 1 0 98765 " +
	"10113024 892 18446744073709551615 94420000000000 94420000100000 140730000000000 0 0 0 0 0 0 0 0 17 3 0 0 0 0 0 " +
	"94420000200000 94420000300000 94420001000000 140730000001000 140730000001100 140730000001100 140730000003000 0\n"

func TestParseProcStat(t *testing.T) {
	cases := []struct {
		name  string
		line  string
		want  procs.Stat
		isErr bool
	}{
		{name: "plain name", line: "1234 (bash) " + statTail, want: procs.Stat{Comm: "bash", State: 'S', PPID: 1, Pgrp: 1234, Session: 1234, TPGID: 5678, StartTime: 98765}},
		{name: "name with spaces and parentheses", line: "1234 (my (weird) cmd) " + statTail, want: procs.Stat{Comm: "my (weird) cmd", State: 'S', PPID: 1, Pgrp: 1234, Session: 1234, TPGID: 5678, StartTime: 98765}},
		{name: "name that looks like stat fields", line: "1234 (x) R 7 7 7 7 7 7) " + statTail, want: procs.Stat{Comm: "x) R 7 7 7 7 7 7", State: 'S', PPID: 1, Pgrp: 1234, Session: 1234, TPGID: 5678, StartTime: 98765}},
		{name: "name with a newline", line: "1234 (a\nb) " + statTail, want: procs.Stat{Comm: "a\nb", State: 'S', PPID: 1, Pgrp: 1234, Session: 1234, TPGID: 5678, StartTime: 98765}},
		{name: "empty name", line: "1234 () " + statTail, want: procs.Stat{State: 'S', PPID: 1, Pgrp: 1234, Session: 1234, TPGID: 5678, StartTime: 98765}},
		{name: "no controlling terminal", line: "1 (init) S 0 1 1 0 -1 4194560 1 0 0 0 0 0 0 0 20 0 1 0 5 0 0\n", want: procs.Stat{Comm: "init", State: 'S', PPID: 0, Pgrp: 1, Session: 1, TPGID: -1, StartTime: 5}},
		{name: "just the fields needed", line: "9 (c) S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19", want: procs.Stat{Comm: "c", State: 'S', PPID: 1, Pgrp: 2, Session: 3, TPGID: 5, StartTime: 19}},
		{name: "largest start time", line: "9 (c) S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 18446744073709551615", want: procs.Stat{Comm: "c", State: 'S', PPID: 1, Pgrp: 2, Session: 3, TPGID: 5, StartTime: 18446744073709551615}},

		{name: "empty", line: "", isErr: true},
		{name: "no command name", line: "1234 bash " + statTail, isErr: true},
		{name: "cut after the name", line: "1234 (bash)", isErr: true},
		{name: "cut before the start time", line: "9 (c) S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18", isErr: true},
		{name: "fields before the name only", line: "1234 S 1 1234 1234 34816 5678 4194560 1133 0 0 0 5 2 0 0 20 0 1 0 98765 (x)", isErr: true},
		{name: "non-numeric ppid", line: "9 (c) S x 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19", isErr: true},
		{name: "non-numeric pgrp", line: "9 (c) S 1 x 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19", isErr: true},
		{name: "non-numeric session", line: "9 (c) S 1 2 x 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19", isErr: true},
		{name: "non-numeric tpgid", line: "9 (c) S 1 2 3 4 x 6 7 8 9 10 11 12 13 14 15 16 17 18 19", isErr: true},
		{name: "negative start time", line: "9 (c) S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 -19", isErr: true},
		{name: "start time out of range", line: "9 (c) S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 18446744073709551616", isErr: true},
	}
	for _, tc := range cases {
		got, err := procs.ParseStat(tc.line)
		switch {
		case tc.isErr && err == nil:
			t.Errorf("%s: parseStat(%q) = %+v, nil; want an error: qtask would act on a process it misread", tc.name, tc.line, got)
		case !tc.isErr && err != nil:
			t.Errorf("%s: parseStat(%q): %v: qtask could not tell what runs in a pane", tc.name, tc.line, err)
		case !tc.isErr && got != tc.want:
			t.Errorf("%s: parseStat(%q) = %+v, want %+v: promote or liveness checks would look at the wrong process", tc.name, tc.line, got, tc.want)
		}
	}
}

func requireProcfs(t *testing.T) {
	t.Helper()
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no procfs")
	}
}

func TestReadProcStatSelf(t *testing.T) {
	requireProcfs(t)
	st, err := procs.ReadStat(os.Getpid())
	if err != nil {
		t.Fatalf("ReadStat(self): %v", err)
	}
	if st.Pgrp != syscall.Getpgrp() {
		t.Errorf("ReadStat(self).pgrp = %d, want %d (getpgrp)", st.Pgrp, syscall.Getpgrp())
	}
	if st.StartTime == 0 {
		t.Errorf("ReadStat(self).startTime = 0: a recycled pid would pass for this process")
	}
	if got := procs.StartTime(os.Getpid()); got != st.StartTime {
		t.Errorf("StartTime(self) = %d, want %d", got, st.StartTime)
	}
	if _, err := procs.ReadStat(1 << 30); err == nil { // above any pid_max
		t.Errorf("ReadStat of a pid that cannot exist succeeded")
	}
}

// TestProcessIdentity follows a child in its own process group from start
// to exit: its group, its start time, and whether it still counts as the
// same process.
func TestProcessIdentity(t *testing.T) {
	requireProcfs(t)
	pid, stop := startGroupLeader(t, nil)
	st, err := procs.ReadStat(pid)
	if err != nil {
		stop()
		t.Fatalf("ReadStat(child): %v", err)
	}
	if st.Pgrp != pid {
		t.Errorf("child leading its own process group: pgrp = %d, want %d", st.Pgrp, pid)
	}
	if !procs.Same(pid, st.StartTime) {
		t.Errorf("a running process does not count as itself: a live task would be reported lost")
	}
	if procs.Same(pid, st.StartTime+1) {
		t.Errorf("a process with another start time counts as the same: a recycled pid would pass for a task's process")
	}
	if err := stop(); err != nil {
		t.Fatalf("cat: %v", err)
	}
	if procs.Same(pid, st.StartTime) {
		t.Errorf("an exited, reaped process still counts as running: its task would never settle")
	}
}

// startGroupLeader starts a child leading its own process group, with env
// (nil: the test's), that runs until stop, which returns its exit error.
func startGroupLeader(t *testing.T, env []string) (pid int, stop func() error) {
	t.Helper()
	cmd := exec.Command("cat") // runs until its stdin closes
	cmd.Env = env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd.Process.Pid, func() error {
		stdin.Close()
		return cmd.Wait()
	}
}
