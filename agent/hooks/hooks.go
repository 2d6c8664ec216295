// Package hooks speaks the hook protocols of the coding agents qtask
// supports (Claude Code, qwen-code, gemini-cli): which of their events can
// carry task notifications, how to read what the agent sends on stdin, and
// how to answer so that the agent shows the model what ended, and when a
// turn may be blocked.
package hooks

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/qtask/qtask/agent"
	"github.com/qtask/qtask/agent/route"
	"github.com/qtask/qtask/config"
	"github.com/qtask/qtask/tasks"
)

// Agent is a coding agent whose hooks qtask answers.
type Agent struct {
	// Name is how the agent is named on qtask's command line.
	Name string
	// contextEvents may add context the model reads with its next request.
	contextEvents []string
	// stopEvent ends the agent's turn; blocking it makes the agent go on.
	stopEvent string
	// ShellTool is the name of the agent's shell tool. routeEvent fires
	// before a call of it, and of StopTool, which stops one of its
	// background calls, for routing (see Route); guardEvent, for an agent
	// qtask does not route, for the guard on the tool's own background
	// option (see Guard).
	routeEvent, guardEvent, ShellTool, StopTool string
	// BlockCap is how many consecutive Stop blocks the agent honours; it
	// overrides the next one, and what that block said would be lost.
	BlockCap int
	// AsyncRewake: the agent runs hooks marked asyncRewake in the
	// background and wakes its model with what one says when it exits 2
	// (Claude Code; see Rewake).
	AsyncRewake bool
	// sessionVar is the variable that names the session to the agent's
	// hooks, when the agent gives it neither to its shell commands nor to
	// its MCP servers (gemini-cli): the hooks then note the agent's
	// process for them (tasks.Store.NoteAgentProcess).
	sessionVar string
	// emptyInput is what the agent's TUI draws after the cursor in an
	// empty input box (its placeholder), by which a tmux wake tells the
	// box holds no text of a person's (tasks.AgentPresence.EmptyInput);
	// "" where qtask knows none, and a wake types nothing.
	emptyInput string
}

// The agents, as measured on their pinned releases (docs/AGENTS-TESTING.md):
// Claude Code overrides a Stop hook after 8 consecutive
// blocks, qwen-code overrides the 8th; gemini-cli names no cap, and is held
// to qwen's.
var (
	Claude = Agent{Name: "claude", contextEvents: []string{"UserPromptSubmit", "PostToolUse", "SessionStart"}, stopEvent: "Stop", BlockCap: 8,
		routeEvent: "PreToolUse", ShellTool: "Bash", StopTool: "TaskStop", AsyncRewake: true}
	Qwen = Agent{Name: "qwen", contextEvents: []string{"UserPromptSubmit", "PostToolUse", "SessionStart"}, stopEvent: "Stop", BlockCap: 7,
		guardEvent: "PreToolUse", ShellTool: "run_shell_command", emptyInput: tuiPlaceholder}
	Gemini = Agent{Name: "gemini", contextEvents: []string{"BeforeAgent", "AfterTool", "SessionStart"}, stopEvent: "AfterAgent", BlockCap: 7,
		guardEvent: "BeforeTool", ShellTool: "run_shell_command", emptyInput: tuiPlaceholder, sessionVar: "GEMINI_SESSION_ID"}
)

// tuiPlaceholder starts the text qwen-code 0.24.4 and gemini-cli 0.61.0
// draw right after the cursor in their empty input box ("Type your message
// or @path/to/file", captured from both TUIs in tmux); typed text replaces
// it. Its start only: a narrow pane wraps the rest.
const tuiPlaceholder = "Type your message"

// Agents lists the supported agents.
var Agents = []Agent{Claude, Qwen, Gemini}

// Lookup finds an agent by its command-line name.
func Lookup(name string) (Agent, error) {
	for _, a := range Agents {
		if a.Name == name {
			return a, nil
		}
	}
	return Agent{}, fmt.Errorf("unknown agent %q: want claude, qwen or gemini", name)
}

// Events lists the events qtask hooks into for the agent: the context
// events, then the end of turn.
func (a Agent) Events() []string { return append(slices.Clone(a.contextEvents), a.stopEvent) }

