package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/qtask/qtask/tasks"
	"github.com/qtask/qtask/tasks/capped"
)

// notices reads the harness's inbox (scope "default") until done holds for
// everything read so far, and returns it in the order it was delivered.
func (h *harness) notices(what string, done func([]inboxEntry) bool) []inboxEntry {
	h.t.Helper()
	var all []inboxEntry
	deadline := time.Now().Add(60 * time.Second)
	for !done(all) {
		if time.Now().After(deadline) {
			h.t.Fatalf("timed out waiting for %s; got %s", what, describeNotices(all))
		}
		r := h.qtask("agent", "inbox", "--json", "--wait", "10s")
		if r.code == exitTimeout {
			continue
		}
		if r.code != 0 {
			h.t.Fatalf("agent inbox: exit %d: %s", r.code, r.stderr)
		}
		var got []inboxEntry
		if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
			h.t.Fatalf("inbox --json printed %q: %v", r.stdout, err)
		}
		all = append(all, got...)
	}
	return all
}

// describeNotices is a short account of notifications, for failures.
func describeNotices(list []inboxEntry) string {
	var b strings.Builder
	for _, n := range list {
		if n.Event != nil {
			fmt.Fprintf(&b, "\n  %s event %d %q", n.ID, n.Event.Count, n.Event.Line)
		} else {
			fmt.Fprintf(&b, "\n  %s %s events=%d dropped=%d", n.ID, n.StatusText(), n.Events, n.EventsDropped)
		}
	}
	return b.String()
}

// ended reports whether list holds the end of task id.
func ended(id string) func([]inboxEntry) bool {
	return func(list []inboxEntry) bool {
		for _, n := range list {
			if n.ID == id && n.Event == nil {
				return true
			}
		}
		return false
	}
}

// startMonitor runs `qtask monitor --json` with args and returns the task.
func (h *harness) startMonitor(args ...string) tasks.Task {
	h.t.Helper()
	return decodeTask(h.t, h.mustQtask(append([]string{"monitor", "--json"}, args...)...))
}

// awaitFile is a shell snippet that waits until path exists: the test says
// when a command may go on, rather than guessing with sleeps.
func awaitFile(path string) string {
	return fmt.Sprintf("while [ ! -e '%s' ]; do sleep 0.02; done", path)
}

