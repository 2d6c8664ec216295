package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/qtask/qtask/internal/agenttest"
	"github.com/qtask/qtask/internal/mockmodel"
	"github.com/qtask/qtask/internal/testenv"
)

// TestWakeTmuxTypesOnlyIntoAnIdleAgentsFreePane checks `--wake tmux`'s
// rules with a stand-in agent: a pane running a line reader that draws an
// input line as qwen's and gemini's TUIs do (a prompt, the cursor, then
// their placeholder), on the harness's tmux server, whose hooks (`qtask
// agent hook qwen --wake tmux`) are called by the test. A task ending
// while the agent is busy, while its pane is in copy mode, or while a
// person's half-typed prompt is in its input line types nothing (the
// person's prompt, sent, brings that notification, once); one ending
// while it is idle in a free pane with an empty input line types one
// line, naming the task; the next end, before the agent's hooks said it
// is idle again, types nothing.
func TestWakeTmuxTypesOnlyIntoAnIdleAgentsFreePane(t *testing.T) {
	t.Parallel()
	testenv.SkipShort(t, "a wake that finds the pane in copy mode, or a half-typed prompt, keeps looking for 2 s before it gives up; twice here")
	h := newHarness(t)
	scope := []string{"QTASK_SCOPE=wake-test"}
	pane, hook, screen := h.wakeablePane(scope)
	// endTask runs a background task in the agent's scope to its end, and
	// until its wrapper (which wakes the agent after the settle) is gone.
	endTask := func() string {
		t.Helper()
		r := h.qtaskIn(h.root, scope, "run", "--bg", "--json", "--", "true")
		var task struct {
			ID     string `json:"id"`
			PaneID string `json:"pane_id"`
		}
		if err := json.Unmarshal([]byte(r.stdout), &task); err != nil {
			t.Fatalf("run: %q %s", r.stdout, r.stderr)
		}
		h.wait(task.ID)
		eventually(t, "task "+task.ID+"'s window to close", func() bool {
			panes, err := h.tmux("list-panes", "-a", "-F", "#{pane_id}")
			return err == nil && !strings.Contains("\n"+panes+"\n", "\n"+task.PaneID+"\n")
		})
		return task.ID
	}
	hook("UserPromptSubmit") // busy
	busy := endTask()
	// The agent reads that end (else its Stop would be blocked with it,
	// and the agent busy again), then ends its turn: idle.
	if r := h.qtaskIn(h.root, scope, "agent", "inbox"); !strings.Contains(r.stdout, busy) {
		t.Fatalf("inbox: %q %s", r.stdout, r.stderr)
	}
	hook("Stop")
	if _, err := h.tmux("copy-mode", "-t", pane); err != nil {
		t.Fatal(err)
	}
	inMode := endTask()
	if _, err := h.tmux("send-keys", "-t", pane, "-X", "cancel"); err != nil {
		t.Fatal(err)
	}
	// The copy-mode end is passed on by the next prompt's hook; so is one
	// that ends while a person has half typed that prompt.
	const half = "please also check the lint resu"
	if _, err := h.tmux("send-keys", "-t", pane, "-l", half); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the half-typed prompt", func() bool { return strings.Contains(screen(), "> "+half) })
	halfTyped := endTask()
	if got := screen(); !strings.Contains(got, "> "+half+"file") || strings.Contains(got, "[qtask]") {
		t.Errorf("a task's end changed a half-typed prompt:\n%s", got)
	}
	if _, err := h.tmux("send-keys", "-t", pane, "-l", "lts"); err != nil {
		t.Fatal(err)
	}
	if _, err := h.tmux("send-keys", "-t", pane, "Enter"); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the person's prompt", func() bool { return strings.Contains(screen(), "read: "+half+"lts\n") })
	var told struct {
		HookSpecificOutput struct{ AdditionalContext string }
	}
	if out := hook("UserPromptSubmit"); json.Unmarshal([]byte(out), &told) != nil {
		t.Fatalf("the prompt hook's answer: %q", out)
	}
	for _, id := range []string{inMode, halfTyped} {
		if n := strings.Count(told.HookSpecificOutput.AdditionalContext, "<task-id>"+id+"</task-id>"); n != 1 {
			t.Errorf("the person's prompt brought task %s's notification %d times, want once:\n%s", id, n, told)
		}
	}
	hook("Stop")
	woken := endTask()
	eventually(t, "the wake line for "+woken, func() bool { return strings.Contains(screen(), "read: [qtask] task "+woken+" finished: completed") })
	after := endTask()
	got := screen()
	for what, id := range map[string]string{"busy": busy, "in copy mode": inMode, "half typed": halfTyped, "already woken": after} {
		if strings.Contains(got, id) {
			t.Errorf("a task that ended while the agent was %s was typed into its pane:\n%s", what, got)
		}
	}
	if n := strings.Count(got, "[qtask] task "); n != 2 { // the terminal's echo, and the reader's copy
		t.Errorf("%d wake lines on the agent's screen, want the one line, echoed:\n%s", n, got)
	}
}

