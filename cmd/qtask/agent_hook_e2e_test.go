package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// hookAnswer is every field an agent reads from a hook's stdout.
type hookAnswer struct {
	Decision           string `json:"decision"`
	Reason             string `json:"reason"`
	HookSpecificOutput struct {
		HookEventName     string `json:"hookEventName"`
		AdditionalContext string `json:"additionalContext"`
	} `json:"hookSpecificOutput"`
}

// hook runs `qtask agent hook AGENT args...` as scope's agent with input
// on stdin, and decodes its answer (zero when it printed nothing).
func (h *harness) hook(scope, input string, args ...string) (hookAnswer, result) {
	h.t.Helper()
	r := h.qtaskStdin(h.root, []string{"QTASK_SCOPE=" + scope}, input, append([]string{"agent", "hook"}, args...)...)
	var a hookAnswer
	if strings.TrimSpace(r.stdout) != "" {
		if err := json.Unmarshal([]byte(r.stdout), &a); err != nil {
			h.t.Errorf("hook %v printed %q, not JSON: %v", args, r.stdout, err)
		}
	}
	return a, r
}

// endTask runs a task in scope to its end and returns its id.
func (h *harness) endTask(scope, command string) string {
	h.t.Helper()
	task := decodeTask(h.t, h.qtaskIn(h.root, []string{"QTASK_SCOPE=" + scope}, "run", "--bg", "--json", "--", command).stdout)
	h.wait(task.ID)
	return task.ID
}

// TestAgentHookInjectsContextOnce: each agent's prompt and tool events
// carry a pending notification to the model once, in that agent's answer
// shape; the hook firing again (qwen fires UserPromptSubmit up to three
// times a prompt) says nothing more.
func TestAgentHookInjectsContextOnce(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.writeConfig("shell = \"sh\"\n")
	for _, c := range []struct{ agent, event string }{
		{"claude", "UserPromptSubmit"}, {"claude", "PostToolUse"}, {"claude", "SessionStart"},
		{"qwen", "UserPromptSubmit"}, {"qwen", "PostToolUse"},
		{"gemini", "BeforeAgent"}, {"gemini", "AfterTool"}, {"gemini", "SessionStart"},
	} {
		scope := c.agent + "-" + c.event
		id := h.endTask(scope, "echo out-"+scope)
		input := `{"session_id":"s1","hook_event_name":"` + c.event + `","cwd":"/tmp"}`
		a, r := h.hook(scope, input, c.agent)
		ctx := a.HookSpecificOutput.AdditionalContext
		if r.code != 0 || a.HookSpecificOutput.HookEventName != c.event || a.Decision != "" ||
			strings.Count(ctx, "<task-id>"+id+"</task-id>") != 1 || !strings.Contains(ctx, "out-"+scope) {
			t.Errorf("%s %s with a task ended: exit %d, answer %s (stderr %q); want additionalContext with its notification",
				c.agent, c.event, r.code, r.stdout, r.stderr)
		}
		if again, r := h.hook(scope, input, c.agent); r.stdout != "" || again.HookSpecificOutput.AdditionalContext != "" {
			t.Errorf("%s %s fired again printed %q: the notification was delivered twice", c.agent, c.event, r.stdout)
		}
	}
}