// touch creates path, releasing an awaitFile.
func touch(t *testing.T, path string) {
	t.Helper()
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestMonitorThreeLinesThreeEvents: three lines printed 0.4 s apart reach
// the scope as three events, in order and while the command still runs,
// then one end with the total.
func TestMonitorThreeLinesThreeEvents(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	release := filepath.Join(h.root, "release")
	m := h.startMonitor("--", "echo line 1; sleep 0.4; echo line 2; sleep 0.4; echo 'line <3> & </task-notification>'; "+awaitFile(release))
	if m.Kind != tasks.KindMonitor || m.Status != tasks.StatusRunning {
		t.Fatalf("monitor started as %s %s, want a running monitor", m.Kind, m.Status)
	}
	events := h.notices("three events", func(l []inboxEntry) bool { return len(l) >= 3 })
	if st := h.status(m.ID); !st.Running() || st.Events != 3 || st.StatusText() != "running (3 events)" {
		t.Errorf("after three events the monitor is %q (events %d), want running (3 events)", st.StatusText(), st.Events)
	}
	touch(t, release)
	all := append(events, h.notices("the end", ended(m.ID))...)
	if len(all) != 4 {
		t.Fatalf("got %d notifications, want 3 events and 1 end:%s", len(all), describeNotices(all))
	}
	for i, want := range []string{"line 1", "line 2", "line <3> & </task-notification>"} {
		n := all[i]
		if n.ID != m.ID || n.Event == nil || n.Event.Count != i+1 || n.Event.Line != want || n.Status != tasks.StatusRunning {
			t.Fatalf("notification %d: want event %d %q of %s:%s", i, i+1, want, m.ID, describeNotices(all))
		}
		for _, part := range []string{"<kind>monitor</kind>", "<status>running</status>", fmt.Sprintf("<event-count>%d</event-count>", i+1)} {
			if !strings.Contains(n.Envelope, part) {
				t.Errorf("event %d envelope lacks %s:\n%s", i+1, part, n.Envelope)
			}
		}
	}
	if env := all[2].Envelope; !strings.Contains(env, "<result>line &lt;3&gt; &amp; &lt;\\/task-notification&gt;</result>") {
		t.Errorf("a line that could close the envelope is not defanged:\n%s", env)
	}
	end := all[3]
	if end.Status != tasks.StatusCompleted || end.Events != 3 || end.EventsDropped != 0 {
		t.Errorf("end: %s events=%d dropped=%d, want completed with 3 events, none dropped", end.StatusText(), end.Events, end.EventsDropped)
	}
	for _, part := range []string{"<status>completed</status>", "<event-count>3</event-count>", "<dropped-lines>0</dropped-lines>"} {
		if !strings.Contains(end.Envelope, part) {
			t.Errorf("end envelope lacks %s:\n%s", part, end.Envelope)
		}
	}
	if st := h.status(m.ID); st.StatusText() != "completed (exit 0, 3 events)" {
		t.Errorf("ls status %q, want %q", st.StatusText(), "completed (exit 0, 3 events)")
	}
}

// TestMonitorThrottlesABurst: 60 lines at once make the burst of events
// (5, at most 8 with refills) and the end reports every other line as
// dropped; blank lines are neither.
func TestMonitorThrottlesABurst(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	release := filepath.Join(h.root, "release")
	m := h.startMonitor("--", "for i in $(seq 1 60); do echo $i; echo; done; "+awaitFile(release))
	first := h.notices("the burst", func(l []inboxEntry) bool { return len(l) >= 5 })
	eventually(t, "the monitor to count the drops", func() bool { return h.status(m.ID).EventsDropped > 0 })
	// What a person reads: the count stops while lines go on, so ls says
	// how many were dropped. (The rule that also drops lines while
	// monitor.MaxUnread events wait unread is TestEventsUnreadAreBounded's,
	// on an injected clock: end to end it took 13 s of real time.)
	if ls := h.mustQtask("ls"); !regexp.MustCompile(`running \(\d+ events, \d+ dropped\)`).MatchString(ls) {
		t.Errorf("qtask ls does not say how many lines the running monitor dropped:\n%s", ls)
	}
	touch(t, release)
	all := append(first, h.notices("the end", ended(m.ID))...)
	end := all[len(all)-1]
	events := len(all) - 1
	if events < 5 || events > 8 || end.Events != events {
		t.Fatalf("60 lines at once made %d events (end says %d), want 5 to 8:%s", events, end.Events, describeNotices(all))
	}
	for i := range 5 {
		if all[i].Event == nil || all[i].Event.Line != fmt.Sprint(i+1) {
			t.Fatalf("event %d is not line %d:%s", i+1, i+1, describeNotices(all))
		}
	}
	if end.EventsDropped != 60-events {
		t.Errorf("end reports %d lines dropped, want %d (60 lines, %d events, blank lines free)", end.EventsDropped, 60-events, events)
	}
	if want := fmt.Sprintf("<dropped-lines>%d</dropped-lines>", 60-events); !strings.Contains(end.Envelope, want) {
		t.Errorf("end envelope lacks %s:\n%s", want, end.Envelope)
	}
}

// TestMonitorMaxEvents: the event that reaches --max-events ends the
// monitor, completed, before its command is stopped: no event after it.
func TestMonitorMaxEvents(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	m := h.startMonitor("--max-events", "2", "--", "i=0; while :; do i=$((i+1)); echo m$i; sleep 0.2; done")
	all := h.notices("the end", ended(m.ID))
	if len(all) != 3 || all[0].Event == nil || all[1].Event == nil || all[1].Event.Line != "m2" {
		t.Fatalf("want events m1, m2 then the end:%s", describeNotices(all))
	}
	end := h.wait(m.ID)
	if end.Status != tasks.StatusCompleted || end.Error != "max events reached" || end.Events != 2 {
		t.Fatalf("monitor ended %q (events %d), want completed: max events reached, 2 events", end.StatusText(), end.Events)
	}
	if r := h.qtask("wait", m.ID); r.code != 0 {
		t.Errorf("qtask wait on a monitor completed by its max events: exit %d, want 0", r.code)
	}
	if got, want := end.StatusText(), "completed (max events reached, 2 events)"; got != want {
		t.Errorf("status %q, want %q", got, want)
	}
	if !strings.Contains(all[2].Envelope, "<result>max events reached</result>") {
		t.Errorf("end envelope lacks the reason:\n%s", all[2].Envelope)
	}
	awaitDead(t, end.PID)
	if r := h.qtask("restart", m.ID); r.code != exitError || !strings.Contains(r.stderr, "is a monitor") {
		t.Errorf("restart of a monitor: exit %d %q; want it refused, not rerun as a shell task", r.code, r.stderr)
	}
	if more, _ := h.inboxIDs("default"); len(more) != 0 {
		t.Errorf("notifications after the end: %q", more)
	}
	ls := h.mustQtask("ls")
	if !strings.Contains(ls, "completed (max events reached, 2 events)") {
		t.Errorf("ls does not show the events:\n%s", ls)
	}
	var list []tasks.Task
	if err := json.Unmarshal([]byte(h.mustQtask("ls", "--json")), &list); err != nil || len(list) != 1 || list[0].Events != 2 {
		t.Errorf("ls --json: %v %+v, want the monitor with events 2", err, list)
	}
}

// TestMonitorIdleTimeout: a monitor whose command prints nothing for
// --idle-timeout ends, completed, and stops the command.
func TestMonitorIdleTimeout(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	m := h.startMonitor("--idle-timeout", "1s", "--", "echo hi; sleep 120")
	end := h.wait(m.ID)
	if end.Status != tasks.StatusCompleted || end.Error != "idle timeout" || end.Events != 1 {
		t.Fatalf("monitor ended %q (events %d), want completed: idle timeout, 1 event", end.StatusText(), end.Events)
	}
	awaitDead(t, end.PID)
}

// TestMonitorRefusesBadOptions: options over the caps, or a pattern that
// does not compile, are refused in one line, exit 2, before anything runs.
func TestMonitorRefusesBadOptions(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--max-events", "10001", "--", "true"}, "cap of 10000"},
		{[]string{"--idle-timeout", "11m", "--", "true"}, "cap of 10m0s"},
		{[]string{"--match", "(", "--", "true"}, "not a valid regular expression"},
		{[]string{"a", "b"}, "put the command after --"},
		{[]string{}, "missing command"},
	} {
		r := h.qtask(append([]string{"monitor"}, tc.args...)...)
		if r.code != exitUsage || !strings.Contains(r.stderr, tc.want) || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
			t.Errorf("monitor %q: exit %d, stderr %q; want exit 2 and one line saying %q", tc.args, r.code, r.stderr, tc.want)
		}
	}
	if out := h.mustQtask("ls", "--json"); strings.TrimSpace(out) != "[]" {
		t.Errorf("a refused monitor left a task: %s", out)
	}
}

