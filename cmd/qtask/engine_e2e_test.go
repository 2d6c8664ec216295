package main

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/qtask/qtask/tasks"
)

func TestRunBackgroundLifecycle(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	out := h.mustQtask("run", "--bg", "--", "echo hello from qtask")
	if !strings.Contains(out, "Started task ") || !strings.Contains(out, "qtask stop ") {
		t.Fatalf("run --bg should print the id and how to stop it, got:\n%s", out)
	}
	id := strings.Fields(strings.TrimPrefix(out, "Started task "))[0]
	id = strings.TrimSuffix(id, ":")
	task := h.wait(id)
	if task.Status != tasks.StatusCompleted || task.ExitCode == nil || *task.ExitCode != 0 {
		t.Fatalf("want completed with exit 0, got %+v", task)
	}
	if got := h.output(id); got != "hello from qtask\n" {
		t.Fatalf("output file = %q, want %q", got, "hello from qtask\n")
	}
	ls := h.mustQtask("ls", "--wide")
	for _, want := range []string{"ID", "STATUS", "RUNTIME", "COMMAND", "OUTPUT", id, "completed (exit 0)", "echo hello from qtask"} {
		if !strings.Contains(ls, want) {
			t.Errorf("ls output lacks %q:\n%s", want, ls)
		}
	}
}

func TestLsEmpty(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	if got := h.mustQtask("ls"); got != "No background tasks.\n" {
		t.Fatalf("ls on a fresh state dir = %q", got)
	}
	if got := strings.TrimSpace(h.mustQtask("ls", "--json")); got != "[]" {
		t.Fatalf("ls --json on a fresh state dir = %q, want []", got)
	}
}

func TestExitStatuses(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	cases := []struct {
		command    string
		status     tasks.Status
		code       int
		errContain string
	}{
		{"exit 0", tasks.StatusCompleted, 0, ""},
		{"exit 3", tasks.StatusFailed, 3, "exited with code 3"},
		{"kill -9 $$", tasks.StatusFailed, 137, "terminated by signal 9"},
		{"qtask_no_such_command_xyz", tasks.StatusFailed, 127, "command not found"},
	}
	for _, c := range cases {
		task := h.wait(h.start(c.command).ID)
		if task.Status != c.status || task.ExitCode == nil || *task.ExitCode != c.code || !strings.Contains(task.Error, c.errContain) {
			t.Errorf("%q: got status=%s exit=%v error=%q; want %s exit %d error containing %q",
				c.command, task.Status, deref(task.ExitCode), task.Error, c.status, c.code, c.errContain)
		}
		if c.status == tasks.StatusFailed && task.EndedAt == nil {
			t.Errorf("%q: ended_at is null on a failed task", c.command)
		}
	}
}

func deref(p *int) any {
	if p == nil {
		return nil
	}
	return *p
}

func TestWaitPassesExitCode(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	a := h.start("sleep 0.3; exit 7")
	if r := h.qtask("wait", a.ID); r.code != 7 {
		t.Fatalf("wait on a task that exits 7 exited %d (stderr %q)", r.code, r.stderr)
	}
	b := h.start("true")
	c := h.start("false")
	if r := h.qtask("wait", b.ID, c.ID); r.code != 1 {
		t.Fatalf("wait on completed+failed exited %d, want 1", r.code)
	}
	d := h.start("true")
	if r := h.qtask("wait", b.ID, d.ID); r.code != 0 {
		t.Fatalf("wait on two completed tasks exited %d, want 0", r.code)
	}
	slow := h.start("sleep 30")
	r := h.qtask("wait", "--timeout", "300ms", slow.ID)
	if r.code != exitTimeout || !strings.Contains(r.stderr, "timed out") {
		t.Fatalf("wait --timeout on a running task: exit %d stderr %q, want 124 and 'timed out'", r.code, r.stderr)
	}
	h.mustQtask("stop", slow.ID)
}

