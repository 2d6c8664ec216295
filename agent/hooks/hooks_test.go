package hooks

import (
	"encoding/json"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/qtask/qtask/agent/route"
)

func TestClassify(t *testing.T) {
	cases := []struct {
		agent Agent
		event string
		want  Kind
	}{
		{Claude, "UserPromptSubmit", Context}, {Claude, "PostToolUse", Context}, {Claude, "SessionStart", Context},
		{Claude, "Stop", EndOfTurn}, {Claude, "AfterAgent", Ignored}, {Claude, "PreToolUse", Route}, {Claude, "", Ignored},
		{Qwen, "PreToolUse", Ignored}, {Gemini, "BeforeTool", Ignored}, {Gemini, "PreToolUse", Ignored},
		{Qwen, "UserPromptSubmit", Context}, {Qwen, "Stop", EndOfTurn}, {Qwen, "SubagentStop", Ignored},
		{Gemini, "BeforeAgent", Context}, {Gemini, "AfterTool", Context}, {Gemini, "SessionStart", Context},
		{Gemini, "AfterAgent", EndOfTurn}, {Gemini, "Stop", Ignored}, {Gemini, "UserPromptSubmit", Ignored},
	}
	for _, c := range cases {
		if got := c.agent.Classify(c.event); got != c.want {
			t.Errorf("%s %q classified %v, want %v", c.agent.Name, c.event, got, c.want)
		}
	}
}

func TestAnswer(t *testing.T) {
	if out := Claude.Answer("Stop", nil); out != nil {
		t.Errorf("Stop with nothing pending answered %q: a turn blocked without a reason", out)
	}
	if out := Gemini.Answer("PreCompress", []string{"<x/>"}); out != nil {
		t.Errorf("an ignored event answered %q", out)
	}
	var ctx map[string]map[string]string
	if err := json.Unmarshal(Qwen.Answer("PostToolUse", []string{"A", "B"}), &ctx); err != nil {
		t.Fatal(err)
	}
	if got := ctx["hookSpecificOutput"]; got["hookEventName"] != "PostToolUse" || got["additionalContext"] != "A\nB" {
		t.Errorf("context answer %v", ctx)
	}
	var block map[string]string
	if err := json.Unmarshal(Gemini.Answer("AfterAgent", []string{"<n/>"}), &block); err != nil {
		t.Fatal(err)
	}
	if block["decision"] != "block" || block["reason"] != stopLead+"<n/>" {
		t.Errorf("end-of-turn answer %v", block)
	}
}

func TestParseInput(t *testing.T) {
	in, err := ParseInput([]byte(`{"session_id":"abc","hook_event_name":"Stop","stop_hook_active":true,"extra":[1]}`))
	if err != nil || in.SessionID != "abc" || in.Event != "Stop" || !in.StopHookActive {
		t.Errorf("ParseInput = %+v, %v", in, err)
	}
	if in, err := ParseInput([]byte(" \n")); err != nil || !reflect.DeepEqual(in, Input{}) {
		t.Errorf("empty input = %+v, %v; want nothing, no error", in, err)
	}
	for _, bad := range []string{"{", "[1]", "null x", `"s"`} {
		if _, err := ParseInput([]byte(bad)); err == nil {
			t.Errorf("ParseInput(%q) accepted it", bad)
		}
	}
}

func TestBlockCounter(t *testing.T) {
	dir := t.TempDir()
	c := NewBlockCounter(dir, Agent{Name: "x", BlockCap: 2}, "s")
	for i := range 2 {
		if !c.Allow(i > 0) {
			t.Fatalf("block %d refused under a cap of 2", i+1)
		}
		c.Blocked()
	}
	if NewBlockCounter(dir, Agent{Name: "x", BlockCap: 2}, "s").Allow(true) {
		t.Error("a third consecutive block allowed under a cap of 2")
	}
	if !NewBlockCounter(dir, Agent{Name: "x", BlockCap: 2}, "other").Allow(true) {
		t.Error("another session's count applied")
	}
	if !c.Allow(false) {
		t.Error("a new turn (stop_hook_active false) did not start a new count")
	}
}

