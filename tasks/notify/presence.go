package notify

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"

	"github.com/qtask/qtask/tasks/statefs"
)

// Agent presence, for the wake of an idle agent (`--wake tmux`, for agents
// without async hooks): the agent's hooks note after every event, under
// each of its scopes, whether the agent is now idle or busy and in which
// tmux pane; a settle that queues a notification for such a scope claims
// the idle note and types into the pane (the store does the typing).

// Presence is what an agent's hooks last said about it.
type Presence struct {
	// Idle: the agent's last event ended its turn; it waits for a prompt.
	Idle bool `json:"idle"`
	// Pane is the agent's tmux pane and Server its tmux server (as
	// tmux.Server.String writes it).
	Pane   string `json:"pane"`
	Server string `json:"server"`
	// EmptyInput is what the agent's TUI draws after the cursor in its
	// input box when the box is empty (its placeholder): a line is typed
	// only into a pane whose cursor row shows it. "" when the hooks know
	// no such sign: nothing is typed.
	EmptyInput string `json:"empty_input,omitempty"`
}

func (q *Queue) agentsDir() string { return filepath.Join(q.dir, "agents") }

func (q *Queue) presencePath(scope string) string {
	return filepath.Join(q.agentsDir(), scopeHash(scope)+".json")
}

// NoteAgent records p for each of scopes, for the wake of a later settle.
func (q *Queue) NoteAgent(scopes []string, p Presence) error {
	if err := statefs.MkdirPrivate(q.agentsDir()); err != nil {
		return err
	}
	data, _ := json.Marshal(p) // plain fields: cannot fail
	for _, scope := range scopes {
		if err := statefs.WriteAtomic(q.presencePath(scope), data); err != nil {
			return err
		}
	}
	return nil
}

// TakeBackIdle takes back, for each of scopes, the idle presence the
// agent's own hook has just noted, so that no settle types a wake line
// while the hook passes the queued notifications on itself. It reports
// false if a settle took one first: that settle is typing its wake line,
// and the prompt it types will carry what is queued.
func (q *Queue) TakeBackIdle(scopes []string) bool {
	for _, scope := range scopes {
		if _, ok := q.ClaimIdleAgent(scope); !ok {
			return false
		}
	}
	return true
}

// ClaimIdleAgent takes scope's presence when it says the agent is idle in
// a known pane, and records it busy, so that of two tasks ending together
// only one types. The claim is a rename: one claimant wins.
func (q *Queue) ClaimIdleAgent(scope string) (Presence, bool) {
	path := q.presencePath(scope)
	var p Presence
	data, err := statefs.ReadOwn(path)
	if err != nil || json.Unmarshal(data, &p) != nil || !p.Idle || p.Pane == "" {
		return Presence{}, false
	}
	claim := path + ".waking-" + strconv.Itoa(os.Getpid())
	if os.Rename(path, claim) != nil {
		return Presence{}, false // another settle took it
	}
	defer os.Remove(claim)
	busy := p
	busy.Idle = false
	q.NoteAgent([]string{scope}, busy)
	return p, true
}