func TestCommandStringRunsExactlyAsWritten(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	cmd := `X='a  b'; echo "$X" $(echo sub) "quote'd" ünïcødé; printf 'line1\nline2\n'`
	task := h.wait(h.start(cmd).ID)
	want := "a  b sub quote'd ünïcødé\nline1\nline2\n"
	if got := h.output(task.ID); got != want {
		t.Fatalf("output = %q, want %q", got, want)
	}
	if task.Command != cmd {
		t.Fatalf("recorded command = %q, want %q", task.Command, cmd)
	}
}

func TestFirstByteIsCaptured(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	for i := range 5 {
		task := h.wait(h.start(fmt.Sprintf("printf 'FIRST%d'; echo ' rest'", i)).ID)
		if got, want := h.output(task.ID), fmt.Sprintf("FIRST%d rest\n", i); got != want {
			t.Fatalf("run %d: output = %q, want %q (first bytes lost?)", i, got, want)
		}
	}
}

func TestLastLineIsInFileWhenWaitReturns(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	task := h.start("seq 1 20000")
	h.mustQtask("wait", task.ID)
	out := h.output(task.ID)
	if !strings.HasSuffix(out, "\n19999\n20000\n") || strings.Count(out, "\n") != 20000 {
		t.Fatalf("after wait the output should hold all 20000 lines, got %d lines ending %q",
			strings.Count(out, "\n"), out[max(0, len(out)-30):])
	}
}

func TestOutputIsCleanText(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	cases := []struct{ name, command, want string }{
		{"colours", `printf '\033[1;31mred\033[0m plain\n'`, "red plain\n"},
		// As tmux shows it: the erase leaves the cursor where it was, the
		// move puts c on row 10, column 5.
		{"cursor moves", `printf 'a\033[2Kb\033[10;5Hc\n'`, " b\n\n\n\n\n\n\n\n\n    c\n"},
		{"CR progress", `printf '10%%\r50%%\r100%%\n'`, "100%\n"},
		{"CRLF", `printf 'one\r\ntwo\r\n'`, "one\ntwo\n"},
	}
	for _, c := range cases {
		task := h.wait(h.start(c.command).ID)
		if got := h.output(task.ID); got != c.want {
			t.Errorf("%s: output = %q, want %q", c.name, got, c.want)
		}
	}
}

// TestBinaryOutputIsNotedNotWritten writes fixed pseudo-random bytes, not
// /dev/urandom's: random data can hold a cursor command (ESC 8) before the
// detector has seen enough to call it binary, which tmux acts on too, so a
// fresh draw each run made the test fail one run in a thousand. The bytes
// end as one failing draw did, with ESC just before the newline, which
// used to eat the "a" of "after".
func TestBinaryOutputIsNotedNotWritten(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	data := make([]byte, 20000)
	r := rand.New(rand.NewPCG(1, 1))
	for i := range data {
		data[i] = byte(r.Uint32())
	}
	data = append(data, "Z\x1b"...)
	bin := filepath.Join(h.root, "binary")
	if err := os.WriteFile(bin, data, 0o600); err != nil {
		t.Fatal(err)
	}
	task := h.wait(h.start(`echo before; cat ` + shellQuoteTest(bin) + `; echo; echo after`).ID)
	out := h.output(task.ID)
	if !strings.HasPrefix(out, "before\n") || !strings.Contains(out, "binary output suppressed") || !strings.HasSuffix(out, "after\n") {
		t.Fatalf("binary stream should be replaced by a note between the text lines, got %q", out[:min(len(out), 300)])
	}
	if len(out) > 1000 {
		t.Fatalf("binary garbage reached the output file: %d bytes", len(out))
	}
}

func TestHugeLineAndCap(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.writeConfig("output_max_bytes = \"256KiB\"\n")
	line := h.wait(h.start(`head -c 1000000 /dev/zero | tr '\0' a; echo; echo done`).ID)
	out := h.output(line.ID)
	if !strings.HasSuffix(out, "a\ndone\n") || !strings.Contains(out, "output capped at") {
		t.Fatalf("a 1 MB line under a 256 KiB cap: want the cap noted and the newest output kept, got %d bytes ending %q",
			len(out), out[max(0, len(out)-20):])
	}
	task := h.wait(h.start(`seq 1 200000`).ID)
	out = h.output(task.ID)
	if len(out) > 256<<10+200 {
		t.Fatalf("output file is %d bytes, over the 256 KiB cap", len(out))
	}
	if !strings.HasPrefix(out, "[qtask: output capped at") || !strings.HasSuffix(out, "\n199999\n200000\n") {
		t.Fatalf("capped file should start with the cap note and end with the newest lines, got %q … %q",
			out[:min(80, len(out))], out[max(0, len(out)-20):])
	}
}

