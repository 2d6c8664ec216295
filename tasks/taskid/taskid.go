// Package taskid is a task's id: minting a new one, telling an id (or a
// prefix a person typed) from text that is none, and picking the one id a
// prefix names (or the one task a name means), with the errors a caller
// reports when none or several do.
//
// It is its own package because everything that takes an id from a person
// or an agent (the store, the commands, the MCP server) needs these rules
// and their errors, and none of it needs the store: an id is checked here
// before it ever becomes part of a path.
package taskid

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"sort"
	"strings"
)

// idLen is the length of a task id in hex digits: 32 bits, short enough to
// type, and uniqueness is enforced on creation (O_EXCL), not hoped for.
const idLen = 8

// ErrNotFound means no task matches an id or prefix.
var ErrNotFound = errors.New("no such task")

// ErrAmbiguous means a prefix, or a name, matches more than one task.
var ErrAmbiguous = errors.New("ambiguous task id")

// NotFoundError names the id (or name) the user typed.
type NotFoundError struct{ ID string }

// Error calls what was typed an id when it could be one (hex, at most an
// id long), else an id or name: `no task with id or name "web"`.
func (e *NotFoundError) Error() string {
	if ValidPrefix(e.ID) {
		return fmt.Sprintf("no task with id %q", e.ID)
	}
	return fmt.Sprintf("no task with id or name %q", e.ID)
}

// Is makes errors.Is(err, ErrNotFound) work.
func (e *NotFoundError) Is(target error) bool { return target == ErrNotFound }

// AmbiguousError lists the tasks a prefix, or a name, could mean, so the
// user can pick.
type AmbiguousError struct {
	Prefix     string
	Candidates []string
	// Name says Prefix is a task name that several running tasks bear.
	Name bool
}

func (e *AmbiguousError) Error() string {
	if e.Name {
		return fmt.Sprintf("task name %q is ambiguous: %d running tasks have it (%s); give one of their ids",
			e.Prefix, len(e.Candidates), strings.Join(e.Candidates, ", "))
	}
	return fmt.Sprintf("task id %q is ambiguous: it matches %s; type more characters",
		e.Prefix, strings.Join(e.Candidates, ", "))
}

// Is makes errors.Is(err, ErrAmbiguous) work.
func (e *AmbiguousError) Is(target error) bool { return target == ErrAmbiguous }

// New returns a random id with at least one letter in it. One random id
// in 43 would be all digits, and tools that guess JSON types from text (an
// MCP client's command-line arguments, a model writing a tool call) turn
// such an id into a number, which a task_id argument then refuses.
func New() (string, error) {
	var b [idLen / 2]byte
	for {
		if _, err := rand.Read(b[:]); err != nil {
			return "", fmt.Errorf("generate task id: %w", err)
		}
		if id := hex.EncodeToString(b[:]); strings.ContainsAny(id, "abcdef") {
			return id, nil
		}
	}
}

// Valid reports whether s is a whole task id.
func Valid(s string) bool { return len(s) == idLen && ValidPrefix(s) }

// ValidPrefix keeps user input from ever becoming a path: only lowercase
// hex, at most a full id long.
func ValidPrefix(s string) bool {
	if s == "" || len(s) > idLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// Match picks the one id among ids that prefix names.
func Match(prefix string, ids []string) (string, error) {
	if !ValidPrefix(prefix) {
		return "", &NotFoundError{ID: prefix}
	}
	var hits []string
	for _, id := range ids {
		if id == prefix {
			return id, nil
		}
		if strings.HasPrefix(id, prefix) {
			hits = append(hits, id)
		}
	}
	switch len(hits) {
	case 0:
		return "", &NotFoundError{ID: prefix}
	case 1:
		return hits[0], nil
	}
	sort.Strings(hits)
	return "", &AmbiguousError{Prefix: prefix, Candidates: hits}
}

// Named is a task that bears the name a person typed, as MatchName weighs
// it: its id, and whether it is running (reconciled: a task whose process
// vanished is not).
type Named struct {
	ID      string
	Running bool
}

// MatchName picks the task name means among named, the tasks bearing it,
// oldest first: the one running, else the newest. Several running is
// *AmbiguousError (listing them); none, *NotFoundError.
func MatchName(name string, named []Named) (string, error) {
	var running []string
	for _, t := range named {
		if t.Running {
			running = append(running, t.ID)
		}
	}
	switch {
	case len(running) == 1:
		return running[0], nil
	case len(running) > 1:
		sort.Strings(running)
		return "", &AmbiguousError{Prefix: name, Candidates: running, Name: true}
	case len(named) > 0:
		return named[len(named)-1].ID, nil
	}
	return "", &NotFoundError{ID: name}
}