// StopEvent is the event that ends the agent's turn, where an asyncRewake
// waiter is armed.
func (a Agent) StopEvent() string { return a.stopEvent }

// RouteEvent is the event that fires before a call of the agent's shell
// tool, "" for an agent whose calls qtask does not route: qwen-code and
// gemini-cli offer neither a shell prefix nor a pre-tool rewrite that
// keeps their permission check on the model's command (docs/AGENTS.md).
func (a Agent) RouteEvent() string { return a.routeEvent }

// GuardEvent is the event that fires before a call of the agent's shell
// tool where qtask does not route it (qwen-code, gemini-cli): qtask's hook
// there denies the tool's own background option (Guard); "" for Claude.
func (a Agent) GuardEvent() string { return a.guardEvent }

// RouteMatcher is the agent's matcher of the tools whose calls the route
// event's hook reads: the shell tool, and the tool that stops one of its
// background calls.
func (a Agent) RouteMatcher() string {
	if a.StopTool == "" {
		return a.ShellTool
	}
	return a.ShellTool + "|" + a.StopTool
}

// Kind is what an event lets a hook do with notifications.
type Kind int

// The kinds of event.
const (
	// Ignored events get no answer.
	Ignored Kind = iota
	// Context events add the notifications to what the model reads next.
	Context
	// EndOfTurn events block the end of the turn while notifications are
	// pending, so the agent reads them and goes on.
	EndOfTurn
	// Route events come before a shell tool call, which is routed through
	// qtask (see Agent.Route).
	Route
	// Guard events come before a shell tool call of an agent qtask does
	// not route: a call asking for the tool's own background option is
	// denied (see Agent.Guard).
	Guard
)

// Classify says what the agent's event is for.
func (a Agent) Classify(event string) Kind {
	switch {
	case event == a.stopEvent:
		return EndOfTurn
	case event != "" && event == a.routeEvent:
		return Route
	case event != "" && event == a.guardEvent:
		return Guard
	case slices.Contains(a.contextEvents, event):
		return Context
	}
	return Ignored
}

// Input is what the agents send a command hook on stdin; the three agents
// share these field names.
type Input struct {
	SessionID      string `json:"session_id"`
	Event          string `json:"hook_event_name"`
	Cwd            string `json:"cwd"`
	TranscriptPath string `json:"transcript_path"`
	// StopHookActive is true on an end of turn that follows one a hook
	// blocked.
	StopHookActive bool `json:"stop_hook_active"`
	// ToolName and ToolInput describe the call a tool event is about;
	// ToolInput is read only for the shell tool (ShellCall), so that no
	// other tool's input can make a hook fail.
	ToolName  string          `json:"tool_name"`
	ToolInput json.RawMessage `json:"tool_input"`
}

// ShellCall is the input of Claude's Bash tool.
type ShellCall struct {
	Command         string  `json:"command"`
	RunInBackground bool    `json:"run_in_background"`
	Timeout         float64 `json:"timeout,omitempty"` // ms, the call's own
}

// InputDeadline is how long a hook waits for the agent's event on stdin.
// qwen-code and gemini-cli write the whole event and close stdin in one
// step as they start the hook (read in their hook runners), and even the
// largest event (maxInput) crosses a pipe in milliseconds: three seconds
// is far beyond a loaded machine's delay, yet short against the agents'
// own hook timeouts (a minute by default), so a stdin nobody closes costs
// the agent three seconds, not its hook timeout. Giving up costs little:
// nothing is consumed, and the next event delivers.
const InputDeadline = 3 * time.Second

// maxInput bounds what a hook reads from the agent: the JSON of one event,
// which holds at most the user's prompt (a transcript is passed by path,
// not inline). Past it the input cannot be parsed, the hook delivers
// nothing, and the notifications wait for the next event.
const maxInput = 32 << 20