func TestCallerCwdAndEnvironment(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	// The tmux server is started from elsewhere first, with other variables.
	h.start("true")
	dir := filepath.Join(h.root, "work dir")
	os.MkdirAll(dir, 0o755)
	secret := "s3cret-" + strconv.Itoa(os.Getpid())
	r := h.qtaskIn(dir, []string{"QTASK_TEST_SECRET=" + secret}, "run", "--bg", "--json", "--",
		`pwd; echo "secret=$QTASK_TEST_SECRET"; sleep 1`)
	if r.code != 0 {
		t.Fatalf("run: %s", r.stderr)
	}
	task := decodeTask(t, r.stdout)
	// While it runs, no process on the machine may carry the value in argv.
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range procs {
		if b, err := os.ReadFile(p); err == nil && strings.Contains(string(b), secret) {
			t.Errorf("environment value visible in argv of %s: %q", p, b)
		}
	}
	h.wait(task.ID)
	if got, want := h.output(task.ID), dir+"\nsecret="+secret+"\n"; got != want {
		t.Fatalf("output = %q, want %q", got, want)
	}
	if task.Cwd != dir {
		t.Fatalf("recorded cwd = %q, want %q", task.Cwd, dir)
	}
}

func TestStopKillsWholeGroup(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	task := h.start(`sleep 300 & (sleep 301 &) ; trap '' TERM; sleep 302; wait`)
	eventually(t, "task to have a pid", func() bool { return h.status(task.ID).PID != 0 })
	pgid := h.status(task.ID).PID
	eventually(t, "grandchildren to start", func() bool { return len(groupMembers(t, pgid)) >= 3 })
	out := h.mustQtask("stop", "--grace", "300ms", task.ID)
	if !strings.Contains(out, "cancelled") {
		t.Fatalf("stop output %q does not name the cancelled status", out)
	}
	if st := h.status(task.ID); st.Status != tasks.StatusCancelled {
		t.Fatalf("after stop the task is %s, want cancelled", st.Status)
	}
	if left := groupMembers(t, pgid); len(left) > 0 {
		t.Fatalf("processes of the task's group still alive after stop: %v", left)
	}
	again := h.qtask("stop", task.ID)
	if again.code != 0 || !strings.Contains(again.stdout, "already ended") || !strings.Contains(again.stdout, "cancelled") {
		t.Fatalf("stopping a stopped task: exit %d, %q; want exit 0 naming its status", again.code, again.stdout)
	}
}

// groupMembers lists the live (non-zombie) pids in process group pgid.
// A pgid of 0 or 1 names no task's group (a record read before its
// wrapper noted the group has 0; in a pid namespace, processes whose group
// is outside it show 0): asking for one is a mistake in the test.
func groupMembers(t *testing.T, pgid int) []int {
	t.Helper()
	if pgid <= 1 {
		t.Fatalf("groupMembers(%d): not a task's process group", pgid)
	}
	var pids []int
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, p := range stats {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		// pid (comm) state ppid pgrp ...; comm may hold spaces, so cut at ')'.
		s := string(b)
		fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(fields) < 3 || fields[0] == "Z" {
			continue
		}
		if g, _ := strconv.Atoi(fields[2]); g == pgid {
			pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(p)))
			pids = append(pids, pid)
		}
	}
	return pids
}