// wakeablePane starts a pane on the harness's tmux server running a line
// reader that draws its input line as qwen's and gemini's TUIs do (a
// prompt, the cursor, their placeholder; what is typed overwrites it), as
// the pane of a qwen agent installed with --wake tmux in scope (an
// environment entry QTASK_SCOPE=…), and returns it, the agent's hook (fed
// an event name, it notes the agent busy or idle there and returns what it
// told the agent) and what the pane shows.
func (h *harness) wakeablePane(scope []string) (pane string, hook func(event string) string, screen func() string) {
	t := h.t
	t.Helper()
	// \0337 and \0338 save and restore the cursor: it stays before the
	// placeholder.
	reader := `while :; do printf '> \0337 Type your message or @path/to/file\0338'; IFS= read -r line || exit; printf 'read: %s\n' "$line"; done`
	if _, err := h.tmux("new-session", "-d", "-s", "agent", "-x", "200", "sh", "-c", reader); err != nil {
		t.Fatal(err)
	}
	pane, err := h.tmux("display-message", "-p", "-t", "agent", "#{pane_id}")
	if err != nil {
		t.Fatal(err)
	}
	hookEnv := append([]string{"TMUX=" + h.socket + ",1,0", "TMUX_PANE=" + pane}, scope...)
	hook = func(event string) string {
		t.Helper()
		in := `{"hook_event_name":"` + event + `","session_id":"s1"}`
		r := h.qtaskStdin(h.root, hookEnv, in, "agent", "hook", "qwen", "--wake", "tmux")
		if r.code != 0 || r.stderr != "" {
			t.Fatalf("hook %s: exit %d %s", event, r.code, r.stderr)
		}
		return r.stdout
	}
	screen = func() string {
		t.Helper()
		out, err := h.tmux("capture-pane", "-p", "-t", pane)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	eventually(t, "the stand-in's input line", func() bool { return strings.Contains(screen(), ">  Type your message") })
	return pane, hook, screen
}

// TestWakeTmuxWakesAnIdleAgentForAMonitorEvent: a monitor's event wakes
// an idle qwen or gemini installed with --wake tmux, as a task's end
// does (docs/REFERENCE.md: events are "delivered as task ends are"); only task ends
// woke it, so an agent that started a monitor and went idle heard of the
// line it was waiting for only at its next prompt (found by a trial of
// monitors). One line, once: the agent is busy once woken.
func TestWakeTmuxWakesAnIdleAgentForAMonitorEvent(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	scope := []string{"QTASK_SCOPE=wake-event"}
	_, hook, screen := h.wakeablePane(scope)
	hook("Stop") // idle
	release := filepath.Join(h.root, "release")
	r := h.qtaskIn(h.root, scope, "monitor", "--json", "--match", "ERROR", "--",
		"echo 'ERROR one'; "+awaitFile(release)+"; echo 'ERROR two'; sleep 300")
	m := decodeTask(t, r.stdout)
	eventually(t, "the wake line for the monitor's event", func() bool {
		return strings.Contains(screen(), "[qtask] monitor "+m.ID+" event 1. Read its notification.")
	})
	touch(t, release)
	eventually(t, "the second event", func() bool { return h.status(m.ID).Events == 2 })
	// The event is counted before its wake is tried: the screen is read
	// once the monitor's wrapper, which would type it, is gone.
	wrapper := h.awaitWrapper(m.ID).WrapperPID
	h.mustQtask("stop", m.ID)
	awaitDead(t, wrapper)
	if got := screen(); strings.Contains(got, "event 2") {
		t.Errorf("an event was typed into the pane of an agent already woken:\n%s", got)
	}
}

// TestRealAgentWakeTmuxWakesAnIdleQwen is issue 12's wake check for qwen-code, which
// has no async hooks: the pinned qwen runs as a TUI in a pane of a private
// tmux server, installed with `qtask agent install qwen --wake tmux`. A
// person types a prompt; the model starts a background task and ends its
// turn; the TUI sits idle. When the task ends, qtask types its one line into
// the pane, and the model's next request carries the task's notification
// exactly once (the prompt hook's context).
func TestRealAgentWakeTmuxWakesAnIdleQwen(t *testing.T) {
	t.Parallel()
	testWakeTmuxWakesAnIdleTUI(t, agenttest.Qwen, "--auth-type", "openai", "-m", "mock-model", "--yolo")
}

// TestRealAgentWakeTmuxWakesAnIdleGemini is the same for gemini-cli, whose TUI takes
// an Enter that follows the text within 30 ms for a newline: the wake line
// would sit in its input box, unsent, without TypeLine's pause.
func TestRealAgentWakeTmuxWakesAnIdleGemini(t *testing.T) {
	t.Parallel()
	testWakeTmuxWakesAnIdleTUI(t, agenttest.Gemini, "-m", "gemini-2.5-flash", "--yolo")
}

// gatedTaskInTUI is a real agent's TUI, installed with --wake tmux, whose
// model has started a background task that ends (exit 5, printing out)
// once gate is opened; the model's last turn answers with lastText.
type gatedTaskInTUI struct {
	h         *harness
	tui       *tui
	mock      *mockmodel.Server
	gate, out string
	ctx       context.Context
}

// startGatedTaskInTUI starts agent a's TUI (tuiArgs: its arguments for the
// mock model), prompts it to start the gated task and waits for the model
// to have run it.
func startGatedTaskInTUI(t *testing.T, a agenttest.Agent, lastText string, tuiArgs ...string) *gatedTaskInTUI {
	t.Helper()
	agenttest.Require(t, a)
	h := newHarness(t)
	proj := h.installedProject(a.Name, "--wake", "tmux")
	gate := filepath.Join(proj, "gate")
	if err := syscall.Mkfifo(gate, 0o600); err != nil {
		t.Fatal(err)
	}
	tag := fmt.Sprintf("%08x", rand.Uint32())
	mock := mockmodel.StartForTest(t,
		mockmodel.Shell(fmt.Sprintf("qtask run --agent --bg -- 'cat %s >/dev/null; echo out-t-$((6*7))-%s; exit 5'", gate, tag)),
		mockmodel.Text("Started it; I will hear when it ends."),
		mockmodel.Text(lastText),
	)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	t.Cleanup(cancel)
	tui := h.startTUI(ctx, a, proj, mock, tuiArgs...)
	tui.prompt("start the task")
	if _, err := mock.WaitFor(ctx, func(r mockmodel.Request) bool { return r.Main && len(r.ToolResults()) >= 1 }); err != nil {
		t.Fatalf("the task was not started: %v\nscreen:\n%s\nrequests:\n%s", err, tui.screen(), mock.Summary())
	}
	return &gatedTaskInTUI{h: h, tui: tui, mock: mock, gate: gate, out: "out-t-42-" + tag, ctx: ctx}
}

func testWakeTmuxWakesAnIdleTUI(t *testing.T, a agenttest.Agent, tuiArgs ...string) {
	g := startGatedTaskInTUI(t, a, "The task failed with exit 5.", tuiArgs...)
	tui, mock, out, ctx := g.tui, g.mock, g.out, g.ctx
	tui.awaitIdle("Started it")
	openGate(g.gate)
	woken, err := mock.WaitFor(ctx, func(r mockmodel.Request) bool { return r.Main && r.Count(out) > 0 })
	if err != nil {
		t.Fatalf("the idle %s was not woken: %v\nscreen:\n%s\nrequests:\n%s", a.Name, err, tui.screen(), mock.Summary())
	}
	if n := woken.Count(out); n != 1 {
		t.Errorf("the waking request carries the notification %d times, want 1\nrequests:\n%s", n, mock.Summary())
	}
	if n := woken.Count("[qtask] task "); n != 1 {
		t.Errorf("the waking request carries the typed line %d times, want 1\nrequests:\n%s", n, mock.Summary())
	}
}

// TestRealAgentWakeTmuxKeepsAHalfTypedPromptQwen is issue 25's check that
// a wake never types into an input box holding a person's text: with
// `--wake tmux`, a person had typed "please also check the lint resu" (no
// Enter) into qwen's idle TUI when a task ended, and qwen received
// "please also check the lint resu[qtask] task … finished: …" as a
// prompt. The half-typed prompt must stay as it is and unsent, and the
// notification come once, with the person's prompt when they send it.
func TestRealAgentWakeTmuxKeepsAHalfTypedPromptQwen(t *testing.T) {
	t.Parallel()
	testWakeTmuxKeepsAHalfTypedPrompt(t, agenttest.Qwen, "--auth-type", "openai", "-m", "mock-model", "--yolo")
}

// TestRealAgentWakeTmuxKeepsAHalfTypedPromptGemini is the same for
// gemini-cli's TUI.
func TestRealAgentWakeTmuxKeepsAHalfTypedPromptGemini(t *testing.T) {
	t.Parallel()
	testWakeTmuxKeepsAHalfTypedPrompt(t, agenttest.Gemini, "-m", "gemini-2.5-flash", "--yolo")
}

func testWakeTmuxKeepsAHalfTypedPrompt(t *testing.T, a agenttest.Agent, tuiArgs ...string) {
	g := startGatedTaskInTUI(t, a, "The task failed with exit 5; the lint results are next.", tuiArgs...)
	h, tui, mock, gate, out, ctx := g.h, g.tui, g.mock, g.gate, g.out, g.ctx
	task := h.lastTask()
	wrapper := h.awaitWrapper(task.ID).WrapperPID
	tui.awaitIdle("Started it")
	// The person starts the next prompt; the task ends meanwhile, and its
	// wrapper, which would type the wake line, is done.
	const half = "please also check the lint resu"
	tui.typeText(half)
	requests := len(mock.MainTurns())
	openGate(gate)
	h.wait(task.ID)
	awaitDead(t, wrapper)
	time.Sleep(time.Second) // what the TUI would do with typed keys, it does
	if got := tui.screen(); !strings.Contains(got, half) || strings.Contains(got, "[qtask]") {
		t.Errorf("a task's end changed the person's half-typed prompt:\n%s", got)
	}
	if n := len(mock.MainTurns()); n != requests {
		t.Fatalf("the half-typed prompt was sent: %d requests after the task's end, want %d\nrequests:\n%s", n, requests, mock.Summary())
	}
	// The person finishes and sends it: the notification comes with it.
	tui.typeText("lts")
	eventuallyWithin(t, 30*time.Second, "the whole prompt", func() bool { return strings.Contains(tui.screen(), half+"lts") }, tui.screen)
	tui.enter()
	sent, err := mock.WaitFor(ctx, func(r mockmodel.Request) bool { return r.Main && r.Count(half+"lts") > 0 })
	if err != nil {
		t.Fatalf("the person's prompt did not reach the model: %v\nscreen:\n%s\nrequests:\n%s", err, tui.screen(), mock.Summary())
	}
	if n := sent.Count(out); n != 1 {
		t.Errorf("the person's prompt carries the notification %d times, want 1\nrequests:\n%s", n, mock.Summary())
	}
	if n := sent.Count("[qtask] task "); n != 0 {
		t.Errorf("the person's prompt carries a wake line %d times, want none\nrequests:\n%s", n, mock.Summary())
	}
}

// openGate lets a task blocked reading the FIFO gate go on.
func openGate(gate string) {
	if f, err := os.OpenFile(gate, os.O_WRONLY, 0); err == nil {
		f.WriteString("go\n")
		f.Close()
	}
}

// tui is a real agent's TUI in a pane of the harness's tmux server.
type tui struct {
	h    *harness
	pane string
}

// startTUI runs agent a's TUI (tuiArgs: its arguments for the mock model)
// in a new session's pane of the harness's tmux server, in proj, as the
// isolated headless runs do (their environment and binary, the mock
// model), but with no prompt, no headless output and a real terminal,
// and waits for its input box.
func (h *harness) startTUI(ctx context.Context, a agenttest.Agent, proj string, mock *mockmodel.Server, tuiArgs ...string) *tui {
	t := h.t
	t.Helper()
	cmd := agenttest.Command(ctx, t, &agenttest.Run{Agent: a, Prompt: "-", Model: mock.URL(), Dir: proj, Home: filepath.Join(h.root, "agent-home"), Env: h.agentEnv()})
	script := "#!/bin/sh\nexec env -i TMUX=\"$TMUX\" TMUX_PANE=\"$TMUX_PANE\""
	for _, kv := range append(cmd.Env, "TERM=xterm-256color") {
		script += " " + shellQuoteTest(kv)
	}
	script += " " + shellQuoteTest(cmd.Path)
	for _, arg := range tuiArgs {
		script += " " + shellQuoteTest(arg)
	}
	script += "\n"
	launcher := filepath.Join(h.root, a.Name+"-tui")
	writeExecutable(t, launcher, []byte(script))
	if _, err := h.tmux("new-session", "-d", "-s", "agent", "-x", "150", "-y", "45", "-c", proj, launcher); err != nil {
		t.Fatal(err)
	}
	pane, err := h.tmux("display-message", "-p", "-t", "agent", "#{pane_id}")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.tmux("kill-session", "-t", "agent") })
	u := &tui{h: h, pane: pane}
	eventuallyWithin(t, 90*time.Second, a.Name+"'s input box", func() bool { return strings.Contains(u.screen(), "Type your message") }, u.screen)
	return u
}

