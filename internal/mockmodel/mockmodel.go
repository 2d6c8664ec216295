// Package mockmodel is a scripted stand-in for the model APIs that the real
// coding agents (Claude Code, qwen-code, gemini-cli) talk to, so tests can
// run the pinned agents headless and offline and assert on what reached the
// model. It is test infrastructure, importable by the tests of any package.
//
// One server speaks all three streaming wire formats on a loopback port:
// Anthropic (POST /v1/messages, /v1/messages/count_tokens), OpenAI
// (POST /v1/chat/completions) and Gemini (POST /v1beta/models/M:
// streamGenerateContent?alt=sse, :generateContent, :countTokens). A request
// that offers tools is a main turn and gets the next scripted Turn; anything
// else (titles, summaries, quota probes) is a side call and gets short text.
// Every request is recorded in arrival order.
package mockmodel

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
)

// API names the wire format a request arrived in.
type API string

// The wire formats the server speaks; Unknown marks a path it does not serve.
const (
	Anthropic API = "anthropic"
	OpenAI    API = "openai"
	Gemini    API = "gemini"
	Unknown   API = "unknown"
)

// ExhaustedText is the final answer given to a main turn once the script has
// run out, so an agent that asks once too often ends its run instead of
// hanging; a test that sees it in a transcript knows its script was short.
const ExhaustedText = "mockmodel: script exhausted"

// SideText answers side calls (requests without tools).
const SideText = "mock"

// Turn is one scripted model reply to a main turn: optional text followed by
// zero or more tool calls. A Turn without calls ends the agent's turn.
type Turn struct {
	Text  string
	Calls []Call
	// Decide, if set, replaces the turn by what it returns for the request
	// being answered: a reply that depends on what the agent sent, such as
	// an id in the last tool result.
	Decide func(Request) Turn
}

// Call is one tool call. Shell calls name no tool: the server resolves them
// against the shell tool the request offers, because each agent names it and
// shapes its arguments differently (Claude `Bash` with run_in_background,
// qwen and gemini `run_shell_command` with is_background).
type Call struct {
	Name string         // the tool's name as the model sees it; empty for a shell call
	Args map[string]any // the arguments; for a shell call, extra arguments
	// Shell calls only:
	Command    string
	Background bool
}

// Text is a Turn that answers with text and calls nothing.
func Text(s string) Turn { return Turn{Text: s} }

// Shell is a Turn that calls the agent's own shell tool in the foreground.
func Shell(command string) Turn { return Turn{Calls: []Call{{Command: command}}} }

// ShellBackground is a Turn that asks the agent's shell tool to run command
// in the background.
func ShellBackground(command string) Turn {
	return Turn{Calls: []Call{{Command: command, Background: true}}}
}

// Tool is a Turn that calls the named tool (an MCP tool, say) with args.
func Tool(name string, args map[string]any) Turn {
	return Turn{Calls: []Call{{Name: name, Args: args}}}
}

// Func is a Turn decided when its request arrives, by decide.
func Func(decide func(Request) Turn) Turn { return Turn{Decide: decide} }

// shellTools are the names the agents give their shell tool.
var shellTools = []string{"Bash", "run_shell_command"}

// Server is a running mock model. Its methods are safe for concurrent use.
type Server struct {
	ln   net.Listener
	srv  *http.Server
	url  string
	done chan struct{}

	mu      sync.Mutex
	script  []Turn
	reqs    []Request
	changed chan struct{} // closed and replaced on every new request
	ids     int
}

// StartForTest is Start for a test: a failure to listen ends the test, and
// the server is closed when the test ends.
func StartForTest(t testing.TB, script ...Turn) *Server {
	t.Helper()
	s, err := Start(script...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

// Start serves the script on a free port of 127.0.0.1 (never on another
// interface: the agents are pointed at it with fake keys). Close it when done.
func Start(script ...Turn) (*Server, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("mockmodel: listen on loopback: %w", err)
	}
	s := &Server{
		ln:      ln,
		url:     "http://" + ln.Addr().String(),
		done:    make(chan struct{}),
		script:  script,
		changed: make(chan struct{}),
	}
	s.srv = &http.Server{Handler: http.HandlerFunc(s.serve)}
	go func() {
		defer close(s.done)
		_ = s.srv.Serve(ln) // returns http.ErrServerClosed on Close
	}()
	return s, nil
}

// URL is the server's base URL, "http://127.0.0.1:PORT", without a path:
// Claude and gemini take it as is, qwen (OpenAI) wants URL()+"/v1".
func (s *Server) URL() string { return s.url }

// Close stops the server; connections still streaming are cut.
func (s *Server) Close() {
	_ = s.srv.Close()
	<-s.done
}

// Push appends turns to the script, for tests that decide the next reply
// after seeing what the agent sent.
func (s *Server) Push(turns ...Turn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.script = append(s.script, turns...)
}

// Requests returns every request received so far, in arrival order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.reqs...)
}

// MainTurns returns the main-turn requests received so far, in order.
func (s *Server) MainTurns() []Request {
	var out []Request
	for _, r := range s.Requests() {
		if r.Main {
			out = append(out, r)
		}
	}
	return out
}

// LastMain returns the latest main-turn request, and false if none came.
func (s *Server) LastMain() (Request, bool) {
	m := s.MainTurns()
	if len(m) == 0 {
		return Request{}, false
	}
	return m[len(m)-1], true
}