func TestLostTasksAreSettled(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.shellSession("work") // the server outlives the task's pane
	byPane := h.start("sleep 300")
	eventually(t, "pane id", func() bool { return h.status(byPane.ID).PID != 0 })
	if _, err := h.tmux("kill-pane", "-t", byPane.PaneID); err != nil {
		t.Fatal(err)
	}
	// Closed by hand, its server running: a stop someone asked for.
	eventually(t, "killed pane's task to end", func() bool { return h.status(byPane.ID).Status != tasks.StatusRunning })
	if st := h.status(byPane.ID); st.Status != tasks.StatusCancelled || st.Error != "window killed" {
		t.Errorf("a task whose pane was killed: %s %q, want cancelled, window killed", st.Status, st.Error)
	}

	byWrapper := h.start("sleep 300")
	eventually(t, "pid", func() bool { return h.status(byWrapper.ID).PID != 0 })
	var rec struct {
		WrapperPID int `json:"wrapper_pid"`
	}
	data, _ := os.ReadFile(filepath.Join(h.state, "tasks", byWrapper.ID+".json"))
	json.Unmarshal(data, &rec)
	if rec.WrapperPID == 0 {
		t.Fatal("record has no wrapper pid")
	}
	pgid := h.status(byWrapper.ID).PID
	syscall.Kill(rec.WrapperPID, syscall.SIGKILL)
	eventually(t, "SIGKILLed wrapper to be seen as lost by ls", func() bool {
		return strings.Contains(h.mustQtask("ls"), "failed (lost)")
	})
	eventually(t, "lost task's processes to be gone", func() bool { return len(groupMembers(t, pgid)) == 0 })
}

// TestTaskOfAKilledServerIsLostWithIt: a task whose whole tmux server
// went (kill-server, a crash) says so, not merely that its pane closed. The
// harness's server holds one more session, so only kill-server ends it.
func TestTaskOfAKilledServerIsLostWithIt(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.shellSession("work")
	task := h.start("sleep 300")
	eventually(t, "pid", func() bool { return h.status(task.ID).PID != 0 })
	if out, err := h.tmux("kill-server"); err != nil {
		t.Fatalf("tmux kill-server: %v: %s", err, out)
	}
	eventually(t, "the task to be settled", func() bool { return h.status(task.ID).Status != tasks.StatusRunning })
	const want = "lost: the task's tmux pane was closed while it ran, and its tmux server is gone"
	if st := h.status(task.ID); st.Status != tasks.StatusFailed || st.Error != want {
		t.Errorf("a task of a killed server: %s %q, want failed, %q", st.Status, st.Error, want)
	}
}

func TestParallelStarts(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	const n = 50
	ids := make([]string, n)
	var wg sync.WaitGroup
	errs := make(chan string, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := h.qtask("run", "--bg", "--json", "--", fmt.Sprintf("echo task-%d", i))
			if r.code != 0 {
				errs <- r.stderr
				return
			}
			var task tasks.Task
			if err := json.Unmarshal([]byte(r.stdout), &task); err != nil {
				errs <- err.Error()
				return
			}
			ids[i] = task.ID
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Fatalf("parallel run failed: %s", e)
	}
	seen := map[string]bool{}
	for _, id := range ids {
		if seen[id] {
			t.Fatalf("duplicate id %s", id)
		}
		seen[id] = true
	}
	// One wait for all of them, and their states from one ls: a wait
	// and a status per task were 100 calls one after another.
	if r := h.qtask(append([]string{"wait", "--timeout", "60s"}, ids...)...); r.code == exitTimeout {
		t.Fatalf("the tasks did not end within 60s: %s", r.stderr)
	}
	var list []tasks.Task
	json.Unmarshal([]byte(h.mustQtask("ls", "--json")), &list)
	if len(list) != n {
		t.Fatalf("ls --json lists %d tasks, want %d", len(list), n)
	}
	listed := map[string]tasks.Task{}
	for _, task := range list {
		listed[task.ID] = task
	}
	for i, id := range ids {
		if task := listed[id]; task.Status != tasks.StatusCompleted || h.output(id) != fmt.Sprintf("task-%d\n", i) {
			t.Errorf("task %d (%s): status %s, output %q", i, id, task.Status, h.output(id))
		}
	}
}

