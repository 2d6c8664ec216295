package tasks

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// The entries of a scope's notification queue as Notifications finds them
// (see notify.go for the queue): which names are entries, which are
// deliverable now, and which are left behind by a task that is gone.

// pendingNotice is one deliverable queue entry and its task's record.
type pendingNotice struct {
	path string
	n    notice
	r    *record
}

// pendingIn reads scope's deliverable entries, for a caller holding the
// lock, and removes those whose task is gone.
func (s *Store) pendingIn(scope string) ([]pendingNotice, error) {
	dir := s.scopeDir(scope)
	names, err := pendingNames(dir)
	if err != nil {
		return nil, err
	}
	var list []pendingNotice
	for _, name := range names {
		path := filepath.Join(dir, name)
		id, isEvent := entryID(name)
		r, err := s.load(id)
		var invalid *InvalidRecordError
		switch {
		case errors.Is(err, ErrNotFound) || err == nil && r.Scope != scope:
			os.Remove(path) // its task is gone (or is not the scope's): nothing to tell
			continue
		case errors.As(err, &invalid):
			continue // `ls` reports the record; the entry waits until it is fixed or pruned
		case err != nil:
			return nil, err
		case isEvent:
			n, err := readNotice(path)
			if err != nil || n.ID != r.ID || n.Event == nil {
				os.Remove(path) // damaged: the line it held is lost, the count is in the record
				continue
			}
			list = append(list, pendingNotice{path, n, r})
			continue
		case r.Running():
			continue // written just before a crash; its settle will write it again
		}
		n, err := readNotice(path)
		if err != nil || n.ID != r.ID {
			// Damaged: the record says all there is to say.
			n = notice{ID: r.ID, Scope: r.Scope, Seq: r.EndedAt.UnixNano()}
		}
		list = append(list, pendingNotice{path, n, r})
	}
	return list, nil
}

func compareInt64(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// pendingNames lists the queue entries in dir; none if it does not exist.
func pendingNames(dir string) ([]string, error) {
	names, err := namesIn(dir, func(name string) bool { id, _ := entryID(name); return id != "" })
	if err != nil {
		return nil, fmt.Errorf("read notifications: %w", err)
	}
	return names, nil
}

// entryID is the task id of a queue entry's file name, and whether the
// entry is a monitor event (<id>-<count>.json) rather than an end
// (<id>.json); "" for a name that is neither.
func entryID(name string) (string, bool) {
	base, ok := strings.CutSuffix(name, ".json")
	id, count, isEvent := strings.Cut(base, "-")
	if !ok || len(id) != idLen || !validIDPrefix(id) {
		return "", false
	}
	if isEvent {
		if n, err := strconv.Atoi(count); err != nil || n <= 0 || strconv.Itoa(n) != count {
			return "", false
		}
	}
	return id, isEvent
}

// readNotice reads one queue entry, held to the rules of records.
func readNotice(path string) (notice, error) {
	var n notice
	data, err := readOwnFile(path)
	if err == nil {
		err = json.Unmarshal(data, &n)
	}
	if err != nil {
		return n, fmt.Errorf("notification %s is unusable: %w", path, err)
	}
	return n, nil
}