// ReadInput reads the event the agent sends a hook on stdin: one JSON
// object, read until it is whole (stdin need not be closed after it), at
// most maxInput bytes, and for no longer than deadline or ctx. Empty input
// is no error (a hook run by hand with --event). When the deadline passes
// first, the error says so; a read still blocked is left behind.
func ReadInput(ctx context.Context, r io.Reader, deadline time.Duration) (Input, error) {
	late := fmt.Errorf("no whole event on stdin after %v, and stdin still open: the agent must send one JSON object and close stdin", deadline)
	return within(ctx, deadline, late, func() (Input, error) {
		var in Input
		err := json.NewDecoder(io.LimitReader(r, maxInput)).Decode(&in)
		if err == io.EOF {
			return Input{}, nil
		}
		if err != nil {
			return Input{}, fmt.Errorf("hook input is not a JSON object: %w", err)
		}
		return in, nil
	})
}

// within runs read in a goroutine of its own and waits for it at most d,
// and no longer than ctx: a read of a pipe that nobody closes, or of a file
// system that stopped answering, cannot be interrupted, so it is left
// behind (the hook exits without it). late is the error when d runs out
// first; ctx's cause when ctx ends first.
func within[T any](ctx context.Context, d time.Duration, late error, read func() (T, error)) (T, error) {
	ctx, cancel := context.WithTimeoutCause(ctx, d, late)
	defer cancel()
	type result struct {
		v   T
		err error
	}
	done := make(chan result, 1)
	go func() {
		v, err := read()
		done <- result{v, err}
	}()
	select {
	case r := <-done:
		return r.v, r.err
	case <-ctx.Done():
		var zero T
		return zero, context.Cause(ctx)
	}
}

// contextOutput is the answer that adds text to the model's next request.
type contextOutput struct {
	HookSpecificOutput struct {
		HookEventName     string `json:"hookEventName"`
		AdditionalContext string `json:"additionalContext"`
	} `json:"hookSpecificOutput"`
}

// blockOutput is the answer that keeps the agent from ending its turn.
type blockOutput struct {
	Decision string `json:"decision"`
	Reason   string `json:"reason"`
}

// stopLead opens a Stop block's reason: the agent reads it as the reason it
// may not stop yet.
const stopLead = "Background tasks you started have ended. Read their notifications below, act on them, then finish your answer.\n"

// Answer is the hook's stdout for event with the given envelopes pending,
// or nil when the hook has nothing to say (an ignored event, or nothing
// pending: a turn is never blocked without a reason).
func (a Agent) Answer(event string, envelopes []string) []byte {
	if len(envelopes) == 0 {
		return nil
	}
	text := strings.Join(envelopes, "\n")
	var v any
	switch a.Classify(event) {
	case Context:
		var out contextOutput
		out.HookSpecificOutput.HookEventName = event
		out.HookSpecificOutput.AdditionalContext = text
		v = out
	case EndOfTurn:
		v = blockOutput{Decision: "block", Reason: stopLead + text}
	default:
		return nil
	}
	data, _ := json.Marshal(v) // plain strings: cannot fail
	return append(data, '\n')
}

// BlockCounter counts an agent session's consecutive blocked ends of turn,
// in a file, because every hook is a new process: the agent overrides a
// block past its cap, and the notifications in an overridden block would
// never be read. They stay queued instead, for the next prompt.
type BlockCounter struct {
	path string
	cap  int
	n    int
}

// NewBlockCounter keeps the count for the agent session key in dir.
func NewBlockCounter(dir string, a Agent, key string) *BlockCounter {
	sum := sha256.Sum256([]byte(a.Name + "\x00" + key))
	return &BlockCounter{path: filepath.Join(dir, "stop-"+hex.EncodeToString(sum[:12])), cap: a.BlockCap}
}

// Allow reports whether one more block would be honoured. An end of turn
// that does not follow a block (stopHookActive false) starts a new count.
func (c *BlockCounter) Allow(stopHookActive bool) bool {
	c.n = 0
	if stopHookActive {
		if data, err := os.ReadFile(c.path); err == nil {
			c.n, _ = strconv.Atoi(strings.TrimSpace(string(data)))
		}
	}
	return c.n < c.cap
}