func TestInsideTmuxTouchesOnlyItsSession(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	if _, err := h.tmux("new-session", "-d", "-s", "user", "-x", "100", "-y", "30"); err != nil {
		t.Fatal(err)
	}
	h.tmux("new-window", "-d", "-t", "=user:")
	// A user who keeps dead panes around must not collect qtask's.
	h.tmux("set-option", "-g", "remain-on-exit", "on")
	// Names are left out: tmux's automatic-rename changes a new window's
	// name by itself once its shell starts.
	const windowFormat = "#{session_name} #{window_id} #{window_active} #{window_layout}"
	beforeWin, _ := h.tmux("list-windows", "-a", "-F", windowFormat)
	beforeOpts, _ := h.tmux("show-options", "-g")
	beforeWOpts, _ := h.tmux("show-options", "-g", "-w")
	pane, _ := h.tmux("display-message", "-p", "-t", "=user:", "#{pane_id}")
	// Called from inside tmux: no QTASK_TMUX_SOCKET, $TMUX names the server.
	env := []string{"QTASK_TMUX_SOCKET=", "TMUX=" + h.socket + ",1,0", "TMUX_PANE=" + pane}
	r := h.qtaskIn(h.root, env, "run", "--bg", "--json", "--", "echo inside; sleep 30")
	if r.code != 0 {
		t.Fatalf("run inside tmux: %s", r.stderr)
	}
	task := decodeTask(t, r.stdout)
	if _, err := h.tmux("has-session", "-t", "=qtask"); err != nil {
		t.Errorf("no qtask session on the user's server: %v", err)
	}
	h.mustQtask("stop", task.ID)
	eventually(t, "the finished task's window to close despite remain-on-exit", func() bool {
		dead, _ := h.tmux("list-panes", "-a", "-F", "#{pane_dead}")
		return !strings.Contains(dead, "1")
	})
	if task.Scope != pane {
		t.Errorf("scope inside tmux = %q, want the caller's pane %q", task.Scope, pane)
	}
	afterWin, _ := h.tmux("list-windows", "-t", "=user:", "-F", windowFormat)
	if afterWin != beforeWin {
		t.Errorf("user's windows changed:\nbefore %s\nafter  %s", beforeWin, afterWin)
	}
	// The one option qtask owns there is its status segment.
	if after, _ := h.tmux("show-options", "-g"); withoutOption(after, "@qtask_status") != beforeOpts {
		t.Errorf("global options changed:\nbefore %s\nafter  %s", beforeOpts, after)
	}
	if after, _ := h.tmux("show-options", "-g", "-w"); after != beforeWOpts {
		t.Errorf("global window options changed")
	}
}

func TestStatePermissionsAndCorruptRecord(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	task := h.wait(h.start("echo hi").ID)
	check := func(path string, want os.FileMode) {
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != want {
			t.Errorf("%s has mode %o, want %o", path, fi.Mode().Perm(), want)
		}
	}
	check(h.state, 0o700)
	check(filepath.Join(h.state, "tasks", task.ID+".json"), 0o600)
	check(task.OutputPath, 0o600)

	bad := filepath.Join(h.state, "tasks", "deadbeef.json")
	os.WriteFile(bad, []byte("{not json"), 0o600)
	r := h.qtask("ls")
	if r.code != 0 || !strings.Contains(r.stdout, task.ID) || !strings.Contains(r.stderr, bad) {
		t.Fatalf("ls with a corrupt record: exit %d, stdout %q, stderr %q; want the good task listed and a warning naming %s",
			r.code, r.stdout, r.stderr, bad)
	}
}

