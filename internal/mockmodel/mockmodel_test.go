package mockmodel

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"reflect"
	"strings"
	"testing"
	"time"
)

// Request bodies as the agents send them (trimmed from real traffic): each
// offers its shell tool and carries one earlier tool result.
const (
	claudeBody = `{"model":"claude-x","stream":true,
 "system":[{"type":"text","text":"SYSTEM"}],
 "tools":[{"name":"Read","input_schema":{"type":"object"}},
  {"name":"Bash","input_schema":{"type":"object","properties":{"command":{},"timeout":{},"description":{},"run_in_background":{}}}}],
 "messages":[{"role":"user","content":[{"type":"text","text":"<system-reminder>ctx</system-reminder>"},{"type":"text","text":"PROMPT"}]},
  {"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"echo OUT"}}]},
  {"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"OUT"}]}]}`
	qwenBody = `{"model":"mock-model","stream":true,
 "tools":[{"type":"function","function":{"name":"run_shell_command","parameters":{"type":"object","properties":{"command":{},"is_background":{},"description":{}},"required":["command"]}}}],
 "messages":[{"role":"system","content":"SYSTEM"},{"role":"user","content":[{"type":"text","text":"PROMPT"}]},
  {"role":"assistant","content":"","tool_calls":[{"id":"c1","type":"function","function":{"name":"run_shell_command","arguments":"{}"}}]},
  {"role":"tool","tool_call_id":"c1","content":[{"type":"text","text":"Output: OUT"}]}]}`
	geminiBody = `{"systemInstruction":{"parts":[{"text":"SYSTEM"}]},
 "tools":[{"functionDeclarations":[{"name":"read_file"},{"name":"run_shell_command","parametersJsonSchema":{"type":"object","properties":{"command":{},"is_background":{},"dir_path":{}}}}]}],
 "contents":[{"role":"user","parts":[{"text":"PROMPT"}]},
  {"role":"model","parts":[{"functionCall":{"name":"run_shell_command","args":{"command":"echo OUT"}}}]},
  {"role":"user","parts":[{"functionResponse":{"name":"run_shell_command","response":{"output":"Output: OUT"}}}]}]}`
)

func start(t *testing.T, script ...Turn) *Server {
	t.Helper()
	s, err := Start(script...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

func post(t *testing.T, s *Server, path, body string) (*http.Response, string) {
	t.Helper()
	resp, err := http.Post(s.URL()+path, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, string(b)
}

type event struct {
	name string
	data string
}

// parseSSE splits a server-sent-events body into its events, failing on
// anything an SSE client would not accept.
func parseSSE(t *testing.T, body string) []event {
	t.Helper()
	var out []event
	var cur event
	sc := bufio.NewScanner(strings.NewReader(body))
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if cur.data == "" {
				t.Fatalf("event without data in %q", body)
			}
			out = append(out, cur)
			cur = event{}
		case strings.HasPrefix(line, "event: "):
			cur.name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			cur.data = strings.TrimPrefix(line, "data: ")
		default:
			t.Fatalf("not an SSE line: %q", line)
		}
	}
	if cur != (event{}) {
		t.Fatalf("unterminated event at the end of %q", body)
	}
	return out
}

func decode(t *testing.T, s string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatalf("not JSON: %q: %v", s, err)
	}
	return m
}

// pick reads a nested value by keys and array indexes.
func pick(v any, path ...any) any {
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, _ := v.(map[string]any)
			v = m[k]
		case int:
			a, _ := v.([]any)
			if k >= len(a) {
				return nil
			}
			v = a[k]
		}
	}
	return v
}

func TestAnthropicStreamsScriptedShellCall(t *testing.T) {
	s := start(t, Shell("echo hi"))
	resp, body := post(t, s, "/v1/messages", claudeBody)
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("Content-Type = %q", ct)
	}
	events := parseSSE(t, body)
	var names []string
	for _, e := range events {
		if got := decode(t, e.data)["type"]; got != e.name {
			t.Errorf("event %q carries type %v", e.name, got)
		}
		names = append(names, e.name)
	}
	want := []string{"message_start", "content_block_start", "content_block_delta", "content_block_stop", "message_delta", "message_stop"}
	if !reflect.DeepEqual(names, want) {
		t.Fatalf("events = %v, want %v", names, want)
	}
	start := decode(t, events[1].data)
	if pick(start, "content_block", "type") != "tool_use" || pick(start, "content_block", "name") != "Bash" {
		t.Errorf("block start = %v, want a Bash tool_use", start)
	}
	delta := decode(t, events[2].data)
	if pick(delta, "delta", "type") != "input_json_delta" {
		t.Fatalf("delta = %v", delta)
	}
	args := decode(t, pick(delta, "delta", "partial_json").(string))
	if args["command"] != "echo hi" || args["run_in_background"] != nil {
		t.Errorf("Bash input = %v, want command only", args)
	}
	if got := pick(decode(t, events[4].data), "delta", "stop_reason"); got != "tool_use" {
		t.Errorf("stop_reason = %v, want tool_use", got)
	}
}

