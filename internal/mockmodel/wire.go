package mockmodel

import (
	"encoding/json"
	"fmt"
	"net/http"
	"time"
)

// wire writes a Reply in one API's response format, streamed (server-sent
// events) or as one JSON document.
type wire interface {
	write(w http.ResponseWriter, r Reply, model string, seq int, stream bool)
}

func wireFor(api API) wire {
	switch api {
	case OpenAI:
		return openaiWire{}
	case Gemini:
		return geminiWire{}
	}
	return anthropicWire{}
}

// sse writes server-sent events, flushing each so the agent sees a stream.
type sse struct {
	w http.ResponseWriter
}

func newSSE(w http.ResponseWriter) sse {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	return sse{w: w}
}

// event writes one event; name may be empty (OpenAI and Gemini send bare
// data lines). A write error means the client hung up: nothing to do.
func (s sse) event(name string, data any) {
	b, ok := data.([]byte)
	if !ok {
		b, _ = json.Marshal(data) // maps of JSON values always marshal
	}
	if name != "" {
		fmt.Fprintf(s.w, "event: %s\n", name)
	}
	fmt.Fprintf(s.w, "data: %s\n\n", b)
	if f, ok := s.w.(http.Flusher); ok {
		f.Flush()
	}
}

// argsJSON is a call's arguments as the JSON text the APIs carry.
func argsJSON(c ToolCall) string {
	b, _ := json.Marshal(c.Args)
	return string(b)
}

// anthropicWire is the Messages API: message_start, a start/delta/stop triple
// per content block (text_delta, input_json_delta for tool_use), then
// message_delta with the stop_reason and message_stop.
type anthropicWire struct{}

func (anthropicWire) write(w http.ResponseWriter, r Reply, model string, seq int, stream bool) {
	stop := "end_turn"
	if len(r.Calls) > 0 {
		stop = "tool_use"
	}
	id := fmt.Sprintf("msg_mock_%d", seq)
	usage := map[string]any{"input_tokens": 10, "output_tokens": 5}
	if !stream {
		var content []any
		if r.Text != "" || len(r.Calls) == 0 {
			content = append(content, map[string]any{"type": "text", "text": r.Text})
		}
		for _, c := range r.Calls {
			content = append(content, map[string]any{"type": "tool_use", "id": c.ID, "name": c.Name, "input": c.Args})
		}
		writeJSON(w, map[string]any{
			"id": id, "type": "message", "role": "assistant", "model": model,
			"content": content, "stop_reason": stop, "stop_sequence": nil, "usage": usage,
		})
		return
	}
	s := newSSE(w)
	s.event("message_start", map[string]any{"type": "message_start", "message": map[string]any{
		"id": id, "type": "message", "role": "assistant", "model": model, "content": []any{},
		"stop_reason": nil, "stop_sequence": nil, "usage": map[string]any{"input_tokens": 10, "output_tokens": 1},
	}})
	index := 0
	block := func(start, delta map[string]any) {
		s.event("content_block_start", map[string]any{"type": "content_block_start", "index": index, "content_block": start})
		s.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": index, "delta": delta})
		s.event("content_block_stop", map[string]any{"type": "content_block_stop", "index": index})
		index++
	}
	if r.Text != "" || len(r.Calls) == 0 {
		block(map[string]any{"type": "text", "text": ""}, map[string]any{"type": "text_delta", "text": r.Text})
	}
	for _, c := range r.Calls {
		block(map[string]any{"type": "tool_use", "id": c.ID, "name": c.Name, "input": map[string]any{}},
			map[string]any{"type": "input_json_delta", "partial_json": argsJSON(c)})
	}
	s.event("message_delta", map[string]any{"type": "message_delta",
		"delta": map[string]any{"stop_reason": stop, "stop_sequence": nil}, "usage": map[string]any{"output_tokens": 5}})
	s.event("message_stop", map[string]any{"type": "message_stop"})
}

// openaiWire is Chat Completions: chat.completion.chunk data lines (content,
// then delta.tool_calls, then the finish_reason with usage) and data: [DONE].
type openaiWire struct{}

func (openaiWire) write(w http.ResponseWriter, r Reply, model string, seq int, stream bool) {
	finish := "stop"
	if len(r.Calls) > 0 {
		finish = "tool_calls"
	}
	id := fmt.Sprintf("chatcmpl-mock-%d", seq)
	created := time.Now().Unix()
	usage := map[string]any{"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
	var calls []any
	for i, c := range r.Calls {
		calls = append(calls, map[string]any{"index": i, "id": c.ID, "type": "function",
			"function": map[string]any{"name": c.Name, "arguments": argsJSON(c)}})
	}
	if !stream {
		msg := map[string]any{"role": "assistant", "content": r.Text}
		if len(calls) > 0 {
			msg["tool_calls"] = calls
		}
		writeJSON(w, map[string]any{
			"id": id, "object": "chat.completion", "created": created, "model": model,
			"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish}},
			"usage":   usage,
		})
		return
	}
	s := newSSE(w)
	chunk := func(delta map[string]any, finish any, usage any) {
		c := map[string]any{"id": id, "object": "chat.completion.chunk", "created": created, "model": model,
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}}
		if usage != nil {
			c["usage"] = usage
		}
		s.event("", c)
	}
	chunk(map[string]any{"role": "assistant", "content": r.Text}, nil, nil)
	if len(calls) > 0 {
		chunk(map[string]any{"tool_calls": calls}, nil, nil)
	}
	chunk(map[string]any{}, finish, usage)
	s.event("", []byte("[DONE]"))
}

// geminiWire is generateContent: one GenerateContentResponse, streamed as a
// single data line (the whole reply in one chunk, as a fast model would).
type geminiWire struct{}

func (geminiWire) write(w http.ResponseWriter, r Reply, model string, seq int, stream bool) {
	var parts []any
	if r.Text != "" || len(r.Calls) == 0 {
		parts = append(parts, map[string]any{"text": r.Text})
	}
	for _, c := range r.Calls {
		parts = append(parts, map[string]any{"functionCall": map[string]any{"id": c.ID, "name": c.Name, "args": c.Args}})
	}
	resp := map[string]any{
		"candidates": []any{map[string]any{
			"content":      map[string]any{"role": "model", "parts": parts},
			"finishReason": "STOP",
			"index":        0,
		}},
		"usageMetadata": map[string]any{"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15},
		"modelVersion":  model,
		"responseId":    fmt.Sprintf("mock-%d", seq),
	}
	if !stream {
		writeJSON(w, resp)
		return
	}
	newSSE(w).event("", resp)
}