func TestIDsAndErrors(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	task := h.wait(h.start("echo x").ID)
	if got := h.status(task.ID[:4]); got.ID != task.ID {
		t.Fatalf("prefix %s resolved to %s", task.ID[:4], got.ID)
	}
	r := h.qtask("status", "zzzz")
	if r.code != 1 || !strings.Contains(r.stderr, `no task with id or name "zzzz"`) {
		t.Fatalf("unknown id: exit %d, stderr %q", r.code, r.stderr)
	}
	// Two records sharing a prefix make it ambiguous.
	for _, id := range []string{"abc00001", "abc00002"} {
		data := strings.ReplaceAll(mustRead(t, filepath.Join(h.state, "tasks", task.ID+".json")), task.ID, id)
		os.WriteFile(filepath.Join(h.state, "tasks", id+".json"), []byte(data), 0o600)
	}
	r = h.qtask("status", "abc")
	if r.code != 1 || !strings.Contains(r.stderr, "abc00001") || !strings.Contains(r.stderr, "abc00002") {
		t.Fatalf("ambiguous prefix: exit %d, stderr %q; want both candidates", r.code, r.stderr)
	}
	if r := h.qtask("run", "--bg", "--bogus", "--", "true"); r.code != 2 {
		t.Fatalf("unknown flag: exit %d, want 2", r.code)
	}
	if r := h.qtask("ls", "--status", "weird"); r.code != 2 || !strings.Contains(r.stderr, "weird") {
		t.Fatalf("bad --status: exit %d stderr %q, want 2", r.code, r.stderr)
	}
	// A directory that is not there is a mistake in the call, like a bad
	// flag: exit 2, so a script can tell it from a failure of qtask.
	if r := h.qtask("run", "--bg", "--cwd", "/no/such/dir", "--", "true"); r.code != 2 || !strings.Contains(r.stderr, "/no/such/dir") {
		t.Fatalf("bad --cwd: exit %d stderr %q, want 2 and the directory named", r.code, r.stderr)
	}
}