func TestAnthropicTextReplyAndSideCall(t *testing.T) {
	s := start(t, Text("all done"))
	_, body := post(t, s, "/v1/messages", claudeBody)
	events := parseSSE(t, body)
	if got := pick(decode(t, events[2].data), "delta", "text"); got != "all done" {
		t.Errorf("text delta = %v", got)
	}
	if got := pick(decode(t, events[4].data), "delta", "stop_reason"); got != "end_turn" {
		t.Errorf("stop_reason = %v, want end_turn", got)
	}
	// A side call (no tools, not streamed) gets short text as one message
	// and does not consume the script.
	s.Push(Text("scripted"))
	_, body = post(t, s, "/v1/messages", `{"model":"m","max_tokens":1,"messages":[{"role":"user","content":"title?"}]}`)
	msg := decode(t, body)
	if msg["type"] != "message" || pick(msg, "content", 0, "text") != SideText {
		t.Errorf("side call reply = %v", msg)
	}
	_, body = post(t, s, "/v1/messages", claudeBody)
	if got := pick(decode(t, parseSSE(t, body)[2].data), "delta", "text"); got != "scripted" {
		t.Errorf("after a side call, main turn text = %v, want the next scripted turn", got)
	}
	_, body = post(t, s, "/v1/messages/count_tokens", claudeBody)
	if got := decode(t, body)["input_tokens"]; got == nil {
		t.Errorf("count_tokens = %s", body)
	}
	if n := len(s.MainTurns()); n != 2 {
		t.Errorf("main turns = %d, want 2 (side calls and counts are not main turns)", n)
	}
}

func TestOpenAIStreamsChunks(t *testing.T) {
	s := start(t, ShellBackground("sleep 9"), Text("fin"))
	_, body := post(t, s, "/v1/chat/completions", qwenBody)
	events := parseSSE(t, body)
	if last := events[len(events)-1]; last.data != "[DONE]" {
		t.Fatalf("last event = %q, want [DONE]", last.data)
	}
	var call map[string]any
	var finish any
	for _, e := range events[:len(events)-1] {
		c := decode(t, e.data)
		if c["object"] != "chat.completion.chunk" {
			t.Fatalf("chunk object = %v", c["object"])
		}
		if tc, ok := pick(c, "choices", 0, "delta", "tool_calls", 0).(map[string]any); ok {
			call = tc
		}
		if f := pick(c, "choices", 0, "finish_reason"); f != nil {
			finish = f
		}
	}
	if finish != "tool_calls" || pick(call, "function", "name") != "run_shell_command" || call["id"] == "" {
		t.Fatalf("finish = %v, call = %v", finish, call)
	}
	args := decode(t, pick(call, "function", "arguments").(string))
	if args["command"] != "sleep 9" || args["is_background"] != true {
		t.Errorf("arguments = %v, want the command with is_background true", args)
	}
	// Not streamed: one chat.completion.
	_, body = post(t, s, "/v1/chat/completions", strings.Replace(qwenBody, `"stream":true`, `"stream":false`, 1))
	c := decode(t, body)
	if c["object"] != "chat.completion" || pick(c, "choices", 0, "message", "content") != "fin" ||
		pick(c, "choices", 0, "finish_reason") != "stop" {
		t.Errorf("non-streamed reply = %v", c)
	}
}

func TestGeminiStreamAndGenerate(t *testing.T) {
	s := start(t, Shell("ls"), Tool("mcp_qtask_shell", map[string]any{"command": "x"}))
	_, body := post(t, s, "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse", geminiBody)
	events := parseSSE(t, body)
	if len(events) != 1 {
		t.Fatalf("events = %v, want one chunk", events)
	}
	c := decode(t, events[0].data)
	fc := pick(c, "candidates", 0, "content", "parts", 0, "functionCall")
	if pick(fc, "name") != "run_shell_command" || pick(fc, "args", "command") != "ls" || pick(fc, "args", "is_background") != false {
		t.Errorf("functionCall = %v", fc)
	}
	if c["modelVersion"] != "gemini-2.5-flash" || pick(c, "candidates", 0, "finishReason") != "STOP" {
		t.Errorf("chunk = %v", c)
	}
	_, body = post(t, s, "/v1beta/models/gemini-2.5-flash:generateContent", geminiBody)
	if got := pick(decode(t, body), "candidates", 0, "content", "parts", 0, "functionCall", "name"); got != "mcp_qtask_shell" {
		t.Errorf("generateContent call = %v, want the scripted MCP tool", got)
	}
	_, body = post(t, s, "/v1beta/models/gemini-2.5-flash:countTokens", `{}`)
	if decode(t, body)["totalTokens"] == nil {
		t.Errorf("countTokens = %s", body)
	}
}