// Blocked records a block; Clear forgets the count. Errors are ignored: a
// lost count only makes a later block risk the agent's override.
func (c *BlockCounter) Blocked() {
	if os.MkdirAll(filepath.Dir(c.path), 0o700) != nil {
		return
	}
	f, err := os.OpenFile(c.path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC|syscall.O_NOFOLLOW, 0o600)
	if err == nil {
		fmt.Fprintln(f, c.n+1)
		f.Close()
	}
}

// Clear forgets the count.
func (c *BlockCounter) Clear() { os.Remove(c.path) }

// Options say whose notifications a hook delivers and how.
type Options struct {
	// Event overrides the input's hook_event_name.
	Event string
	// Scopes are whose notifications: the scopes the hook's environment
	// names for the agent (config.Env.AgentScopes; never a person's pane
	// or "default"), to which Handle adds the session's (SessionScopes)
	// unless OnlyScopes.
	Scopes     []string
	OnlyScopes bool
	// AgentSession is the session the hook's environment names
	// (config.Env.AgentSession): the agent ran the hook, so the process
	// above it is the agent's (see notedProcess).
	AgentSession string
	// Hold, at the end of a turn, first waits up to this long for the
	// scope's running tasks (headless runs end with the turn); Rewake
	// waits up to this long for a notification.
	Hold time.Duration
	// StateDir keeps the block counts (under agent/).
	StateDir string
	// Routed: Claude runs its Bash tool through qtask's shell prefix.
	Routed bool
	// Qtask is how the agent's shell tool runs qtask (its bare name when
	// the PATH finds this binary, else its path), for the line a Guard
	// denial tells the model to run.
	Qtask string
	// Pane and Server, when set (--wake tmux), are the agent's tmux pane
	// and server: the hook notes after each event whether the agent is now
	// idle there, for the settle that wakes it (tasks.AgentPresence).
	Pane, Server string
}

// Reply is a hook's answer: the bytes it writes, and the notifications
// they carry, claimed for it (tasks.Delivery) until Write has written them.
type Reply struct {
	// Data is the answer; empty when the hook has nothing to say.
	Data     []byte
	delivery *tasks.Delivery
}

// Write writes the reply to w (the hook's stdout; its stderr for a
// rewake) and only then removes its notifications from the queue: a write
// that fails puts them back for the next hook or reader, and is returned.
func (r Reply) Write(w io.Writer) error {
	return r.delivery.Deliver(func() error {
		if len(r.Data) == 0 {
			return nil
		}
		if _, err := w.Write(r.Data); err != nil {
			return fmt.Errorf("write the hook's answer: %w; its notifications stay queued", err)
		}
		return nil
	})
}

// Handle answers one hook event of agent a: the pending notifications of
// opts.Scopes, claimed, in the agent's answer shape (Reply.Write delivers
// them); an empty reply when there is nothing to say. At the end of a turn
// it blocks only while notifications are pending and the agent would
// honour one more block; otherwise they stay queued for the next prompt.
func (a Agent) Handle(ctx context.Context, store *tasks.Store, in Input, opts Options) (Reply, error) {
	event := opts.Event
	if event == "" {
		event = in.Event
	}
	kind := a.Classify(event)
	switch kind {
	case Ignored:
		return Reply{}, nil
	case Route:
		in.Event = event
		data, err := a.Route(in, opts)
		return Reply{Data: data}, err
	case Guard:
		return Reply{Data: a.Guard(in, opts.Qtask)}, nil
	}
	agentDir := filepath.Join(opts.StateDir, "agent")
	a.noteProcess(store, in, opts)
	if !opts.OnlyScopes {
		if event == "SessionStart" {
			a.RecordFork(ctx, agentDir, in)
		}
		opts.Scopes = append(a.SessionScopes(agentDir, in.SessionID), opts.Scopes...)
	}
	var counter *BlockCounter
	if kind == EndOfTurn {
		var allow bool
		if counter, allow = a.endOfTurn(ctx, store, agentDir, in, opts); !allow {
			return Reply{}, nil
		}
	}
	if err := ctx.Err(); err != nil {
		// Interrupted (the agent gave up on the hook, or the person
		// pressed Ctrl+C) while reading the transcript or holding: what
		// is queued stays queued, for a hook whose answer will be read.
		return Reply{}, err
	}
	mayIdle := opts.Pane != "" && (kind == EndOfTurn || event == "SessionStart")
	tookBack := false
	if mayIdle {
		var handedOff bool
		var err error
		if tookBack, handedOff, err = a.noteIdleFirst(ctx, store, opts); err != nil {
			return Reply{}, err
		}
		if handedOff {
			if counter != nil {
				counter.Clear()
			}
			return Reply{}, nil
		}
	}
	reply, err := a.answerQueued(ctx, store, event, opts.Scopes)
	if err != nil {
		return Reply{}, err
	}
	out := reply.Data
	if idle := mayIdle && (out == nil || event == "SessionStart"); opts.Pane != "" && (!idle || tookBack) {
		// Busy: any other event, or a turn kept going with what was read;
		// or idle again once the hook has passed on what it took back.
		store.NoteAgent(opts.Scopes, a.presence(idle, opts))
	}
	if counter != nil {
		if out != nil {
			counter.Blocked()
		} else {
			counter.Clear()
		}
	}
	return reply, nil
}