// TestMonitorSeventeenthRefused: 16 running monitors in a scope are the
// most; the 17th is refused (exit 3) until one ends, and other scopes are
// not affected.
func TestMonitorSeventeenthRefused(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	var first tasks.Task
	for i := range 16 {
		m := h.startMonitor("--", "sleep 300")
		if i == 0 {
			first = m
		}
	}
	r := h.qtask("monitor", "--", "sleep 300")
	if r.code != exitLimit || !strings.Contains(r.stderr, "16 monitors already run") || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
		t.Fatalf("17th monitor: exit %d, stderr %q; want exit 3 and one line", r.code, r.stderr)
	}
	if other := h.qtaskIn(h.root, []string{"QTASK_SCOPE=other"}, "monitor", "--", "sleep 300"); other.code != 0 {
		t.Errorf("another scope's first monitor refused: %s", other.stderr)
	}
	h.mustQtask("stop", first.ID)
	if r := h.qtask("monitor", "--", "sleep 300"); r.code != 0 {
		t.Errorf("a monitor after one ended: exit %d: %s", r.code, r.stderr)
	}
	h.mustQtask("stop", "--all")
}

// TestMonitorLimitHoldsForConcurrentStarts: 20 monitors started at the
// same moment in one scope leave exactly 16 running, the others refused.
func TestMonitorLimitHoldsForConcurrentStarts(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	codes := make(chan int, 20)
	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() { codes <- h.qtask("monitor", "--", "sleep 300").code })
	}
	wg.Wait()
	close(codes)
	started, refused := 0, 0
	for c := range codes {
		switch c {
		case 0:
			started++
		case exitLimit:
			refused++
		}
	}
	running, _ := h.runningMonitors()
	if started != 16 || refused != 4 || running != 16 {
		t.Errorf("20 concurrent starts: %d started, %d refused, %d monitors running; want 16, 4, 16", started, refused, running)
	}
	h.mustQtask("stop", "--all")
}