func TestRoute(t *testing.T) {
	dir := t.TempDir()
	bg := Input{SessionID: "s1", Event: "PreToolUse", ToolName: "Bash", ToolInput: shellCall(t, ShellCall{Command: "make", RunInBackground: true})}
	if out, err := Claude.Route(bg, Options{StateDir: dir, Routed: true}); out != nil || err != nil {
		t.Fatalf("Claude's PreToolUse answered %q (%v): it must never rewrite or decide", out, err)
	}
	if c, ok := route.TakeCall(filepath.Join(dir, "agent"), "s1", "make"); !ok || !c.Background {
		t.Errorf("a routed background call left no mark for the shell prefix")
	}
	Claude.Route(bg, Options{StateDir: dir, Routed: false})
	if _, ok := route.TakeCall(filepath.Join(dir, "agent"), "s1", "make"); ok {
		t.Errorf("a mark was left without routing")
	}
	// A call the user refuses leaves its mark (the hook runs before the
	// permission check); the next call of the command replaces it.
	fg := bg
	fg.ToolInput = shellCall(t, ShellCall{Command: "make", Timeout: 600000})
	Claude.Route(fg, Options{StateDir: dir, Routed: true})
	fg.ToolInput = shellCall(t, ShellCall{Command: "make"})
	Claude.Route(fg, Options{StateDir: dir, Routed: true})
	if c, ok := route.TakeCall(filepath.Join(dir, "agent"), "s1", "make"); !ok || c != (route.Call{}) {
		t.Errorf("a plain foreground call after a refused one left %+v, %v; want its own plain mark", c, ok)
	}
	fg.ToolInput = shellCall(t, ShellCall{Command: "make", Timeout: 300000})
	Claude.Route(fg, Options{StateDir: dir, Routed: true})
	if c, ok := route.TakeCall(filepath.Join(dir, "agent"), "s1", "make"); !ok || c != (route.Call{Timeout: 5 * time.Minute}) {
		t.Errorf("a foreground call with its own timeout left %+v, %v; want that timeout for the prefix", c, ok)
	}

	for _, other := range []Input{
		{SessionID: "s1", ToolName: "Read", ToolInput: shellCall(t, ShellCall{Command: "x", RunInBackground: true})},
		{SessionID: "s1", ToolName: "Bash", ToolInput: json.RawMessage(`{"command": 7, "run_in_background": true}`)},
	} {
		if out, err := Claude.Route(other, Options{StateDir: dir, Routed: true}); out != nil || err != nil {
			t.Errorf("%+v: %q %v", other, out, err)
		}
	}

	// The model's TaskStop leaves a stop mark for Claude's id of the call.
	stop := Input{SessionID: "s1", Event: "PreToolUse", ToolName: "TaskStop", ToolInput: json.RawMessage(`{"task_id": "bm94dz7b3"}`)}
	if out, err := Claude.Route(stop, Options{StateDir: dir, Routed: true}); out != nil || err != nil {
		t.Fatalf("Claude's PreToolUse for TaskStop answered %q (%v): it must never rewrite or decide", out, err)
	}
	if !route.TakeStop(filepath.Join(dir, "agent"), "s1", "bm94dz7b3") {
		t.Errorf("the model's TaskStop left no stop mark")
	}
	Claude.Route(stop, Options{StateDir: dir, Routed: false})
	if route.TakeStop(filepath.Join(dir, "agent"), "s1", "bm94dz7b3") {
		t.Errorf("a stop mark was left without routing")
	}
	if m := Claude.RouteMatcher(); m != "Bash|TaskStop" {
		t.Errorf("Claude's route matcher is %q", m)
	}
}

func shellCall(t *testing.T, c ShellCall) json.RawMessage {
	data, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// A tool whose input has fields of other types than the shell tool's must
// not make a hook's input unreadable.
func TestParseInputOtherToolInput(t *testing.T) {
	in, err := ParseInput([]byte(`{"hook_event_name":"PostToolUse","tool_name":"X","tool_input":{"command":7,"run_in_background":"yes"}}`))
	if err != nil || in.Event != "PostToolUse" {
		t.Fatalf("ParseInput: %+v %v", in, err)
	}
}