// WaitFor blocks until a recorded request (one already received or a later
// one) satisfies match, and returns the first that does; it fails when ctx
// ends first. It wakes on each new request: no polling.
func (s *Server) WaitFor(ctx context.Context, match func(Request) bool) (Request, error) {
	seen := 0
	for {
		s.mu.Lock()
		reqs, changed := s.reqs[seen:], s.changed
		seen = len(s.reqs)
		s.mu.Unlock()
		for _, r := range reqs {
			if match(r) {
				return r, nil
			}
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return Request{}, fmt.Errorf("mockmodel: no matching request among %d received: %w", seen, ctx.Err())
		}
	}
}

// Summary describes every request received, one line each, for failure
// messages: what the agent sent and what it got back.
func (s *Server) Summary() string {
	var b strings.Builder
	for _, r := range s.Requests() {
		fmt.Fprintf(&b, "#%d %s %s %s main=%v tools=%d results=%q reply=%s\n",
			r.Seq, r.API, r.Method, r.Path, r.Main, len(r.ToolNames()), r.ToolResults(), r.Reply)
	}
	return b.String()
}

// serve records the request, decides the reply and writes it in the wire
// format of the path it came to.
func (s *Server) serve(w http.ResponseWriter, req *http.Request) {
	body, err := io.ReadAll(req.Body)
	if err != nil {
		http.Error(w, "read body: "+err.Error(), http.StatusBadRequest)
		return
	}
	r := Request{Method: req.Method, Path: req.URL.RequestURI(), Body: body}
	route := classify(req)
	r.API = route.api
	var decoded map[string]any
	if len(body) > 0 && json.Unmarshal(body, &decoded) != nil && route.kind != kindNone {
		route.kind = kindBadJSON
	}
	r.decoded = decoded
	r.Main = route.kind == kindGenerate && len(r.ToolNames()) > 0 && !r.suggestionMode()

	var turn Turn
	switch {
	case r.Main:
		turn = s.next()
		if turn.Decide != nil {
			turn = turn.Decide(r)
		}
		r.Reply = s.resolve(turn, &r)
	case route.kind == kindGenerate:
		r.Reply = Reply{Text: SideText}
	}
	s.record(&r)

	switch route.kind {
	case kindNone:
		http.Error(w, "mockmodel: no such endpoint", http.StatusNotFound)
	case kindBadJSON:
		http.Error(w, "mockmodel: body is not a JSON object", http.StatusBadRequest)
	case kindCount:
		writeJSON(w, countTokens(route.api))
	case kindGenerate:
		stream := route.stream || decoded["stream"] == true
		model := route.model
		if m, ok := decoded["model"].(string); ok && model == "" {
			model = m
		}
		wireFor(route.api).write(w, r.Reply, model, r.Seq, stream)
	}
}

// next takes the next scripted turn, or the exhausted answer.
func (s *Server) next() Turn {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.script) == 0 {
		return Text(ExhaustedText)
	}
	t := s.script[0]
	s.script = s.script[1:]
	return t
}

// resolve turns a scripted Turn into the concrete reply for this request:
// shell calls get the agent's shell tool name and argument shape, every call
// an id.
func (s *Server) resolve(t Turn, r *Request) Reply {
	out := Reply{Text: t.Text}
	for _, c := range t.Calls {
		name, args := c.Name, map[string]any{}
		for k, v := range c.Args {
			args[k] = v
		}
		if name == "" {
			name, args = r.shellCall(c, args)
		}
		out.Calls = append(out.Calls, ToolCall{ID: s.newID(), Name: name, Args: args})
	}
	return out
}

func (s *Server) newID() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ids++
	return fmt.Sprintf("mock_call_%d", s.ids)
}

func (s *Server) record(r *Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r.Seq = len(s.reqs) + 1
	s.reqs = append(s.reqs, *r)
	close(s.changed)
	s.changed = make(chan struct{})
}

// requestKind is what a path asks for.
type requestKind int

const (
	kindNone     requestKind = iota // not an endpoint we serve
	kindGenerate                    // a model reply
	kindCount                       // a token count
	kindBadJSON                     // a served endpoint with an unreadable body
)

type route struct {
	api    API
	kind   requestKind
	stream bool   // the path itself asks for a stream (Gemini)
	model  string // the model named in the path (Gemini)
}

func classify(req *http.Request) route {
	p := req.URL.Path
	if req.Method != http.MethodPost {
		return route{api: Unknown}
	}
	switch {
	case p == "/v1/messages":
		return route{api: Anthropic, kind: kindGenerate}
	case p == "/v1/messages/count_tokens":
		return route{api: Anthropic, kind: kindCount}
	case strings.HasSuffix(p, "/chat/completions"):
		return route{api: OpenAI, kind: kindGenerate}
	}
	// Gemini: /v1beta/models/MODEL:method (also /v1/…).
	if i := strings.Index(p, "/models/"); i >= 0 {
		model, method, ok := strings.Cut(p[i+len("/models/"):], ":")
		if ok {
			switch method {
			case "streamGenerateContent":
				return route{api: Gemini, kind: kindGenerate, stream: true, model: model}
			case "generateContent":
				return route{api: Gemini, kind: kindGenerate, model: model}
			case "countTokens":
				return route{api: Gemini, kind: kindCount, model: model}
			}
		}
	}
	return route{api: Unknown}
}

func countTokens(api API) any {
	if api == Gemini {
		return map[string]any{"totalTokens": 42}
	}
	return map[string]any{"input_tokens": 42}
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v) // a client that hung up needs no answer
}
