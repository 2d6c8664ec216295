package tasks

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/qtask/qtask/tmux"
)

// The hook that noted its agent idle takes the note back before passing
// queued notifications on itself; once a settle has taken it (to type its
// wake line), the hook cannot, and leaves them to the wake.
func TestTakeBackIdle(t *testing.T) {
	s := newTestStore(t)
	scopes := []string{"qwen:s1", "pane:%3"}
	idle := AgentPresence{Idle: true, Pane: "%3", Server: "/tmp/sock"}
	if err := s.NoteAgent(scopes, idle); err != nil {
		t.Fatal(err)
	}
	if !s.TakeBackIdle(scopes) {
		t.Fatal("TakeBackIdle of the hook's own idle note = false, want true")
	}
	for _, scope := range scopes {
		var p AgentPresence
		data, err := os.ReadFile(s.presencePath(scope))
		if err != nil || json.Unmarshal(data, &p) != nil || p.Idle || p.Pane != "%3" {
			t.Fatalf("presence of %s after the take-back: %s (%v), want busy in %%3", scope, data, err)
		}
	}
	// A settle took the note first: it is busy now.
	if err := s.NoteAgent(scopes, idle); err != nil {
		t.Fatal(err)
	}
	if _, ok := s.claimIdleAgent(scopes[0]); !ok {
		t.Fatal("the settle's claim failed")
	}
	if s.TakeBackIdle(scopes) {
		t.Fatal("TakeBackIdle after a settle claimed the agent = true, want false")
	}
}

// An input box is empty when its cursor is followed by the placeholder the
// hooks named, as qwen-code and gemini-cli draw it (captured in tmux):
// after the cell of their own cursor and spaces. Typed text takes the
// placeholder away, or leaves only its end; with no placeholder known,
// no box is empty.
func TestInputEmpty(t *testing.T) {
	const ph = "Type your message"
	cases := []struct {
		after, placeholder string
		want               bool
	}{
		{"  Type your message or @path/to/file", ph, true}, // qwen and gemini, empty
		{" Type your message or", ph, true},                // a narrow pane wraps the rest
		{" \u200b", ph, false},                             // qwen, text typed, the cursor at its end
		{"", ph, false},                                    // gemini, text typed
		{"file", ph, false},                                // typed over the placeholder
		{"lint resu", ph, false},                           // the cursor moved back into the text
		{"  Type your message", "", false},
	}
	for _, c := range cases {
		if got := inputEmpty(tmux.CursorRow{BeforeCursor: "* ", AfterCursor: c.after}, c.placeholder); got != c.want {
			t.Errorf("inputEmpty(after the cursor %q, placeholder %q) = %v, want %v", c.after, c.placeholder, got, c.want)
		}
	}
}
