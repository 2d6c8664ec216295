// Package tasks owns qtask's task state: records on disk, ids, the one-shot
// state machine, reconciliation of tasks whose processes vanished, and the two
// helpers that live exactly as long as a task — the wrapper that runs the
// command and the capture that writes its clean output file.
//
// Files own the truth and there is no daemon: every qtask invocation reads the
// records it needs and settles what it finds dead.
package tasks

import (
	"fmt"

	rec "github.com/qtask/qtask/tasks/record"
)

// Task, its Status and Kind are package record's: the record codec needs
// every field of a task, and tasks needs the codec.
type (
	Task   = rec.Task
	Status = rec.Status
	Kind   = rec.Kind
)

// The four statuses (every status but running is terminal), and the two
// kinds: see package record.
const (
	StatusRunning   = rec.StatusRunning
	StatusCompleted = rec.StatusCompleted
	StatusFailed    = rec.StatusFailed
	StatusCancelled = rec.StatusCancelled

	KindShell   = rec.KindShell
	KindMonitor = rec.KindMonitor
)

// record is a task's record on disk (rec.Record) as the store handles it:
// a type of its own, so that the store's methods on it (its server, how a
// stop ends it, which processes are its) live here, beside their callers.
// The codec is reached by conversion: (*rec.Record)(r).AppendJSON, never
// r.AppendJSON, which is the embedded Task's and leaves out the record's
// own fields.
type record rec.Record

// ParseStatus accepts the four status names, for --status filters.
func ParseStatus(s string) (Status, error) {
	switch st := Status(s); st {
	case StatusRunning, StatusCompleted, StatusFailed, StatusCancelled:
		return st, nil
	}
	return "", fmt.Errorf("unknown status %q: want running, completed, failed or cancelled", s)
}

// wrapperName is what the task's supervising process is, for messages.
func (r *record) wrapperName() string {
	if r.Adopted {
		return "shell"
	}
	return "wrapper"
}

// stopOutcome applies a requested stop to how the task ended: an explicit
// stop is cancelled, a stop with a reason is failed with it. The exit code
// observed, if any, is kept.
func (r *record) stopOutcome(o outcome) outcome {
	switch {
	case r.StopRequestedAt == nil:
		return o
	case r.StopReason != "":
		o.status, o.reason = StatusFailed, r.StopReason
	default:
		o.status, o.reason = StatusCancelled, ""
	}
	return o
}