// TestAgentHookEndOfTurn: Stop (gemini: AfterAgent) blocks only while
// notifications are pending, hands them over in the reason, and stops
// blocking before the agent's own cap would override it.
func TestAgentHookEndOfTurn(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.writeConfig("shell = \"sh\"\n")
	stop := `{"session_id":"s1","hook_event_name":"Stop","stop_hook_active":false}`
	if a, r := h.hook("A", stop, "claude"); r.stdout != "" || r.code != 0 || a.Decision != "" {
		t.Errorf("Stop with nothing pending: exit %d, %q; want no answer, so the turn ends", r.code, r.stdout)
	}
	id := h.endTask("A", "exit 4")
	a, r := h.hook("A", stop, "claude")
	if a.Decision != "block" || strings.Count(a.Reason, "<task-id>"+id+"</task-id>") != 1 || !strings.Contains(a.Reason, "<exit-code>4</exit-code>") {
		t.Errorf("Stop with a notification pending: %q; want a block whose reason carries it", r.stdout)
	}
	active := `{"session_id":"s1","hook_event_name":"Stop","stop_hook_active":true}`
	if _, r := h.hook("A", active, "claude"); r.stdout != "" {
		t.Errorf("Stop after the block, nothing new: %q; want no answer", r.stdout)
	}
	g := h.endTask("G", "true")
	a, r = h.hook("G", `{"session_id":"g1","hook_event_name":"AfterAgent"}`, "gemini")
	if a.Decision != "block" || !strings.Contains(a.Reason, "<task-id>"+g+"</task-id>") {
		t.Errorf("gemini AfterAgent with a notification pending: %q; want a block", r.stdout)
	}

	// qwen honours 7 consecutive blocks: the 8th is not attempted, and
	// what it would have said stays queued for the next prompt.
	qstop := func(active bool) (hookAnswer, result) {
		in := `{"session_id":"q1","hook_event_name":"Stop","stop_hook_active":false}`
		if active {
			in = strings.Replace(in, "false", "true", 1)
		}
		return h.hook("Q", in, "qwen")
	}
	for i := range 7 {
		h.endTask("Q", "true")
		if a, r := qstop(i > 0); a.Decision != "block" {
			t.Fatalf("qwen block %d: %q; want a block", i+1, r.stdout)
		}
	}
	last := h.endTask("Q", "true")
	if a, r := qstop(true); a.Decision != "" {
		t.Errorf("an 8th consecutive qwen block was attempted (%q): qwen overrides it and its notification would be lost", r.stdout)
	}
	a, _ = h.hook("Q", `{"session_id":"q1","hook_event_name":"UserPromptSubmit"}`, "qwen")
	if !strings.Contains(a.HookSpecificOutput.AdditionalContext, "<task-id>"+last+"</task-id>") {
		t.Errorf("the notification held back at the cap did not reach the next prompt: %+v", a)
	}
	// A fresh end of turn (not after a block) may block again.
	h.endTask("Q", "true")
	if a, r := qstop(false); a.Decision != "block" {
		t.Errorf("a new turn's Stop: %q; want a block", r.stdout)
	}
}

// TestAgentHookHold: with --hold, the end of a headless turn waits for the
// scope's running task and blocks with its notification.
func TestAgentHookHold(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.writeConfig("shell = \"sh\"\n")
	task := decodeTask(t, h.qtaskIn(h.root, []string{"QTASK_SCOPE=H"}, "run", "--bg", "--json", "--", "sleep 1; echo held-output").stdout)
	a, r := h.hook("H", `{"session_id":"h1","hook_event_name":"Stop"}`, "claude", "--hold", "60s")
	if a.Decision != "block" || !strings.Contains(a.Reason, "<task-id>"+task.ID+"</task-id>") || !strings.Contains(a.Reason, "held-output") {
		t.Errorf("Stop --hold with a task running: %q (stderr %q); want a block carrying its end", r.stdout, r.stderr)
	}
}

// TestAgentHookNeverWedgesTheAgent: an event qtask does not handle, input
// that is not JSON and an unusable state directory all exit 0 (a warning
// at most), and nothing is consumed by them.
func TestAgentHookNeverWedgesTheAgent(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.writeConfig("shell = \"sh\"\n")
	id := h.endTask("W", "true")
	if _, r := h.hook("W", `{"hook_event_name":"PreCompress"}`, "gemini"); r.code != 0 || r.stdout != "" || r.stderr != "" {
		t.Errorf("unknown event: exit %d, stdout %q, stderr %q; want exit 0 and silence", r.code, r.stdout, r.stderr)
	}
	if _, r := h.hook("W", `{"hook_event_name":`, "claude"); r.code != 0 || r.stdout != "" || !strings.Contains(r.stderr, "not a JSON object") {
		t.Errorf("malformed input: exit %d, stdout %q, stderr %q; want exit 0 and a warning", r.code, r.stdout, r.stderr)
	}
	r := h.qtaskStdin(h.root, []string{"QTASK_SCOPE=W", "QTASK_STATE_DIR=/dev/null/x"}, `{"hook_event_name":"Stop"}`, "agent", "hook", "claude")
	if r.code != 0 || r.stdout != "" || !strings.Contains(r.stderr, "nothing delivered") {
		t.Errorf("unusable state dir: exit %d, stdout %q, stderr %q; want exit 0 and a warning", r.code, r.stdout, r.stderr)
	}
	for _, args := range [][]string{{"codex"}, {"claude", "--bogus"}, {}} {
		if _, r := h.hook("W", `{}`, args...); r.code != 1 {
			t.Errorf("hook %q: exit %d; want 1 (2 would block a Claude turn)", args, r.code)
		}
	}
	if a, _ := h.hook("W", "", "claude", "--event", "UserPromptSubmit"); !strings.Contains(a.HookSpecificOutput.AdditionalContext, id) {
		t.Errorf("after the ignored calls, the notification of %s was gone: %+v", id, a)
	}
}
