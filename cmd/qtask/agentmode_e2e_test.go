package main

import (
	"fmt"
	"regexp"
	"strings"
	"syscall"
	"testing"

	"github.com/qtask/qtask/internal/testenv"
)

// TestAgentModeRefusesLeadingSleep: in agent mode (--agent or
// QTASK_AGENT=1) a foreground command that starts by sleeping is refused
// with guidance and exit 2, and no task is started; a background run, a
// short sleep and a sleep later in the chain are not refused, and nothing
// changes without agent mode.
func TestAgentModeRefusesLeadingSleep(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	for _, c := range []struct {
		env  []string
		args []string
	}{
		{nil, []string{"run", "--agent", "--", "sleep 5 && echo late"}},
		{[]string{"QTASK_AGENT=1"}, []string{"run", "--", "sleep", "30"}},
		{[]string{"QTASK_AGENT=1"}, []string{"run", "--", "bash -c 'sleep 1m' # wait"}},
	} {
		r := h.qtaskIn(h.root, c.env, c.args...)
		if r.code != exitUsage || !strings.Contains(r.stderr, "refused") || !strings.Contains(r.stderr, "qtask run --bg") {
			t.Errorf("%v %v: exit %d %q; want %d and the guidance", c.env, c.args, r.code, r.stderr, exitUsage)
		}
		if strings.Contains(r.stderr, "--help") {
			t.Errorf("%v: the refusal is guidance for an agent, not a usage error: %q", c.args, r.stderr)
		}
	}
	if list := h.mustQtask("ls", "--json"); strings.TrimSpace(list) != "[]" {
		t.Fatalf("a refused command started a task:\n%s", list)
	}
	for _, args := range [][]string{
		{"run", "--agent", "--", "sleep 0.1 && echo short"},
		{"run", "--agent", "--", "echo first; sleep 0; echo later"},
	} {
		if r := h.qtask(args...); r.code != 0 {
			t.Errorf("%v: exit %d %q; want it run", args, r.code, r.stderr)
		}
	}
	bg := h.qtaskIn(h.root, []string{"QTASK_AGENT=1"}, "run", "--bg", "--", "sleep 5")
	if bg.code != 0 {
		t.Fatalf("a background sleep must run: exit %d %q", bg.code, bg.stderr)
	}
	h.mustQtask("stop", h.lastTask().ID)
	human := h.qtask("run", "--timeout", "100ms", "--", "sleep 5")
	if human.code != exitPromoted {
		t.Fatalf("without agent mode a sleep runs as any command: exit %d %q", human.code, human.stderr)
	}
	h.mustQtask("stop", h.lastTask().ID)
}

// TestAgentModeResults: agent mode words what `run` prints for an agent:
// the id, the output file, how to read, wait for and stop the task, and
// that its end will come as a notification; a foreground run moved to the
// background by its timeout says so; the long-running note speaks to the
// agent.
func TestAgentModeResults(t *testing.T) {
	testenv.SkipShort(t, "waits out a 2 s foreground timeout")
	t.Parallel()
	h := newHarness(t)
	r := h.qtask("run", "--agent", "--bg", "--", "echo hi")
	task := h.lastTask()
	if r.code != 0 {
		t.Fatalf("run --agent --bg: exit %d %q", r.code, r.stderr)
	}
	for _, want := range []string{
		"Started background task " + task.ID, task.OutputPath, "qtask logs " + task.ID,
		"qtask wait " + task.ID, "qtask stop " + task.ID, "<task-notification>",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("the agent's result of a background start lacks %q:\n%s", want, r.stdout)
		}
	}
	// qtask off the agent's PATH (installed by its full path, which the
	// hooks and routing use): the commands it is told must still run.
	r = h.qtaskIn(h.root, []string{"PATH=/usr/bin:/bin"}, "run", "--agent", "--bg", "--", "echo hi")
	task = h.lastTask()
	for _, want := range []string{qtaskBin + " logs " + task.ID, qtaskBin + " wait " + task.ID, qtaskBin + " stop " + task.ID} {
		if r.code != 0 || !strings.Contains(r.stdout, want) {
			t.Errorf("with qtask not on PATH, the agent's result lacks %q: exit %d\n%s", want, r.code, r.stdout)
		}
	}
	r = h.qtaskIn(h.root, []string{"PATH=/usr/bin:/bin"}, "run", "--agent", "--", "sleep 30")
	if r.code != exitUsage || !strings.Contains(r.stderr, qtaskBin+" run --bg") || !strings.Contains(r.stderr, qtaskBin+" wait ID") {
		t.Errorf("with qtask not on PATH, the sleep refusal's advice lacks its full path: exit %d\n%s", r.code, r.stderr)
	}
	gate := h.fifoGate() // the command ends after its timeout, never before
	r = h.qtaskIn(h.root, []string{"QTASK_AGENT=1"}, "run", "--timeout", "2s", "--", "echo begun; read x < "+gate+"; echo done")
	task = h.lastTask()
	if r.code != exitPromoted {
		t.Fatalf("a timed-out agent run: exit %d %q %q", r.code, r.stdout, r.stderr)
	}
	for _, want := range []string{
		"begun\n", "still running after 2s", "moved to the background as task " + task.ID,
		task.OutputPath, "qtask wait " + task.ID, "qtask stop " + task.ID, "<task-notification>",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("the agent's result of a timed-out run lacks %q:\n%s", want, r.stdout)
		}
	}
	h.openFifoGate(gate)
	h.wait(task.ID)
	// The note is for a run of at least half its timeout that ended by
	// itself; how many seconds it says depends on the machine's load,
	// hence room for any whole second up to the timeout.
	r = h.qtask("run", "--agent", "--timeout", "6s", "--", "echo start; sleep 3.1; echo x")
	if r.code != 0 || !regexp.MustCompile(`\[qtask\] This command ran for [3-5]s`).MatchString(r.stderr) || !strings.Contains(r.stderr, "background option") {
		t.Fatalf("the long-running note for an agent: exit %d %q", r.code, r.stderr)
	}
}