func TestRequestAccessorsReadEachWireFormat(t *testing.T) {
	tests := []struct {
		path, body string
		tools      []string
		results    []string
		texts      []string
	}{
		{"/v1/messages", claudeBody, []string{"Read", "Bash"}, []string{"OUT"},
			[]string{"<system-reminder>ctx</system-reminder>", "PROMPT"}},
		{"/v1/chat/completions", qwenBody, []string{"run_shell_command"}, []string{"Output: OUT"},
			[]string{"PROMPT"}},
		{"/v1beta/models/m:generateContent", geminiBody, []string{"read_file", "run_shell_command"},
			[]string{"Output: OUT"}, []string{"PROMPT"}},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			s := start(t)
			post(t, s, tt.path, tt.body)
			r, ok := s.LastMain()
			if !ok {
				t.Fatalf("no main turn recorded: %s", s.Summary())
			}
			if got := r.ToolNames(); !reflect.DeepEqual(got, tt.tools) {
				t.Errorf("ToolNames = %q, want %q", got, tt.tools)
			}
			if got := r.ToolResults(); !reflect.DeepEqual(got, tt.results) {
				t.Errorf("ToolResults = %q, want %q", got, tt.results)
			}
			if got := r.Texts(); !reflect.DeepEqual(got, tt.texts) {
				t.Errorf("Texts = %q, want %q", got, tt.texts)
			}
			if n := r.Count("OUT"); n < 1 {
				t.Errorf("Count(OUT) = %d", n)
			}
			if n := r.Count("SYSTEM"); n != 1 {
				t.Errorf("Count(SYSTEM) = %d, want 1", n)
			}
			if r.Reply.Text != ExhaustedText {
				t.Errorf("reply past the script = %v, want the exhausted text", r.Reply)
			}
		})
	}
}

func TestShellCallWithoutShellToolIsVisible(t *testing.T) {
	s := start(t, Shell("true"))
	post(t, s, "/v1/messages", `{"tools":[{"name":"Read"}],"messages":[]}`)
	r, _ := s.LastMain()
	if len(r.Reply.Calls) != 1 || r.Reply.Calls[0].Name != "mockmodel_no_shell_tool" {
		t.Errorf("reply = %v, want a call the agent will reject by name", r.Reply)
	}
}

func TestLogOrderAndUnknownPaths(t *testing.T) {
	s := start(t)
	resp, _ := post(t, s, "/v1/embeddings", `{}`)
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("unknown path status = %d, want 404", resp.StatusCode)
	}
	resp, _ = post(t, s, "/v1/messages", `not json`)
	if resp.StatusCode != http.StatusBadRequest {
		t.Errorf("bad JSON status = %d, want 400", resp.StatusCode)
	}
	post(t, s, "/v1/messages", claudeBody)
	var paths []string
	for i, r := range s.Requests() {
		if r.Seq != i+1 {
			t.Errorf("request %d has Seq %d", i, r.Seq)
		}
		paths = append(paths, r.Path)
	}
	if want := []string{"/v1/embeddings", "/v1/messages", "/v1/messages"}; !reflect.DeepEqual(paths, want) {
		t.Errorf("logged paths = %q, want %q", paths, want)
	}
	if u, _ := url.Parse(s.URL()); u.Hostname() != "127.0.0.1" {
		t.Errorf("URL %s is not on loopback", s.URL())
	}
}

func TestWaitForWakesOnLaterRequest(t *testing.T) {
	s := start(t)
	post(t, s, "/v1/messages", `{"messages":[{"role":"user","content":"first"}]}`)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	got := make(chan Request, 1)
	go func() {
		r, err := s.WaitFor(ctx, func(r Request) bool { return r.Count("second") > 0 })
		if err != nil {
			t.Error(err)
		}
		got <- r
	}()
	post(t, s, "/v1/messages", `{"messages":[{"role":"user","content":"second"}]}`)
	if r := <-got; r.Seq != 2 {
		t.Errorf("WaitFor returned request %d, want 2", r.Seq)
	}
	short, cancelShort := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancelShort()
	if _, err := s.WaitFor(short, func(Request) bool { return false }); err == nil {
		t.Error("WaitFor with no match returned no error")
	}
}

// TestQwenSuggestionModeIsASideCall: qwen-code's TUI asks, after a turn,
// what the user might type next, in a request that offers the tools like a
// main turn; it must not take the next scripted turn (it once did, and a
// wake test counted it as a prompt the person had sent).
func TestQwenSuggestionModeIsASideCall(t *testing.T) {
	s := start(t, Text("scripted"))
	suggestion := strings.Replace(strings.Replace(qwenBody, `"stream":true`, `"stream":false`, 1),
		`"text":"PROMPT"`, `"text":"[SUGGESTION MODE: Suggest what the user might naturally type next.]"`, 1)
	_, body := post(t, s, "/v1/chat/completions", suggestion)
	if got := pick(decode(t, body), "choices", 0, "message", "content"); got != SideText {
		t.Errorf("a suggestion-mode request got %v, want the side text", got)
	}
	if n := len(s.MainTurns()); n != 0 {
		t.Errorf("a suggestion-mode request counted as %d main turns, want 0", n)
	}
	_, body = post(t, s, "/v1/chat/completions", strings.Replace(qwenBody, `"stream":true`, `"stream":false`, 1))
	if got := pick(decode(t, body), "choices", 0, "message", "content"); got != "scripted" {
		t.Errorf("the main turn after it got %v, want the scripted turn", got)
	}
}
