package tasks

import (
	"encoding/json"
	"os"
	"testing"
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
