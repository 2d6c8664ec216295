// Package retention is what a prune removes, decided without touching the
// disk: which finished tasks a rule selects (Choose), and which task a
// file of the state directory belongs to, by its name (Owner).
//
// It is its own package because both are pure and table-tested apart from
// the store: the store (tasks) lists the records and the directories,
// asks here, and removes under its lock what is still finished.
package retention

import (
	"slices"
	"strings"
	"time"

	"github.com/qtask/qtask/tasks/record"
)

// Rule chooses the finished tasks a prune removes. All and OlderThan
// select by themselves; with neither, the newest Keep finished tasks are
// kept. Running tasks are never selected.
type Rule struct {
	// Keep is how many finished tasks survive, the most recently ended
	// ones; 0 keeps them all.
	Keep int
	// OlderThan selects every finished task that ended longer ago than it.
	OlderThan time.Duration
	// All selects every finished task.
	All bool
	// Starting names the task whose start prunes: it counts as running
	// whatever its record says. A quick command may end before its own
	// start's prune, and would then be kept in place of one more old task:
	// how many a start removes would hang on the machine's speed.
	Starting string
}

// Choose picks from list the finished tasks rule selects at now, oldest
// end first.
func Choose(list []*record.Task, rule Rule, now time.Time) []*record.Task {
	var finished []*record.Task
	for _, t := range list {
		if !t.Running() && t.ID != rule.Starting {
			finished = append(finished, t)
		}
	}
	slices.SortStableFunc(finished, func(a, b *record.Task) int { return endOf(a).Compare(endOf(b)) })
	switch {
	case rule.All:
		return finished
	case rule.OlderThan > 0:
		cut := now.Add(-rule.OlderThan)
		n := 0
		for n < len(finished) && endOf(finished[n]).Before(cut) {
			n++
		}
		return finished[:n]
	case rule.Keep > 0 && len(finished) > rule.Keep:
		return finished[:len(finished)-rule.Keep]
	}
	return nil
}

// endOf is when a finished task ended; a record without an end time (only
// a hand-edited one) counts as ending when it started.
func endOf(t *record.Task) time.Time {
	if t.EndedAt != nil {
		return *t.EndedAt
	}
	return t.StartedAt
}

// Owner names the task a state file belongs to, other than its record:
// "ID.log", "ID.raw" (the raw copy), "ID.events" (a monitor's events
// log), "ID.spec", "ID.pipe" (the FIFO an older qtask's wrapper read its
// pane through, left by one that was killed), "ID.seed" (the screen of an
// adopted pane its capture never read), ".ID.json.tmp…", ".ID.log.rotate-…"
// (and the other capped files' rotations), and, outside the tasks
// directory (notRecords; there ID.json is the record), "ID.json" and a
// monitor's events, "ID-N.json".
func Owner(name string, notRecords bool) (string, bool) {
	if temp, ok := strings.CutPrefix(name, "."); ok {
		for _, mid := range []string{".json.tmp", ".log.rotate-", ".raw.rotate-", ".events.rotate-"} {
			if id, _, ok := strings.Cut(temp, mid); ok && id != "" {
				return eventOwner(id), true
			}
		}
		return "", false
	}
	for _, ext := range []string{".log", ".raw", ".events", ".spec", ".pipe", ".seed", ".json"} {
		if id, ok := strings.CutSuffix(name, ext); ok && id != "" && (ext != ".json" || notRecords) {
			return eventOwner(id), true
		}
	}
	return "", false
}

// eventOwner is the task id of "ID-N", a monitor's event entry; ids are
// hex, so anything else is returned as it is.
func eventOwner(name string) string {
	id, _, _ := strings.Cut(name, "-")
	return id
}
