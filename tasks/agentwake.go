package tasks

import (
	"context"
	"time"

	"github.com/qtask/qtask/tasks/notify"
	"github.com/qtask/qtask/tmux"
)

// Waking an idle coding agent by typing into its pane (`--wake tmux`, for
// agents without async hooks: qwen-code, gemini-cli). The agent's hooks,
// installed with --wake tmux, note after every event whether the agent is
// now idle (its turn ended) or busy, and its tmux pane, under each of its
// scopes. When a task's notification is queued for such a scope and the
// agent is idle, the settling process types one short line into the pane;
// the agent takes it as a prompt, and its prompt hook injects the full
// notification. Never into a busy agent's pane (the line would land in its
// input, or be read as an answer), nor into a pane in a mode (copy mode
// would take the keys as commands), nor into an input box that holds text:
// a person's half-typed prompt and the line would be sent as one. The pane
// is read first (notify.InputReady), and the line typed only where the
// agent's TUI draws its empty input box; otherwise the notification waits
// for the person's own prompt, whose hook delivers it.

// AgentPresence is what an agent's hooks last said about it.
type AgentPresence = notify.Presence

// NoteAgent records p for each of scopes, for the wake of a later settle.
func (s *Store) NoteAgent(scopes []string, p AgentPresence) error {
	return s.queue.NoteAgent(scopes, p)
}

// TakeBackIdle takes back, for each of scopes, the idle presence the
// agent's own hook has just noted, so that no settle types a wake line
// while the hook passes the queued notifications on itself. It reports
// false if a settle took one first: that settle is typing its wake line,
// and the prompt it types will carry what is queued.
func (s *Store) TakeBackIdle(scopes []string) bool {
	return s.queue.TakeBackIdle(scopes)
}

// wakeTimeout bounds the wake: a few tmux calls, and waiting for the
// typed line to show before its Enter (tmux.TypeLine).
const wakeTimeout = 10 * time.Second

// wakeAgent types the wake line for r's end into the pane of r's scope's
// agent: see wakeFor.
func (s *Store) wakeAgent(r *record) {
	s.wakeFor(r, notify.Notice{ID: r.ID, Scope: r.Scope}, notify.WakeLine(r.ID, r.StatusText()))
}

// wakeForEvent types the wake line for r's count-th event, as for an end:
// a monitor's events are delivered as task ends are, and an idle agent
// left waiting on a line it asked to be told of heard of it only at its
// next prompt.
func (s *Store) wakeForEvent(r *record, count int) {
	s.wakeFor(r, notify.Notice{ID: r.ID, Scope: r.Scope, Event: &Event{Count: count}}, notify.EventWakeLine(r.ID, count))
}

// wakeFor types line into the pane of r's scope's agent, when the queue
// entry of n still waits unread, the agent asked for it and is
// idle, and its pane shows no mode and an empty input box. Errors are
// ignored: the agent hears at its next prompt all the same.
func (s *Store) wakeFor(r *record, n notify.Notice, line string) {
	if !s.queue.Waiting(n) {
		return // nothing queued (a foreground run told its caller), or already read
	}
	p, ok := s.queue.ClaimIdleAgent(r.Scope)
	if !ok {
		return
	}
	server, err := tmux.ParseServer(p.Server)
	if err != nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), wakeTimeout)
	defer cancel()
	pane := tmux.PaneID(p.Pane)
	if !notify.InputReady(ctx, server, pane, p.EmptyInput) {
		// Still idle: a later end may find the pane free and the box
		// empty; the person's own prompt delivers the notification.
		s.queue.NoteAgent([]string{r.Scope}, p)
		return
	}
	server.TypeLine(ctx, pane, line)
}
