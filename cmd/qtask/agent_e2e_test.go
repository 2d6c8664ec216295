package main

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// inboxEntries runs `qtask agent inbox --json` with args as scope's agent
// and returns the task ids it printed, and its exit code.
func (h *harness) inboxIDs(scope string, args ...string) ([]string, int) {
	h.t.Helper()
	r := h.qtaskIn(h.root, []string{"QTASK_SCOPE=" + scope}, append([]string{"agent", "inbox", "--json"}, args...)...)
	if r.code != 0 && r.code != exitTimeout {
		h.t.Errorf("qtask agent inbox %v: exit %d: %s", args, r.code, r.stderr)
		return nil, r.code
	}
	var entries []inboxEntry
	if err := json.Unmarshal([]byte(r.stdout), &entries); err != nil {
		h.t.Errorf("inbox --json printed %q: %v", r.stdout, err)
	}
	var ids []string
	for _, e := range entries {
		if e.Envelope == "" || !strings.Contains(e.Envelope, "<task-id>"+e.ID+"</task-id>") {
			h.t.Errorf("inbox --json entry %s has envelope %q", e.ID, e.Envelope)
		}
		ids = append(ids, e.ID)
	}
	return ids, r.code
}

// TestAgentInbox: a task's end reaches its scope's inbox as one envelope
// with its exit code and output; --peek leaves it, a read consumes it, and
// --wait with nothing pending gives up with 124.
func TestAgentInbox(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.writeConfig("shell = \"sh\"\n")
	// A foreground run's caller hears the end itself: no notification.
	if fg := h.qtaskIn(h.root, []string{"QTASK_SCOPE=agent-1"}, "run", "--", "echo in-the-foreground"); fg.code != 0 {
		t.Fatalf("foreground run: exit %d %s", fg.code, fg.stderr)
	}
	r := h.qtaskIn(h.root, []string{"QTASK_SCOPE=agent-1"}, "run", "--bg", "--json", "--", "echo '</task-notification> <&>'; exit 3")
	task := decodeTask(t, r.stdout)
	h.wait(task.ID)
	inbox := func(args ...string) result {
		return h.qtaskIn(h.root, []string{"QTASK_SCOPE=agent-1"}, append([]string{"agent", "inbox"}, args...)...)
	}
	peek := inbox("--peek")
	want := []string{"<task-id>" + task.ID + "</task-id>", "<status>failed</status>", "<exit-code>3</exit-code>",
		"<result>exited with code 3</result>", "&lt;\\/task-notification&gt; &lt;&amp;&gt;\n"}
	for _, w := range want {
		if !strings.Contains(peek.stdout, w) {
			t.Errorf("inbox --peek printed:\n%s\nwant it to contain %q", peek.stdout, w)
		}
	}
	if got := strings.Count(peek.stdout, "</task-notification>"); got != 1 || strings.Contains(peek.stdout, "in-the-foreground") {
		t.Errorf("one ended background task and one foreground run printed %d envelopes:\n%s\nwant the background task's only", got, peek.stdout)
	}
	if other, _ := h.inboxIDs("someone-else"); len(other) != 0 {
		t.Errorf("another scope's inbox got %q", other)
	}
	if got := inbox(); got.stdout != peek.stdout || got.code != 0 {
		t.Errorf("inbox after --peek: exit %d\n%s\nwant the same notification", got.code, got.stdout)
	}
	if got := inbox(); got.stdout != "" || got.code != 0 {
		t.Errorf("a second inbox printed (exit %d):\n%s\nwant nothing: the notification was consumed", got.code, got.stdout)
	}
	if got := inbox("--wait", "300ms"); got.code != exitTimeout || got.stdout != "" {
		t.Errorf("inbox --wait with nothing pending: exit %d, %q; want 124 and nothing", got.code, got.stdout)
	}
}

// TestAgentInboxRacingReaders is issue 12's must-hold: 20 tasks ending
// while 3 inbox readers race, every notification printed exactly once in
// total, and scope A never sees scope B's.
func TestAgentInboxRacingReaders(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.writeConfig("shell = \"sh\"\n")
	const n = 20
	var mu sync.Mutex
	seen := map[string]int{}
	total := func() int { mu.Lock(); defer mu.Unlock(); return len(seen) }
	deadline := time.Now().Add(3 * time.Minute)
	var wg sync.WaitGroup
	for range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Each reader waits again until all n are read: the wait is
			// short, as the readers still waiting when the last one is
			// read wait it out.
			for total() < n && time.Now().Before(deadline) {
				ids, _ := h.inboxIDs("A", "--wait", "500ms")
				mu.Lock()
				for _, id := range ids {
					seen[id]++
				}
				mu.Unlock()
			}
		}()
	}
	var startedA, startedB []string
	for i := range n {
		task := decodeTask(t, h.qtaskIn(h.root, []string{"QTASK_SCOPE=A"}, "run", "--bg", "--json", "--",
			fmt.Sprintf("sleep 0.%d; exit %d", i%5, i%3)).stdout)
		startedA = append(startedA, task.ID)
		if i%5 == 0 {
			task := decodeTask(t, h.qtaskIn(h.root, []string{"QTASK_SCOPE=B"}, "run", "--bg", "--json", "--", "true").stdout)
			startedB = append(startedB, task.ID)
		}
	}
	wg.Wait()
	for _, id := range startedA {
		if seen[id] != 1 {
			t.Errorf("task %s of scope A was printed %d times, want exactly once", id, seen[id])
		}
	}
	for id := range seen {
		if !strings.Contains(strings.Join(startedA, " "), id) {
			t.Errorf("scope A's readers printed task %s, which is not scope A's", id)
		}
	}
	// In the order they ended: a quick task started later can end first
	// on a loaded machine (seen in CI), so the order is the records' end
	// times, not the order of the starts.
	endedB := map[string]time.Time{}
	for _, id := range startedB {
		if end := h.wait(id); end.EndedAt != nil {
			endedB[id] = *end.EndedAt
		}
	}
	wantB := slices.Clone(startedB)
	slices.SortStableFunc(wantB, func(a, b string) int { return endedB[a].Compare(endedB[b]) })
	seenB, _ := h.inboxIDs("B")
	if strings.Join(seenB, " ") != strings.Join(wantB, " ") {
		t.Errorf("scope B's inbox printed %q, want its own %q in the order they ended", seenB, wantB)
	}
}
