package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/qtask/qtask/tasks"
)

// stopAllTasks is how many tasks TestStopAllStopsABurst starts at once.
// bench/scale.sh runs the same test with 200 (QTASK_STOP_ALL_TASKS).
func stopAllTasks(t *testing.T) int {
	n := 24
	if s := os.Getenv("QTASK_STOP_ALL_TASKS"); s != "" {
		var err error
		if n, err = strconv.Atoi(s); err != nil || n < 1 {
			t.Fatalf("QTASK_STOP_ALL_TASKS=%q: want a positive number", s)
		}
	}
	return n
}

// TestStopAllStopsABurst starts many tasks at once, then `stop --all`:
// every one is cancelled, and no process of any of them is left — not the
// command, not its wrapper, not its capture.
func TestStopAllStopsABurst(t *testing.T) {
	t.Parallel()
	if !isolated(t) {
		return
	}
	h := newHarness(t)
	// A grace of an hour: a stop must end because nothing is left, never
	// because a grace ran out. "; :" makes sh fork sleep rather than exec
	// it, so every stopped task leaves a dead orphan behind, and in this
	// pid namespace pid 1 (the test) reaps nothing.
	h.writeConfig("shell = \"sh\"\nstop_grace = \"1h\"\n")
	n := stopAllTasks(t)
	ids := make([]string, n)
	begun := time.Now()
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { ids[i] = h.start("sleep 300; :").ID })
	}
	wg.Wait()
	t.Logf("%d tasks started in %v", n, time.Since(begun).Round(time.Millisecond))
	eventually(t, "every task's command to run", func() bool {
		var running []tasks.Task
		if err := json.Unmarshal([]byte(h.mustQtask("ls", "--json", "--status", "running")), &running); err != nil {
			t.Fatal(err)
		}
		started := 0
		for _, task := range running {
			if task.PID != 0 {
				started++
			}
		}
		return started == n
	})

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	stop := exec.CommandContext(ctx, qtaskBin, "stop", "--all")
	stop.Env, stop.Dir = h.env, h.root
	begun = time.Now()
	outBytes, err := stop.Output()
	t.Logf("stop --all of %d tasks took %v", n, time.Since(begun).Round(time.Millisecond))
	if ctx.Err() != nil {
		t.Fatalf("stop --all of %d tasks still running after a minute: it waits out the grace", n)
	}
	if err != nil {
		t.Fatalf("stop --all: %v", err)
	}
	out := string(outBytes)
	if got := strings.Count(out, "Stopped task "); got != n {
		t.Errorf("stop --all reported %d stopped tasks, want %d:\n%s", got, n, out)
	}
	for _, id := range ids {
		if st := h.status(id); st.Status != tasks.StatusCancelled {
			t.Errorf("task %s is %s after stop --all, want cancelled", id, st.StatusText())
		}
	}
	eventually(t, "no process of any task left", func() bool { return len(taskProcesses()) == 0 })
}

// taskProcesses lists the live processes that belong to a task: anything
// carrying QTASK_TASK_ID (the command and its children) and qtask's own
// wrapper and capture processes.
func taskProcesses() []string {
	var found []string
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, dir := range dirs {
		if stat, err := os.ReadFile(filepath.Join(dir, "stat")); err != nil || zombie(stat) {
			continue
		}
		cmdline, _ := os.ReadFile(filepath.Join(dir, "cmdline"))
		env, _ := os.ReadFile(filepath.Join(dir, "environ"))
		argv := strings.Split(string(cmdline), "\x00")
		if bytes.Contains(env, []byte("QTASK_TASK_ID=")) ||
			len(argv) > 1 && (argv[1] == "_exec" || argv[1] == "_capture") {
			found = append(found, filepath.Base(dir)+" "+strings.Join(argv, " "))
		}
	}
	return found
}

// zombie reports whether a /proc/PID/stat line is a zombie's.
func zombie(stat []byte) bool {
	s := string(stat)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	return len(fields) == 0 || fields[0] == "Z"
}

// TestStopAllSignalsEveryTaskFirst: tasks that ignore SIGTERM are all sent
// it before any of them is killed, so `stop --all` of n such tasks costs one
// grace, not n. Each task notes when SIGTERM reached it; every note must
// come before the first task ended.
func TestStopAllSignalsEveryTaskFirst(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.writeConfig("shell = \"sh\"\nstop_grace = \"2s\"\n")
	const n = 3
	notes := make([]string, n)
	ids := make([]string, n)
	for i := range n {
		notes[i] = filepath.Join(h.root, "term"+strconv.Itoa(i))
		// date +%s%N: nanoseconds, to compare with ended_at.
		ids[i] = h.start(`trap 'date +%s%N > ` + notes[i] + `' TERM; echo trapping; while :; do sleep 0.1; done`).ID
	}
	// Running is not enough: a SIGTERM before the shell has set its trap
	// ends the task at once (seen under load: one task never noted it).
	for _, id := range ids {
		eventually(t, "task "+id+" to set its trap", func() bool {
			return h.status(id).PID != 0 && strings.Contains(h.output(id), "trapping")
		})
	}
	out := h.mustQtask("stop", "--all")
	if got := strings.Count(out, "Stopped task "); got != n {
		t.Fatalf("stop --all reported %d stopped tasks, want %d:\n%s", got, n, out)
	}
	firstEnd := time.Time{}
	for _, id := range ids {
		st := h.status(id)
		if st.Status != tasks.StatusCancelled || st.EndedAt == nil {
			t.Fatalf("task %s is %s after stop --all, want cancelled", id, st.StatusText())
		}
		if firstEnd.IsZero() || st.EndedAt.Before(firstEnd) {
			firstEnd = *st.EndedAt
		}
	}
	for i, note := range notes {
		data, err := os.ReadFile(note)
		if err != nil {
			t.Fatalf("task %s never got SIGTERM: %v", ids[i], err)
		}
		ns, err := strconv.ParseInt(strings.TrimSpace(string(data)), 10, 64)
		if err != nil {
			t.Fatalf("task %s noted %q", ids[i], data)
		}
		if got := time.Unix(0, ns); got.After(firstEnd) {
			t.Errorf("task %s got SIGTERM at %s, after the first task had ended (%s): stop --all stops one task after another",
				ids[i], got.Format(time.RFC3339Nano), firstEnd.Format(time.RFC3339Nano))
		}
	}
}