// noteProcess notes, for an agent that does not give its session to its
// shell commands and MCP servers, that its process works for the session
// of in (tasks.Store.NoteAgentProcess), so the tasks they start are the
// session's. Only when the agent itself ran the hook (its session
// variable in the hook's environment names in's session): a hook run by
// hand would note the person's shell. A note that cannot be written
// leaves those tasks the person's place, as before the agent's first
// hook; the hook goes on.
func (a Agent) noteProcess(store *tasks.Store, in Input, opts Options) {
	scope := config.SessionScope(a.Name, in.SessionID)
	if a.sessionVar == "" || scope == "" || opts.AgentSession != scope {
		return
	}
	store.NoteAgentProcess(a.sessionVar+"="+in.SessionID, scope)
}

// endOfTurn prepares an end of turn: the session's block counter, and
// whether one more block would be honoured (if not, the count starts again
// and the notifications stay queued for the next prompt). With a hold, it
// first waits for the scopes' running tasks, so a headless run hears of
// them before it exits.
func (a Agent) endOfTurn(ctx context.Context, store *tasks.Store, agentDir string, in Input, opts Options) (*BlockCounter, bool) {
	key := in.SessionID
	if key == "" {
		key = "scope:" + strings.Join(opts.Scopes, "\x00")
	}
	counter := NewBlockCounter(agentDir, a, key)
	if !counter.Allow(in.StopHookActive) {
		counter.Clear()
		return counter, false
	}
	if opts.Hold > 0 {
		holdForRunning(ctx, store, opts.Scopes, opts.Hold)
	}
	return counter, true
}

// noteIdleFirst notes the agent idle where it may go idle (its turn ends,
// or the session just started and waits for its first prompt) before the
// queue is read: a task that ends from now on finds it idle and wakes it.
// Noted after, a task ending in between found it busy and typed nothing,
// and the hook had nothing to pass on: the agent slept through it (seen in
// CI). What is queued by then, the hook passes on itself, once it has taken
// the idle note back (tookBack); if a settle took it first (handedOff),
// that settle's wake line brings the agent back for it.
func (a Agent) noteIdleFirst(ctx context.Context, store *tasks.Store, opts Options) (tookBack, handedOff bool, err error) {
	store.NoteAgent(opts.Scopes, a.presence(true, opts))
	pending, err := store.Notifications(ctx, opts.Scopes, tasks.NotifyOptions{Peek: true})
	if err != nil || len(pending.List) == 0 {
		return false, false, err
	}
	tookBack = store.TakeBackIdle(opts.Scopes)
	return tookBack, !tookBack, nil
}

// presence is what the hook notes about the agent for a tmux wake.
func (a Agent) presence(idle bool, opts Options) tasks.AgentPresence {
	return tasks.AgentPresence{Idle: idle, Pane: opts.Pane, Server: opts.Server, EmptyInput: a.emptyInput}
}

// answerQueued claims the scopes' pending notifications and answers event
// with them in the agent's shape (no Data: nothing to say).
func (a Agent) answerQueued(ctx context.Context, store *tasks.Store, event string, scopes []string) (Reply, error) {
	d, err := store.Notifications(ctx, scopes, tasks.NotifyOptions{TailBytes: agent.TailBytes})
	if err != nil {
		return Reply{}, err
	}
	return Reply{Data: a.Answer(event, envelopesOf(d.List)), delivery: d}, nil
}

