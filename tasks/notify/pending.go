package notify

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/qtask/qtask/tasks/statefs"
)

// The entries of a scope's queue as a reader finds them: which names are
// entries, and what one holds. Which are deliverable now is the store's
// to say, from each entry's task.

// Entry is one queue entry as a reader found it, not yet claimed.
type Entry struct {
	path    string
	id      string
	isEvent bool
}

// ID is the id of the entry's task.
func (e Entry) ID() string { return e.id }

// IsEvent reports whether the entry is a monitor's event rather than an
// end.
func (e Entry) IsEvent() bool { return e.isEvent }

// Read reads the entry, held to the rules of records.
func (e Entry) Read() (Notice, error) {
	var n Notice
	data, err := statefs.ReadOwn(e.path)
	if err == nil {
		err = json.Unmarshal(data, &n)
	}
	if err != nil {
		return n, fmt.Errorf("notification %s is unusable: %w", e.path, err)
	}
	return n, nil
}

// Drop removes the entry: its task is gone, or it is damaged beyond use.
func (e Entry) Drop() { os.Remove(e.path) }

// Entries lists scope's entries, for a caller holding the state lock (so
// that no other reader claims them meanwhile).
func (q *Queue) Entries(scope string) ([]Entry, error) {
	dir := q.ScopeDir(scope)
	names, err := q.entryNames(dir)
	if err != nil {
		return nil, err
	}
	list := make([]Entry, 0, len(names))
	for _, name := range names {
		id, isEvent := q.entryID(name)
		list = append(list, Entry{path: filepath.Join(dir, name), id: id, isEvent: isEvent})
	}
	return list, nil
}

// Pending reports whether any of scopes has entries, or a reader that
// died left a claim to return. It takes no lock and costs one directory
// read per scope, and one of the claims: a hook asks on every prompt and
// tool call of an agent.
func (q *Queue) Pending(scopes []string) (bool, error) {
	abandoned, err := q.abandonedClaims()
	if err != nil {
		return false, err
	}
	pending := len(abandoned) > 0
	for _, scope := range scopes {
		names, err := q.entryNames(q.ScopeDir(scope))
		if err != nil {
			return false, err
		}
		pending = pending || len(names) > 0
	}
	return pending, nil
}

// UnreadEvents counts task id's events that wait unread in scope's queue,
// for a caller holding the state lock (readers consume under it).
func (q *Queue) UnreadEvents(scope, id string) int {
	names, _ := statefs.Names(q.ScopeDir(scope), func(name string) bool {
		got, isEvent := q.entryID(name)
		return isEvent && got == id
	})
	return len(names)
}

// entryNames lists the queue entries in dir; none if it does not exist.
func (q *Queue) entryNames(dir string) ([]string, error) {
	names, err := statefs.Names(dir, func(name string) bool { id, _ := q.entryID(name); return id != "" })
	if err != nil {
		return nil, fmt.Errorf("read notifications: %w", err)
	}
	return names, nil
}

// entryID is the task id of a queue entry's file name, and whether the
// entry is a monitor event (<id>-<count>.json) rather than an end
// (<id>.json); "" for a name that is neither.
func (q *Queue) entryID(name string) (string, bool) {
	base, ok := strings.CutSuffix(name, ".json")
	id, count, isEvent := strings.Cut(base, "-")
	if !ok || !q.isID(id) {
		return "", false
	}
	if isEvent {
		if n, err := strconv.Atoi(count); err != nil || n <= 0 || strconv.Itoa(n) != count {
			return "", false
		}
	}
	return id, isEvent
}
