package hooks

import (
	"encoding/json"
	"testing"
)

func TestClassify(t *testing.T) {
	cases := []struct {
		agent Agent
		event string
		want  Kind
	}{
		{Claude, "UserPromptSubmit", Context}, {Claude, "PostToolUse", Context}, {Claude, "SessionStart", Context},
		{Claude, "Stop", EndOfTurn}, {Claude, "AfterAgent", Ignored}, {Claude, "PreToolUse", Ignored}, {Claude, "", Ignored},
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
	if in, err := ParseInput([]byte(" \n")); err != nil || in != (Input{}) {
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