// envelopesOf is the envelope of each notification of list.
func envelopesOf(list []*tasks.Notification) []string {
	envelopes := make([]string, len(list))
	for i, n := range list {
		envelopes[i] = agent.Envelope(n)
	}
	return envelopes
}

// holdForRunning waits up to hold for the scopes' running tasks to end, so
// that a headless run hears about the tasks it started before it exits.
// Whatever has not ended by then is left for a later prompt.
func holdForRunning(ctx context.Context, store *tasks.Store, scopes []string, hold time.Duration) {
	var ids []string
	for _, scope := range scopes {
		running, err := store.RunningIn(ctx, scope)
		if err != nil {
			return
		}
		ids = append(ids, running...)
	}
	if len(ids) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, hold)
	defer cancel()
	store.Wait(ctx, ids)
}

// Route answers Claude Code's PreToolUse for its Bash and TaskStop tools. Claude checks
// a PreToolUse rewrite as rewritten, so nothing is rewritten or decided
// here: Claude's calls reach qtask through its shell prefix, which cannot
// tell a background call (run_in_background) from a foreground one, nor
// see the call's own timeout. The hook leaves the prefix a mark
// (route.MarkCall): a background run is neither timed out nor announced
// by qtask (Claude announces its end itself); a foreground run with its
// own timeout is moved to the background a little before that one. Every
// routed call leaves one, a plain foreground call too: the hook runs
// before Claude's permission check, so a call the user refused leaves its
// mark, and the next call of the same command must replace it rather than
// take it.
//
// A call of StopTool (Claude's TaskStop: {"task_id": ID}) leaves a stop
// mark for Claude's task ID (route.MarkStop): the signal that then reaches
// that background call's prefix is the model's stop, which stops the
// task; any other is Claude ending, which the task outlives.
func (a Agent) Route(in Input, opts Options) ([]byte, error) {
	if !opts.Routed {
		return nil, nil
	}
	dir := filepath.Join(opts.StateDir, "agent")
	if a.StopTool != "" && in.ToolName == a.StopTool {
		var stop struct {
			TaskID string `json:"task_id"`
		}
		if json.Unmarshal(in.ToolInput, &stop) != nil || stop.TaskID == "" {
			return nil, nil
		}
		return nil, route.MarkStop(dir, in.SessionID, stop.TaskID)
	}
	var call ShellCall
	if in.ToolName != a.ShellTool || json.Unmarshal(in.ToolInput, &call) != nil || strings.TrimSpace(call.Command) == "" {
		return nil, nil
	}
	mark := route.Call{Background: call.RunInBackground, Timeout: time.Duration(call.Timeout * float64(time.Millisecond))}
	return nil, route.MarkCall(dir, in.SessionID, call.Command, mark)
}

// A resumed session keeps its id in all three agents (measured: `claude
// --resume`/`--continue`, `qwen --resume`/`--continue`, `gemini --resume`),
// so it keeps hearing its scope. A fork (`--fork-session`) gets a new id;
// qwen-code marks every message it copied with `"forkedFrom":{"sessionId":
// PARENT}` in the fork's transcript, which exists when the fork's
// SessionStart fires. The hook records the chain, and the fork hears its
// parent's tasks too. (Claude Code's fork names no parent, and writes its
// transcript only after SessionStart: a Claude fork hears its own tasks.)

// maxTranscriptScan bounds how much of a transcript is read for its parent:
// a fork's copied messages come first, so its head is all that is needed.
const maxTranscriptScan = 1 << 20

// transcriptDeadline bounds the time spent on it: a megabyte of a local
// file is read in milliseconds, and a file system that stopped answering
// must not keep the hook, and the agent waiting on it, from its answer.
const transcriptDeadline = time.Second

