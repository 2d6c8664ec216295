package notify

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// fakeProcs is a process table: the live pids and their start times.
type fakeProcs map[int]uint64

func (p fakeProcs) Start(pid int) uint64 { return p[pid] }

func (p fakeProcs) Same(pid int, start uint64) bool {
	got, ok := p[pid]
	return ok && got == start
}

// Parent and Environ: a table without a tree (see fakeTree).
func (p fakeProcs) Parent(pid int) (int, uint64, error) { return 0, 0, os.ErrNotExist }
func (p fakeProcs) Environ(pid int) ([]byte, error)     { return nil, os.ErrNotExist }

// isID accepts what tasks calls an id: eight lowercase hex digits.
func isID(s string) bool {
	if len(s) != 8 {
		return false
	}
	return strings.Trim(s, "0123456789abcdef") == ""
}

func newTestQueue(t *testing.T) *Queue {
	t.Helper()
	return New(t.TempDir(), isID, fakeProcs{os.Getpid(): 1000})
}

// claimIDs claims scope's entries and returns their ids.
func claimIDs(t *testing.T, q *Queue, scope string) (*Claim, []string) {
	t.Helper()
	if err := q.ReturnAbandoned(); err != nil {
		t.Fatal(err)
	}
	entries, err := q.Entries(scope)
	if err != nil {
		t.Fatal(err)
	}
	c, got, err := q.Claim(entries)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, e := range got {
		ids = append(ids, e.ID())
	}
	return c, ids
}

func claimsLeft(t *testing.T, q *Queue) []string {
	t.Helper()
	entries, _ := os.ReadDir(q.claimsDir())
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

// A claim whose reader is gone (its pid is dead, or now names a process
// that started at another time) is returned to the queue by the next
// reader, of any scope; a live reader's claim is left alone, and so is a
// name that is no claim.
func TestAbandonedClaimsReturnToTheQueue(t *testing.T) {
	q := newTestQueue(t)
	for i, id := range []string{"abcd0001", "abcd0002", "abcd0003", "abcd0004"} {
		if err := q.Push(Notice{ID: id, Scope: "A", Seq: int64(i)}); err != nil {
			t.Fatal(err)
		}
	}
	const deadPid = 4242 // not in the fake process table
	// Each claim takes one entry, then is renamed to what a reader that
	// died would have left.
	rename := func(name string) {
		t.Helper()
		entries, err := q.Entries("A")
		if err != nil || len(entries) == 0 {
			t.Fatalf("entries: %v, %v", entries, err)
		}
		c, _, err := q.Claim(entries[:1])
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(c.dir, filepath.Join(q.claimsDir(), name)); err != nil {
			t.Fatal(err)
		}
	}
	live := fmt.Sprintf("%d.%d.99", os.Getpid(), q.ownStart())
	rename(fmt.Sprintf("%d.%d.1", deadPid, 1))                  // its reader died
	rename(fmt.Sprintf("%d.%d.1", os.Getpid(), q.ownStart()+1)) // its pid was recycled
	rename(live)                                                // a live reader's
	rename(fmt.Sprintf("%s%d.1.1", doneClaimPrefix, deadPid))   // committed, then its reader died
	if pending, err := q.Pending([]string{"B"}); err != nil || !pending {
		t.Errorf("Pending of an empty scope with abandoned claims = %v, %v; want true", pending, err)
	}
	if c, got := claimIDs(t, q, "B"); len(got) != 0 || c != nil {
		t.Fatalf("scope B got %q", got)
	}
	// Scope B's read returned the two abandoned claims and removed the
	// committed one.
	if left := claimsLeft(t, q); !slices.Equal(left, []string{live}) {
		t.Errorf("after a read the claims directory holds %q, want only the live reader's claim", left)
	}
	c, got := claimIDs(t, q, "A")
	if !slices.Equal(got, []string{"abcd0001", "abcd0002"}) {
		t.Errorf("scope A got %q back; want the 2 entries whose readers died", got)
	}
	if err := c.Commit(); err != nil {
		t.Fatal(err)
	}
	if left := claimsLeft(t, q); !slices.Equal(left, []string{live}) {
		t.Errorf("a committed claim left %q", left)
	}
}

// A released claim's entries go back to their queues, whatever their
// scopes; a damaged name in a claim is removed, not returned.
func TestReleaseReturnsEachEntryToItsScope(t *testing.T) {
	q := newTestQueue(t)
	for _, n := range []Notice{{ID: "abcd0001", Scope: "A"}, {ID: "abcd0002", Scope: "B"}, {ID: "abcd0002", Scope: "B", Event: &Event{Count: 1, Line: "x"}}} {
		if err := q.Push(n); err != nil {
			t.Fatal(err)
		}
	}
	a, _ := q.Entries("A")
	b, _ := q.Entries("B")
	c, got, err := q.Claim(append(a, b...))
	if err != nil || len(got) != 3 {
		t.Fatalf("claim: %d entries, %v; want 3", len(got), err)
	}
	if err := os.WriteFile(filepath.Join(c.dir, "junk"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if pending, _ := q.Pending([]string{"A", "B"}); pending {
		t.Error("claimed entries still count as pending")
	}
	if err := c.Release(); err != nil {
		t.Fatal(err)
	}
	a, _ = q.Entries("A")
	b, _ = q.Entries("B")
	if len(a) != 1 || len(b) != 2 || !b[0].IsEvent() {
		t.Errorf("after the release scope A holds %v and B %v; want 1 end and 1 end + 1 event", a, b)
	}
	if left := claimsLeft(t, q); len(left) != 0 {
		t.Errorf("a released claim left %q", left)
	}
	if n, err := b[0].Read(); err != nil || n.Event == nil || n.Event.Line != "x" {
		t.Errorf("the event entry reads %+v, %v", n, err)
	}
	if got := q.UnreadEvents("B", "abcd0002"); got != 1 {
		t.Errorf("UnreadEvents = %d, want 1", got)
	}
}

// The hook that noted its agent idle takes the note back before passing
// queued notifications on itself; once a settle has taken it (to type its
// wake line), the hook cannot, and leaves them to the wake.
func TestTakeBackIdle(t *testing.T) {
	q := newTestQueue(t)
	scopes := []string{"qwen:s1", "pane:%3"}
	idle := Presence{Idle: true, Pane: "%3", Server: "/tmp/sock"}
	if err := q.NoteAgent(scopes, idle); err != nil {
		t.Fatal(err)
	}
	if !q.TakeBackIdle(scopes) {
		t.Fatal("TakeBackIdle of the hook's own idle note = false, want true")
	}
	for _, scope := range scopes {
		var p Presence
		data, err := os.ReadFile(q.presencePath(scope))
		if err != nil || json.Unmarshal(data, &p) != nil || p.Idle || p.Pane != "%3" {
			t.Fatalf("presence of %s after the take-back: %s (%v), want busy in %%3", scope, data, err)
		}
	}
	// A settle took the note first: it is busy now.
	if err := q.NoteAgent(scopes, idle); err != nil {
		t.Fatal(err)
	}
	if _, ok := q.ClaimIdleAgent(scopes[0]); !ok {
		t.Fatal("the settle's claim failed")
	}
	if q.TakeBackIdle(scopes) {
		t.Fatal("TakeBackIdle after a settle claimed the agent = true, want false")
	}
}