// TestAgentWindowsGoToTheQtaskSession: an agent's foreground command opens
// its window in the qtask session, not in the session of the agent's pane
// (agent_windows = "qtask", the default); with agent_windows = "current"
// it opens beside the caller as a person's does.
func TestAgentWindowsGoToTheQtaskSession(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	if _, err := h.tmux("new-session", "-d", "-s", "user"); err != nil {
		t.Fatal(err)
	}
	userPane, _ := h.tmux("display-message", "-p", "-t", "=user:", "#{pane_id}")
	env := []string{"QTASK_TMUX_SOCKET=", "TMUX=" + h.socket + ",1,0", "TMUX_PANE=" + userPane, "QTASK_AGENT=1"}
	for _, c := range []struct{ config, want string }{{"", "qtask"}, {"agent_windows = \"current\"\n", "user"}} {
		h.writeConfig(c.config)
		fg := h.runForeground(env, "--", "echo ready; read line")
		eventually(t, "ready", func() bool { return strings.Contains(fg.stdout.String(), "ready") })
		task := h.lastTask()
		where, _ := h.tmux("display-message", "-p", "-t", task.PaneID, "#{session_name}")
		if where != c.want {
			t.Errorf("with config %q an agent's foreground window opened in session %q, want %q", c.config, where, c.want)
		}
		h.tmux("send-keys", "-t", task.PaneID, "x", "Enter")
		if code := fg.wait(t); code != 0 {
			t.Fatalf("foreground run exited %d: %s", code, fmt.Sprint(fg.stdout.String()))
		}
	}
}

// TestAgentToldOfAStopFromElsewhere: an agent's foreground command that
// `qtask stop` ends (a person at the menu, say) comes back with its exit
// code and a note saying it was stopped, not that it failed; a command
// the agent itself interrupted (SIGINT to its qtask run) gets no note.
func TestAgentToldOfAStopFromElsewhere(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	const note = "did not end by itself"
	for _, c := range []struct {
		byCaller bool
		code     int
	}{{false, 143}, {true, 130}} {
		fg := h.runForeground([]string{"QTASK_AGENT=1"}, "--timeout", "0", "--", "echo ready; sleep 300")
		eventually(t, "ready", func() bool { return strings.Contains(fg.stdout.String(), "ready") })
		task := h.lastTask()
		if c.byCaller {
			fg.cmd.Process.Signal(syscall.SIGINT)
		} else {
			h.mustQtask("stop", task.ID)
		}
		code := fg.wait(t)
		told := strings.Contains(fg.stderr.String(), note) && strings.Contains(fg.stderr.String(), task.ID)
		if code != c.code || told == c.byCaller {
			t.Errorf("stopped by its own caller %v: exit %d (want %d), note %v; stderr %q", c.byCaller, code, c.code, told, fg.stderr.String())
		}
	}
}

// TestAgentModeMonitorResult: in agent mode (--agent or QTASK_AGENT=1),
// what `qtask monitor` prints is worded for an agent: its events and end
// come as notifications, nothing is to be polled, how it ends (a monitor
// of its own command stops that command; one of a task never touches the
// task) and how to stop it. The human wording sends the reader to `qtask
// agent inbox --wait 10m`, which would block an agent's shell and take
// the notifications its hooks deliver (found by an agent author's trial
// with qwen-code). Without agent mode the result is unchanged.
func TestAgentModeMonitorResult(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	own := h.qtaskIn(h.root, []string{"QTASK_AGENT=1"}, "monitor", "--match", "ERROR", "--max-events", "7", "--", "sleep 300")
	mon := h.lastTask()
	if own.code != 0 {
		t.Fatalf("QTASK_AGENT=1 monitor: exit %d %q", own.code, own.stderr)
	}
	for _, want := range []string{"Started monitor " + mon.ID, `matches "ERROR"`, "<task-notification>", "<kind>monitor</kind>",
		"do not poll", "after 7 events", "stops its command", "qtask stop " + mon.ID} {
		if !strings.Contains(own.stdout, want) {
			t.Errorf("the agent's result of a monitor start lacks %q:\n%s", want, own.stdout)
		}
	}
	app := h.mustQtask("run", "--bg", "--json", "--", "sleep 300")
	appID := h.lastTask().ID
	watch := h.qtask("monitor", "--agent", appID[:5], "--match", "panic")
	watcher := h.lastTask()
	if watch.code != 0 {
		t.Fatalf("monitor --agent ID: exit %d %q (run --bg printed %s)", watch.code, watch.stderr, app)
	}
	for _, want := range []string{"Each line task " + appID + " prints", "never touched", "qtask stop " + watcher.ID} {
		if !strings.Contains(watch.stdout, want) {
			t.Errorf("the agent's result of a monitor of a task lacks %q:\n%s", want, watch.stdout)
		}
	}
	for _, r := range []result{own, watch} {
		if strings.Contains(r.stdout, "inbox --wait") {
			t.Errorf("an agent is told to poll the inbox:\n%s", r.stdout)
		}
	}
	human := h.qtask("monitor", "--", "sleep 300")
	if human.code != 0 || !strings.Contains(human.stdout, "agent inbox --wait 10m") || strings.Contains(human.stdout, "<task-notification>") {
		t.Errorf("without agent mode: exit %d\n%s", human.code, human.stdout)
	}
	h.mustQtask("stop", "--all")
}