// SessionScopes are the scopes of the agent's session id: its own, then
// those of the sessions it was forked from, nearest first; none when id is
// empty. dir holds the recorded chains (RecordFork).
func (a Agent) SessionScopes(dir, id string) []string {
	own := config.SessionScope(a.Name, id)
	if own == "" {
		return nil
	}
	scopes := []string{own}
	if data, err := readSmallFile(chainPath(dir, own)); err == nil {
		for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
			if line != "" && !slices.Contains(scopes, line) {
				scopes = append(scopes, line)
			}
		}
	}
	return scopes
}

// RecordFork records, when the transcript of in's session says it was
// forked from another session, that the session hears the parent's scopes
// too. Errors are ignored: an unrecorded fork hears its own tasks. The
// transcript is read for at most transcriptDeadline, and no longer than
// ctx.
func (a Agent) RecordFork(ctx context.Context, dir string, in Input) {
	if in.SessionID == "" || in.TranscriptPath == "" {
		return
	}
	parent, err := within(ctx, transcriptDeadline, context.DeadlineExceeded, func() (string, error) {
		return forkedFrom(in.TranscriptPath), nil
	})
	if err != nil || parent == "" || parent == in.SessionID {
		return
	}
	chain := a.SessionScopes(dir, parent)
	if os.MkdirAll(dir, 0o700) != nil {
		return
	}
	writeSmallFile(chainPath(dir, config.SessionScope(a.Name, in.SessionID)), strings.Join(chain, "\n")+"\n")
}

// forkedFrom is the session a transcript's messages were copied from, ""
// when none says so, or when the path is not a regular file: the path
// comes with the event, and a FIFO would block the open, a device never
// end. A link is followed (where an agent keeps its transcripts is its
// own business): only what it leads to must be a regular file.
func forkedFrom(transcript string) string {
	f, err := openRegular(transcript, true)
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(io.LimitReader(f, maxTranscriptScan))
	sc.Buffer(make([]byte, 64<<10), maxTranscriptScan)
	for sc.Scan() {
		if !bytes.Contains(sc.Bytes(), []byte(`"forkedFrom"`)) {
			continue
		}
		var line struct {
			ForkedFrom struct {
				SessionID string `json:"sessionId"`
			} `json:"forkedFrom"`
		}
		if json.Unmarshal(sc.Bytes(), &line) == nil && line.ForkedFrom.SessionID != "" {
			return line.ForkedFrom.SessionID
		}
	}
	return ""
}

func chainPath(dir, scope string) string {
	sum := sha256.Sum256([]byte(scope))
	return filepath.Join(dir, "session-"+hex.EncodeToString(sum[:12]))
}

// readSmallFile reads a state file of the hooks, never through a link,
// and only a regular file.
func readSmallFile(path string) ([]byte, error) {
	f, err := openRegular(path, false)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, 64<<10))
}

// openRegular opens path for reading only if it is a regular file: what
// it names is looked at before it is opened, as opening a device can act
// (rewind a tape, arm a watchdog); the open does not block (a FIFO swapped
// in meanwhile would wait for a writer forever), and what was opened is
// checked again. follow: a link at path is followed, else refused.
func openRegular(path string, follow bool) (*os.File, error) {
	stat, flags := os.Lstat, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOFOLLOW
	if follow {
		stat, flags = os.Stat, os.O_RDONLY|syscall.O_NONBLOCK
	}
	if err := regular(stat(path)); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, flags, 0)
	if err != nil {
		return nil, err
	}
	if err := regular(f.Stat()); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// regular is a stat's error, or one if what it describes is not a regular
// file.
func regular(fi os.FileInfo, err error) error {
	if err == nil && !fi.Mode().IsRegular() {
		err = fmt.Errorf("%s is not a regular file (%v)", fi.Name(), fi.Mode().Type())
	}
	return err
}

// writeSmallFile replaces a state file of the hooks, never through a link.
func writeSmallFile(path, text string) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC|syscall.O_NOFOLLOW, 0o600)
	if err == nil {
		f.WriteString(text)
		f.Close()
	}
}

// wakeLead opens the text an asyncRewake hook wakes Claude with.
const wakeLead = "Background tasks you started have ended while you were idle. Read their notifications below and act on them.\n"