func (u *tui) screen() string {
	s, _ := u.h.tmux("capture-pane", "-p", "-t", u.pane)
	return s
}

// typeText types text as a person would, and waits until it shows.
func (u *tui) typeText(text string) {
	t := u.h.t
	t.Helper()
	if _, err := u.h.tmux("send-keys", "-t", u.pane, "-l", text); err != nil {
		t.Fatal(err)
	}
	eventuallyWithin(t, 30*time.Second, "the typed text", func() bool { return strings.Contains(u.screen(), text) }, u.screen)
}

// enter presses Enter well after the last key, as a person does: gemini
// takes one within 30 ms of it for a pasted newline (see tmux.TypeLine).
func (u *tui) enter() {
	time.Sleep(100 * time.Millisecond)
	if _, err := u.h.tmux("send-keys", "-t", u.pane, "Enter"); err != nil {
		u.h.t.Fatal(err)
	}
}

// prompt types a prompt and sends it.
func (u *tui) prompt(text string) {
	u.h.t.Helper()
	u.typeText(text)
	u.enter()
}

// awaitIdle waits until the agent's turn has ended with last on the
// screen, its turn-end hook has noted it idle, and that hook has ended.
func (u *tui) awaitIdle(last string) {
	t, h := u.h.t, u.h
	t.Helper()
	eventuallyWithin(t, 60*time.Second, "the end of the agent's turn", func() bool { return strings.Contains(u.screen(), last) }, u.screen)
	// The screen shows the turn's last words before the agent's turn-end
	// hook has run: until it has noted the agent idle, a task ending is
	// passed on by that hook (correctly, once), with no line typed.
	eventuallyWithin(t, 30*time.Second, "the turn-end hook to note the agent idle", func() bool {
		presences, _ := filepath.Glob(filepath.Join(h.state, "agents", "*.json"))
		for _, p := range presences {
			if data, err := os.ReadFile(p); err == nil && strings.Contains(string(data), `"idle":true`) {
				return true
			}
		}
		return false
	}, u.screen)
	// And until that hook has ended: it notes the agent idle, then looks at
	// the queue, and passes on itself (correctly, once) what a task that
	// ended in between queued; under load that window is wide.
	eventuallyWithin(t, 30*time.Second, "the turn-end hook to end", func() bool { return len(h.hooksRunning()) == 0 }, u.screen)
}