// runningMonitors counts the running monitors `ls --json` lists.
func (h *harness) runningMonitors() (int, []tasks.Task) {
	h.t.Helper()
	var list []tasks.Task
	if err := json.Unmarshal([]byte(h.mustQtask("ls", "--json", "--status", "running")), &list); err != nil {
		h.t.Fatal(err)
	}
	n := 0
	for _, task := range list {
		if task.Kind == tasks.KindMonitor {
			n++
		}
	}
	return n, list
}

// TestMonitorExistingTask: `qtask monitor ID --match RE` turns the task's
// matching lines from then on into events, ends when the task does, and
// leaves the task alone.
func TestMonitorExistingTask(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	goOn, finish := filepath.Join(h.root, "go"), filepath.Join(h.root, "finish")
	src := h.start("echo ERROR before; " + awaitFile(goOn) + "; echo ERROR one; echo fine; echo ERROR two; " + awaitFile(finish))
	// A monitor of a task starts after the task's settled lines (a line
	// on the live screen may still be redrawn): wait until the first line
	// is settled, not merely in the file's tail, or it is rightly an event.
	eventually(t, "the task's first line to settle", func() bool {
		f, err := capped.OpenRead(src.OutputPath)
		if err != nil {
			return false
		}
		defer f.Close()
		fi, err := f.Stat()
		if err != nil {
			return false
		}
		_, settled := capped.FinalEnds(f, fi.Size())
		head := make([]byte, settled)
		n, _ := f.ReadAt(head, 0)
		return strings.Contains(string(head[:n]), "ERROR before")
	})
	m := h.startMonitor(src.ID, "--match", "ERROR")
	touch(t, goOn)
	events := h.notices("two events", func(l []inboxEntry) bool { return len(l) >= 2 })
	if st := h.status(src.ID); !st.Running() {
		t.Fatalf("the monitored task is %s, want it untouched and running", st.StatusText())
	}
	touch(t, finish)
	all := append(events, h.notices("the monitor's end", ended(m.ID))...)
	var lines []string
	for _, n := range all {
		if n.ID == m.ID && n.Event != nil {
			lines = append(lines, n.Event.Line)
		}
	}
	if strings.Join(lines, "|") != "ERROR one|ERROR two" {
		t.Errorf("events %q, want the two ERROR lines printed after the monitor started:%s", lines, describeNotices(all))
	}
	if st := h.wait(src.ID); st.Status != tasks.StatusCompleted {
		t.Errorf("monitored task ended %s, want completed by itself", st.StatusText())
	}
	if st := h.wait(m.ID); st.Status != tasks.StatusCompleted || st.Events != 2 || st.Kind != tasks.KindMonitor {
		t.Errorf("monitor ended %s %s with %d events, want a completed monitor with 2", st.Kind, st.StatusText(), st.Events)
	}
	if r := h.qtask("monitor", src.ID, "--match", "x"); r.code != exitError || !strings.Contains(r.stderr, "is not running") {
		t.Errorf("monitor of an ended task: exit %d %q, want exit 1 saying it is not running", r.code, r.stderr)
	}
}

// TestMCPMonitor: the MCP monitor tool starts a monitor at once; its
// events ride in later results, in order, each once, and its end follows;
// bad arguments are one-line tool errors.
func TestMCPMonitor(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	cs, _ := h.mcpClient(nil)
	release := filepath.Join(h.root, "release")
	text, isErr := callTool(t, cs, "monitor", map[string]any{
		"command": "echo noise; echo READY on 8080; echo ERROR x; " + awaitFile(release),
		"match":   "READY|ERROR",
	})
	if isErr || !strings.Contains(text, "Started monitor task") {
		t.Fatalf("monitor: %q (error %v)", text, isErr)
	}
	id := taskIDIn(t, text)
	if st := h.status(id); st.Kind != "monitor" || !st.Running() {
		t.Fatalf("the monitor tool started a %s task that is %s", st.Kind, st.StatusText())
	}
	var results strings.Builder
	eventually(t, "two events in tool results", func() bool {
		text, _ := callTool(t, cs, "task_list", nil)
		results.WriteString(text)
		return strings.Count(results.String(), "<status>running</status>") >= 2
	})
	got := results.String()
	first, second := strings.Index(got, "<result>READY on 8080</result>"), strings.Index(got, "<result>ERROR x</result>")
	if first < 0 || second < first || strings.Contains(got, "noise</result>") || strings.Count(got, "<kind>monitor</kind>") != 2 {
		t.Fatalf("want the READY then the ERROR event, once each, and no other line:\n%s", got)
	}
	touch(t, release)
	text, _ = callTool(t, cs, "task_wait", map[string]any{"task_ids": []string{id}, "timeout_ms": 60000})
	if !strings.Contains(text, "<event-count>2</event-count>") || !strings.Contains(text, "<dropped-lines>0</dropped-lines>") {
		t.Errorf("task_wait result lacks the monitor's end with its count:\n%s", text)
	}
	for _, bad := range []map[string]any{
		{},
		{"command": "true", "task_id": id},
		{"command": "true", "max_events": 10001},
		{"command": "true", "match": "("},
		{"task_id": id},
	} {
		text, isErr := callTool(t, cs, "monitor", bad)
		if !isErr || strings.Count(strings.TrimSpace(text), "\n") != 0 {
			t.Errorf("monitor %v: %q (error %v), want a one-line tool error", bad, text, isErr)
		}
	}
}

