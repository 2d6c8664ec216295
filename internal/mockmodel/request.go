package mockmodel

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Request is one request as it reached the mock: "what reached the model".
// The accessors read the conversation in whichever wire format it came.
type Request struct {
	Seq    int    // 1-based arrival order among all requests
	API    API    // the wire format, from the path
	Method string // the HTTP method
	Path   string // the path and query
	Body   []byte // the raw body
	Main   bool   // it offered tools, so it got the next scripted turn
	Reply  Reply  // what the mock answered (empty for counts and unknown paths)

	decoded map[string]any
}

// Reply is the answer the mock gave to a request.
type Reply struct {
	Text  string
	Calls []ToolCall
}

// ToolCall is a tool call as sent to the agent.
type ToolCall struct {
	ID   string
	Name string
	Args map[string]any
}

// String renders the reply compactly for failure messages.
func (r Reply) String() string {
	var parts []string
	if r.Text != "" {
		parts = append(parts, fmt.Sprintf("text %q", r.Text))
	}
	for _, c := range r.Calls {
		args, _ := json.Marshal(c.Args) // maps of JSON values always marshal
		parts = append(parts, fmt.Sprintf("call %s %s", c.Name, args))
	}
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, "; ")
}

// JSON returns the decoded body (nil when it was not a JSON object).
func (r Request) JSON() map[string]any { return r.decoded }

// ToolNames lists the names of the tools the request offers the model, in
// order: what the agent calls its shell tool, which MCP tools it passes on.
func (r Request) ToolNames() []string {
	var names []string
	for _, t := range r.tools() {
		if n, ok := t["name"].(string); ok {
			names = append(names, n)
		}
	}
	return names
}

// ToolSchema returns the JSON schema of the named tool's arguments, or nil
// when the request does not offer it.
func (r Request) ToolSchema(name string) map[string]any {
	for _, t := range r.tools() {
		if t["name"] != name {
			continue
		}
		for _, key := range []string{"input_schema", "parameters", "parametersJsonSchema"} {
			if s, ok := t[key].(map[string]any); ok {
				return s
			}
		}
	}
	return nil
}

// tools returns the offered tools flattened to objects with "name" and a
// schema, whatever the wire format nests them in.
func (r Request) tools() []map[string]any {
	var out []map[string]any
	for _, t := range objects(r.decoded["tools"]) {
		switch r.API {
		case OpenAI: // {"type":"function","function":{name, parameters}}
			if f, ok := t["function"].(map[string]any); ok {
				out = append(out, f)
			}
		case Gemini: // {"functionDeclarations":[{name, parameters…}]}
			out = append(out, objects(t["functionDeclarations"])...)
		default: // Anthropic: {name, input_schema}
			out = append(out, t)
		}
	}
	return out
}

// ToolResults returns the text of every tool result in the conversation the
// request carries, oldest first: the output the agent's tools produced, as
// the agent passed it on to the model.
func (r Request) ToolResults() []string {
	var out []string
	switch r.API {
	case Anthropic:
		for _, m := range objects(r.decoded["messages"]) {
			for _, b := range objects(m["content"]) {
				if b["type"] == "tool_result" {
					out = append(out, textOf(b["content"]))
				}
			}
		}
	case OpenAI:
		for _, m := range objects(r.decoded["messages"]) {
			if m["role"] == "tool" {
				out = append(out, textOf(m["content"]))
			}
		}
	case Gemini:
		for _, c := range objects(r.decoded["contents"]) {
			for _, p := range objects(c["parts"]) {
				if fr, ok := p["functionResponse"].(map[string]any); ok {
					out = append(out, strings.Join(stringLeaves(fr["response"]), "\n"))
				}
			}
		}
	}
	return out
}

// Texts returns every text part of the conversation (the user's and the
// model's turns, not the system prompt and not tool results), oldest first:
// where prompts and injected context reach the model.
func (r Request) Texts() []string {
	var out []string
	switch r.API {
	case Anthropic, OpenAI:
		for _, m := range objects(r.decoded["messages"]) {
			if m["role"] == "system" || m["role"] == "tool" {
				continue
			}
			if s, ok := m["content"].(string); ok {
				if s != "" { // an assistant turn that only called tools
					out = append(out, s)
				}
				continue
			}
			for _, b := range objects(m["content"]) {
				if s, ok := b["text"].(string); ok && (b["type"] == "text" || b["type"] == nil) {
					out = append(out, s)
				}
			}
		}
	case Gemini:
		for _, c := range objects(r.decoded["contents"]) {
			for _, p := range objects(c["parts"]) {
				if s, ok := p["text"].(string); ok {
					out = append(out, s)
				}
			}
		}
	}
	return out
}

// suggestionMode reports whether the request is qwen-code's prompt
// suggestion (its TUI asks, after a turn, what the user might type next):
// it offers the tools as a main turn does, but its last text starts with
// "[SUGGESTION MODE:", and it must not take a scripted turn.
func (r Request) suggestionMode() bool {
	texts := r.Texts()
	return len(texts) > 0 && strings.HasPrefix(texts[len(texts)-1], "[SUGGESTION MODE:")
}

// Count returns how many times s occurs in the string values of the body
// (system prompt, conversation, tool results, tool descriptions alike): a
// notification that reached the model exactly once counts 1 in the request
// that carries the whole conversation.
func (r Request) Count(s string) int {
	n := 0
	for _, v := range stringLeaves(any(r.decoded)) {
		n += strings.Count(v, s)
	}
	return n
}

// shellCall fills in a scripted shell call for this request's agent: the
// shell tool it offers, and the argument names its schema declares.
func (r Request) shellCall(c Call, args map[string]any) (string, map[string]any) {
	name := ""
	for _, n := range r.ToolNames() {
		for _, shell := range shellTools {
			if n == shell {
				name = n
			}
		}
	}
	if name == "" {
		// The agent answers a call of an unknown tool with an error result,
		// which makes the missing shell tool visible in the request log.
		return "mockmodel_no_shell_tool", args
	}
	args["command"] = c.Command
	props, _ := r.ToolSchema(name)["properties"].(map[string]any)
	if _, ok := props["is_background"]; ok { // qwen, gemini
		args["is_background"] = c.Background
	} else if c.Background {
		args["run_in_background"] = true // Claude
	}
	if _, ok := props["description"]; ok {
		if _, set := args["description"]; !set {
			args["description"] = "mockmodel scripted command"
		}
	}
	return name, args
}

// objects returns the JSON objects in v when v is an array.
func objects(v any) []map[string]any {
	arr, _ := v.([]any)
	var out []map[string]any
	for _, e := range arr {
		if m, ok := e.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out
}

// textOf reads message content that is either a string or a list of blocks.
func textOf(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	var parts []string
	for _, b := range objects(v) {
		if s, ok := b["text"].(string); ok {
			parts = append(parts, s)
		}
	}
	return strings.Join(parts, "\n")
}

// stringLeaves returns every string value inside v, depth first, object keys
// in sorted order (encoding/json's order, so results are stable).
func stringLeaves(v any) []string {
	switch x := v.(type) {
	case string:
		return []string{x}
	case []any:
		var out []string
		for _, e := range x {
			out = append(out, stringLeaves(e)...)
		}
		return out
	case map[string]any:
		var out []string
		for _, k := range slices.Sorted(maps.Keys(x)) {
			out = append(out, stringLeaves(x[k])...)
		}
		return out
	}
	return nil
}