// eventuallyWithin is eventually with its own deadline, showing what state
// shows when it runs out.
func eventuallyWithin(t *testing.T, d time.Duration, what string, cond func() bool, state func() string) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for: %s\n%s", what, state())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func shellQuoteTest(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// TestConfigWakeTmuxInstallsTheWake: config `wake = "tmux"` makes `qtask
// agent install` set the hooks up as --wake tmux does; the flag is not
// needed, and without the key the hooks do not note the pane.
func TestConfigWakeTmuxInstallsTheWake(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	for _, c := range []struct {
		config string
		want   bool
	}{{"", false}, {"wake = \"tmux\"\n", true}} {
		h.writeConfig(c.config)
		proj := t.TempDir()
		if r := h.qtaskIn(proj, nil, "agent", "install", "qwen"); r.code != 0 {
			t.Fatalf("install with config %q: exit %d %s", c.config, r.code, r.stderr)
		}
		data, err := os.ReadFile(filepath.Join(proj, ".qwen", "settings.json"))
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Count(string(data), "agent hook qwen --wake tmux"); (got > 0) != c.want {
			t.Errorf("config %q: %d hooks with --wake tmux, want them %v:\n%s", c.config, got, c.want, data)
		}
	}
}

// hooksRunning lists the agent hooks (`qtask agent hook …`) running for
// this harness's state directory.
func (h *harness) hooksRunning() []int {
	var pids []int
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, dir := range dirs {
		cmdline, err := os.ReadFile(filepath.Join(dir, "cmdline"))
		if err != nil {
			continue
		}
		argv := strings.Split(string(cmdline), "\x00")
		if len(argv) < 3 || filepath.Base(argv[0]) != "qtask" || argv[1] != "agent" || argv[2] != "hook" {
			continue
		}
		env, _ := os.ReadFile(filepath.Join(dir, "environ"))
		if !slices.Contains(strings.Split(string(env), "\x00"), "QTASK_STATE_DIR="+h.state) {
			continue
		}
		pid, _ := strconv.Atoi(filepath.Base(dir))
		pids = append(pids, pid)
	}
	return pids
}