// TestAgentHookDeliversMonitorEvents: an agent's tool hook hands the model
// a running monitor's events, once, as it hands task ends.
func TestAgentHookDeliversMonitorEvents(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	release := filepath.Join(h.root, "release")
	m := decodeTask(t, h.qtaskIn(h.root, []string{"QTASK_SCOPE=agent"}, "monitor", "--json", "--match", "ERROR",
		"--", "echo fine; echo 'ERROR disk full'; "+awaitFile(release)).stdout)
	eventually(t, "the monitor's event", func() bool { return h.status(m.ID).Events == 1 })
	input := `{"session_id":"s1","hook_event_name":"PostToolUse","cwd":"/tmp"}`
	a, r := h.hook("agent", input, "claude")
	ctx := a.HookSpecificOutput.AdditionalContext
	if r.code != 0 || strings.Count(ctx, "<result>ERROR disk full</result>") != 1 || !strings.Contains(ctx, "<kind>monitor</kind>") ||
		strings.Contains(ctx, "<result>fine") {
		t.Errorf("PostToolUse with a monitor event pending: exit %d, %q (stderr %q); want the ERROR event only", r.code, r.stdout, r.stderr)
	}
	if _, r := h.hook("agent", input, "claude"); r.stdout != "" {
		t.Errorf("the hook fired again printed %q: the event was delivered twice", r.stdout)
	}
	touch(t, release)
	h.wait(m.ID)
}

// TestMonitorNeverHoldsUpItsCommand: while no event can be queued (the
// state lock is held, as by a reader stuck mid-transition), the monitored
// command still prints all its lines and goes on; the events follow once
// the lock is free.
func TestMonitorNeverHoldsUpItsCommand(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	held, done, release := filepath.Join(h.root, "held"), filepath.Join(h.root, "done"), filepath.Join(h.root, "release")
	m := h.startMonitor("--", awaitFile(held)+"; seq 1 2000; touch '"+done+"'; "+awaitFile(release))
	eventually(t, "the monitor to claim its command", func() bool { return h.status(m.ID).PID > 0 })
	free := holdStoreLock(t, h.state)
	touch(t, held)
	eventually(t, "the command to print 2000 lines and go on while events are held up", func() bool {
		_, err := os.Stat(done)
		return err == nil
	})
	var rec tasks.Task
	if data, err := os.ReadFile(filepath.Join(h.state, "tasks", m.ID+".json")); err != nil || json.Unmarshal(data, &rec) != nil || rec.Events != 0 {
		t.Fatalf("events were counted with the state lock held (%v, record %s): the test holds nothing up", err, data)
	}
	free()
	touch(t, release)
	end := h.wait(m.ID)
	if end.Status != tasks.StatusCompleted || end.Events < 5 || end.Events+end.EventsDropped != 2000 {
		t.Errorf("monitor ended %s with %d events and %d dropped; want completed, at least the burst, and the 2000 lines accounted for",
			end.StatusText(), end.Events, end.EventsDropped)
	}
}