func mustRead(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestLogsOptions(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	task := h.wait(h.start("seq 1 10").ID)
	if got := h.mustQtask("logs", "--tail", "3", task.ID); got != "8\n9\n10\n" {
		t.Errorf("--tail 3 = %q", got)
	}
	if got := h.mustQtask("logs", "--offset", "2", "--limit", "4", task.ID); got != "2\n3\n" {
		t.Errorf("--offset 2 --limit 4 = %q", got)
	}
	live := h.start("for i in 1 2 3; do echo tick $i; sleep 0.3; done")
	if got := h.mustQtask("logs", "-f", live.ID); got != "tick 1\ntick 2\ntick 3\n" {
		t.Errorf("logs -f = %q, want all three ticks then exit", got)
	}
}

func TestStatusShowsRecentOutputWhileRunning(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	task := h.start("echo warming up; sleep 30")
	eventually(t, "output", func() bool { return strings.Contains(h.output(task.ID), "warming up") })
	out := h.mustQtask("status", task.ID)
	if !strings.Contains(out, "running") || !strings.Contains(out, "warming up") {
		t.Fatalf("status of a running task should show its recent output:\n%s", out)
	}
	h.mustQtask("stop", task.ID)
}

func TestConfigErrorsNameFileLineAndKey(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.writeConfig("session = \"qtask\"\nshel = \"bash\"\n")
	r := h.qtask("config", "check")
	if r.code != 1 || !strings.Contains(r.stderr, h.config+":2:1") || !strings.Contains(r.stderr, `"shel"`) {
		t.Fatalf("config check on an unknown key: exit %d, stderr %q", r.code, r.stderr)
	}
	r = h.qtask("run", "--bg", "--", "true")
	if r.code != 1 || !strings.Contains(r.stderr, h.config) {
		t.Fatalf("run with a broken config should fail naming it: exit %d, %q", r.code, r.stderr)
	}
	h.writeConfig("stop_grace = \"5s\"\n")
	if got := h.mustQtask("config", "show"); !strings.Contains(got, `stop_grace = "5s"`) {
		t.Fatalf("config show:\n%s", got)
	}
	if got := strings.TrimSpace(h.mustQtask("config", "path")); got != h.config {
		t.Fatalf("config path = %q, want %q", got, h.config)
	}
}

func TestUserTextNeverRunsInTmux(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.start("sleep 5") // a running server, so every path is exercised
	canary := filepath.Join(h.root, "pwned")
	dir := filepath.Join(h.root, "d#(touch "+canary+")#{session_name};")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	name := "n#(touch " + canary + "-name)#{session_name};"
	task := h.wait(h.start("pwd", "--cwd", dir, "--name", name).ID)
	if task.Status != tasks.StatusCompleted || h.output(task.ID) != dir+"\n" {
		t.Fatalf("a task in %q named %q: %s, output %q", dir, name, task.Status, h.output(task.ID))
	}
	for _, f := range []string{canary, canary + "-name"} {
		if _, err := os.Stat(f); err == nil {
			t.Fatalf("tmux ran a command embedded in a directory or task name: %s exists", f)
		}
	}
}

func TestStopEndsASuspendedTaskWithSIGTERM(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	task := h.start("exec sleep 300")
	eventually(t, "task to have a pid", func() bool { return h.status(task.ID).PID != 0 })
	pgid := h.status(task.ID).PID
	// What Ctrl+Z in the task's pane does.
	syscall.Kill(-pgid, syscall.SIGTSTP)
	h.mustQtask("stop", "--grace", "5s", task.ID)
	st := h.status(task.ID)
	if st.Status != tasks.StatusCancelled || st.ExitCode == nil || *st.ExitCode != 128+int(syscall.SIGTERM) {
		t.Fatalf("a suspended task should die of the stop's SIGTERM (exit 143), not wait for SIGKILL: %s exit %v",
			st.Status, deref(st.ExitCode))
	}
}

// Ctrl+Z pressed in a task's pane does not leave the command stopped, and
// the task running, for ever: there is no shell in the pane to bring it
// back, so the wrapper continues it, as a program tmux runs as a pane's own
// command is not stopped by Ctrl+Z either.
func TestCtrlZInATaskPaneDoesNotStopTheTask(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	gate := filepath.Join(h.root, "gate")
	// The CONT trap says when the command was stopped and continued: the
	// test waits for that event, not a while (under load a fixed pause
	// could end before the stop arrived, and the test passed without it).
	task := h.start("trap 'echo continued' CONT; echo ready; while [ ! -e '" + gate + "' ]; do sleep 0.02; done; echo done")
	eventually(t, "the command to run", func() bool { return strings.Contains(h.output(task.ID), "ready") })
	if out, err := h.tmux("send-keys", "-t", task.PaneID, "C-z"); err != nil {
		t.Fatalf("send C-z: %v: %s", err, out)
	}
	eventually(t, "the stopped command to be continued", func() bool { return strings.Contains(h.output(task.ID), "continued") })
	os.WriteFile(gate, nil, 0o600)
	if end := h.wait(task.ID); end.Status != tasks.StatusCompleted || !strings.HasSuffix(h.output(task.ID), "done\n") {
		t.Errorf("after Ctrl+Z: %s, output:\n%s", end.StatusText(), h.output(task.ID))
	}
}

// A command started by a caller with no $TERM (cron, `env -i`, an agent's
// bare environment) still runs on a terminal, its tmux pane: it gets the
// pane's $TERM, as tmux gives every pane, so that a full-screen or
// interactive program (less, top, tput) works there. It had no TERM at all
// (found by a new user's trial). A caller's own TERM is passed on as is.
func TestTaskWithoutCallerTermGetsThePanes(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.start("sleep 300") // keeps the server up, so that its default-terminal can be read
	paneTerm, err := h.tmux("show-options", "-gv", "default-terminal")
	if err != nil || paneTerm == "" {
		t.Fatalf("default-terminal: %q %v", paneTerm, err)
	}
	const show = `printenv TERM || echo "no TERM"`
	for _, c := range []struct{ callerTerm, want string }{
		{"", paneTerm},
		{"xterm-256color", "xterm-256color"},
	} {
		r := h.qtaskIn(h.root, []string{"TERM=" + c.callerTerm}, "run", "--bg", "--json", "--", show)
		if r.code != 0 {
			t.Fatalf("run: %s", r.stderr)
		}
		task := h.wait(decodeTask(t, r.stdout).ID)
		if got := h.output(task.ID); got != c.want+"\n" {
			t.Errorf("a caller with TERM=%q: the task's TERM is %q, want %q", c.callerTerm, got, c.want)
		}
	}
}