// Rewake is Claude Code's asyncRewake hook, armed at the end of each turn:
// while the session's scopes have running tasks, it waits (up to
// opts.Hold) for their next notification and returns the text to wake the
// model with (the hook writes it on stderr and exits 2); an empty reply
// when nothing runs, or nothing came in time. Claude runs it in the background in an
// interactive or streaming-input session, so it also fires while the agent
// works; the notification is consumed like any other, so whichever hook
// takes it first tells it, once. It waits only while tasks run: nothing
// else can end with a notification for the session, and a waiter with
// nothing to wait for would only hold a process (and an exiting headless
// run, which ends its async hooks and waits for them to go). One waiter
// per session: a new one stops the one before (armed at an earlier end of
// turn, it would run out sooner).
func (a Agent) Rewake(ctx context.Context, store *tasks.Store, in Input, opts Options) (Reply, error) {
	agentDir := filepath.Join(opts.StateDir, "agent")
	scopes := opts.Scopes
	if !opts.OnlyScopes {
		scopes = append(a.SessionScopes(agentDir, in.SessionID), scopes...)
	}
	release, err := takeOverWaiter(ctx, agentDir, a.Name+"\x00"+in.SessionID+"\x00"+strings.Join(scopes, "\x00"))
	if err != nil || release == nil {
		return Reply{}, err
	}
	defer release()
	ctx, cancel := context.WithTimeout(ctx, opts.Hold)
	defer cancel()
	nopts := tasks.NotifyOptions{TailBytes: agent.TailBytes}
	d := &tasks.Delivery{}
	for len(d.List) == 0 && ctx.Err() == nil {
		var ids []string
		for _, scope := range scopes {
			running, err := store.RunningIn(ctx, scope)
			if err != nil {
				return Reply{}, err
			}
			ids = append(ids, running...)
		}
		if len(ids) == 0 {
			// Nothing runs: what is pending now is all there will be.
			if d, err = store.Notifications(ctx, scopes, nopts); err != nil {
				return Reply{}, err
			}
			break
		}
		// Wait for a notification, or for the running tasks to end
		// without one (a task Claude itself announces), then look again.
		wctx, stop := context.WithCancel(ctx)
		go func() { store.Wait(wctx, ids); stop() }()
		d, err = store.WaitNotifications(wctx, scopes, nopts)
		stop()
		if err != nil && wctx.Err() == nil {
			return Reply{}, err
		}
	}
	if len(d.List) == 0 {
		return Reply{}, nil // nothing to wake for, out of time, or superseded
	}
	text := wakeLead + strings.Join(envelopesOf(d.List), "\n") + "\n"
	return Reply{Data: []byte(text), delivery: d}, nil
}

// takeOverWaiter makes this process the one waiter for key: it stops the
// previous waiter (a process running the same command line as this one,
// whose pid the lock file names) and takes the lock it held. release is
// nil when the lock could not be had in time (the waiter before did not
// let go): then this one does not wait.
func takeOverWaiter(ctx context.Context, dir, key string) (release func(), err error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	sum := sha256.Sum256([]byte(key))
	f, err := os.OpenFile(filepath.Join(dir, "wake-"+hex.EncodeToString(sum[:12])), os.O_RDWR|os.O_CREATE|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return nil, err
	}
	if data, err := io.ReadAll(io.LimitReader(f, 32)); err == nil {
		if pid, err := strconv.Atoi(strings.TrimSpace(string(data))); err == nil && sameCommand(pid) {
			syscall.Kill(pid, syscall.SIGTERM)
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	for syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) != nil {
		if time.Now().After(deadline) || ctx.Err() != nil {
			f.Close()
			return nil, nil
		}
		time.Sleep(20 * time.Millisecond) // the stopped waiter is exiting
	}
	f.Truncate(0)
	f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	return func() { f.Close() }, nil
}

// sameCommand reports whether pid is another process running this
// process's command line (an earlier waiter of the same hook).
func sameCommand(pid int) bool {
	if pid <= 0 || pid == os.Getpid() {
		return false
	}
	theirs, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	if err != nil {
		return false
	}
	ours, err := os.ReadFile("/proc/self/cmdline")
	return err == nil && bytes.Equal(theirs, ours)
}