// TestMonitorGuidanceKeepsAServerRunning: a monitor that ends by itself
// stops its own command, so qtask teaches watching a server's task, which
// the monitor never touches (and a readiness gate for "tell me when it is
// up", as a monitor started late misses the line). `qtask monitor --help` gave `--max-events 1 --match 'listening
// on' -- npm run dev` as its example, and the MCP tool's description
// offered the monitor for "the server says ready" without saying its
// command is stopped: whoever followed either lost the server right after
// it was ready (found by a trial of monitors). Followed as now written,
// the monitor ends after its event and the server runs on.
func TestMonitorGuidanceKeepsAServerRunning(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	help := h.mustQtask("monitor", "--help")
	if !strings.Contains(help, "qtask monitor 3f9a1c02 --match") || !strings.Contains(help, "qtask run --bg --ready REGEX") || strings.Contains(help, "-- npm run dev") {
		t.Errorf("qtask monitor --help does not teach watching a server by its id, and a readiness gate for its start:\n%s", help)
	}
	cs, _ := h.mcpClient(nil)
	list, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range list.Tools {
		if tool.Name == "monitor" && (!strings.Contains(tool.Description, "stops its command") || !strings.Contains(tool.Description, "monitor its task_id")) {
			t.Errorf("the monitor tool's description does not say that its end stops its command:\n%s", tool.Description)
		}
	}
	// The line comes once the monitor runs: a monitor of a task sees only
	// what is printed after it starts.
	up := filepath.Join(h.root, "up")
	server := decodeTask(t, h.mustQtask("run", "--bg", "--json", "--", awaitFile(up)+"; echo listening on 8080; sleep 300"))
	m := decodeTask(t, h.mustQtask("monitor", "--json", server.ID, "--max-events", "1", "--match", "listening on"))
	touch(t, up)
	if st := h.wait(m.ID); st.Status != tasks.StatusCompleted || st.Events != 1 || st.Error != "max events reached" {
		t.Errorf("the monitor ended %s (%q) with %d events, want completed after its one event", st.StatusText(), st.Error, st.Events)
	}
	if st := h.status(server.ID); !st.Running() {
		t.Errorf("the watched server is %s once its monitor ended, want it running", st.StatusText())
	}
	h.mustQtask("stop", server.ID)
}

// TestMCPArgumentErrorsNameTheTools: an MCP client reads its errors in
// the tools' terms: a bad name is the `name` argument (it read "choose a
// printable --name", a flag no tool has), and a monitor command ending in
// a bare '&' is told to drop it, as a monitor runs in the background
// already (it read "use `qtask run --bg`", a command an MCP-only client
// may have no shell to run) (found by a trial of monitors through MCP).
func TestMCPArgumentErrorsNameTheTools(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	cs, _ := h.mcpClient(nil)
	for _, c := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{"shell", map[string]any{"command": "echo hi", "name": "a\x07b"}, "choose a printable name"},
		{"monitor", map[string]any{"command": "echo hi", "name": strings.Repeat("n", 300)}, "choose a shorter name"},
		{"monitor", map[string]any{"command": "tail -f log &"}, "a monitor runs in the background already"},
		{"shell", map[string]any{"command": "sleep 9 &"}, "set is_background: true"},
	} {
		text, isErr := callTool(t, cs, c.tool, c.args)
		if !isErr || !strings.Contains(text, c.want) || strings.Contains(text, "--") || strings.Contains(text, "qtask run") {
			t.Errorf("%s %v: %q (error %v), want a tool error saying %q in the tool's terms", c.tool, c.args, text, isErr, c.want)
		}
	}
}

// TestMonitorOfATaskSaysHowTheTaskEnded: a monitor of a task ends when the
// task does, and its end says how the task ended: to an agent whose
// monitor watches another scope's task (a person's server), the server's
// crash read as the monitor "completed", exit 0 (found by a trial of
// monitors). ls says it too.
func TestMonitorOfATaskSaysHowTheTaskEnded(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	server := h.start("echo up; sleep 300")
	m := decodeTask(t, h.qtaskIn(h.root, []string{"QTASK_SCOPE=agent"}, "monitor", "--json", server.ID, "--match", "ERROR").stdout)
	h.mustQtask("stop", server.ID)
	want := "task " + server.ID + " ended: cancelled"
	if st := h.wait(m.ID); st.Status != tasks.StatusCompleted || st.Error != want {
		t.Errorf("the monitor ended %s (%q), want completed saying %q", st.StatusText(), st.Error, want)
	}
	inbox := h.qtaskIn(h.root, []string{"QTASK_SCOPE=agent"}, "agent", "inbox").stdout
	if !strings.Contains(inbox, "completed: "+want+".</summary>") || !strings.Contains(inbox, "<result>"+want+"</result>") {
		t.Errorf("the monitor's end notification does not say %q:\n%s", want, inbox)
	}
	if ls := h.mustQtask("ls", "--scope", "agent"); !strings.Contains(ls, "completed ("+want+", 0 events)") {
		t.Errorf("qtask ls does not say %q:\n%s", want, ls)
	}
}
