package retention

import (
	"slices"
	"testing"
	"time"

	"github.com/qtask/qtask/tasks/record"
)

func TestChoose(t *testing.T) {
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	ago := func(d time.Duration) *time.Time { at := now.Add(-d); return &at }
	// Listed by start, as List returns them; "d" started first but ended last.
	list := []*record.Task{
		{ID: "d", Status: record.StatusCompleted, StartedAt: now.Add(-50 * time.Hour), EndedAt: ago(time.Minute)},
		{ID: "a", Status: record.StatusFailed, StartedAt: now.Add(-40 * time.Hour), EndedAt: ago(30 * time.Hour)},
		{ID: "r", Status: record.StatusRunning, StartedAt: now.Add(-30 * time.Hour)},
		{ID: "b", Status: record.StatusCancelled, StartedAt: now.Add(-20 * time.Hour), EndedAt: ago(10 * time.Hour)},
		{ID: "c", Status: record.StatusCompleted, StartedAt: now.Add(-3 * time.Hour), EndedAt: ago(2 * time.Hour)},
	}
	cases := []struct {
		name string
		rule Rule
		want []string
	}{
		{"keep newest two", Rule{Keep: 2}, []string{"a", "b"}},
		{"keep more than there are", Rule{Keep: 5}, nil},
		{"keep exactly as many", Rule{Keep: 4}, nil},
		{"keep zero keeps all", Rule{}, nil},
		{"older than 5h", Rule{OlderThan: 5 * time.Hour}, []string{"a", "b"}},
		{"older than 5h ignores keep", Rule{Keep: 1, OlderThan: 5 * time.Hour}, []string{"a", "b"}},
		{"older than 100h", Rule{OlderThan: 100 * time.Hour}, nil},
		{"all finished", Rule{All: true}, []string{"a", "b", "c", "d"}},
		// The task being started ended already (a quick command): it
		// still counts as running, so the start removes what it would
		// have had the command been slower.
		{"keep two, d starting", Rule{Keep: 2, Starting: "d"}, []string{"a"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var got []string
			for _, task := range Choose(list, c.rule, now) {
				got = append(got, task.ID)
			}
			if !slices.Equal(got, c.want) {
				t.Errorf("Choose(%+v) = %q, want %q (oldest end first, never running)", c.rule, got, c.want)
			}
		})
	}
}

func TestOwner(t *testing.T) {
	cases := []struct {
		name, id string
		ok       bool
	}{
		{"0123abcd.log", "0123abcd", true},
		{"0123abcd.spec", "0123abcd", true},
		{"0123abcd.pipe", "0123abcd", true},
		{".0123abcd.json.tmp123456", "0123abcd", true},
		{".0123abcd.log.rotate-ABCDEF", "0123abcd", true},
		{"0123abcd.raw", "0123abcd", true},
		{".0123abcd.raw.rotate-ABCDEF", "0123abcd", true},
		{"0123abcd.events", "0123abcd", true},
		{".0123abcd.events.rotate-ABCDEF", "0123abcd", true},
		{"0123abcd.json", "", false}, // the record itself is removed last, on its own
		{".log", "", false},
		{"..json.tmp1", "", false},
		{"lock", "", false},
		{".hidden", "", false},
	}
	for _, c := range cases {
		id, ok := Owner(c.name, false)
		if id != c.id || ok != c.ok {
			t.Errorf("Owner(%q) = %q, %v; want %q, %v", c.name, id, ok, c.id, c.ok)
		}
	}
	// Outside tasks/, ID.json is a notification of the task's.
	if id, ok := Owner("0123abcd.json", true); id != "0123abcd" || !ok {
		t.Errorf("a notification file 0123abcd.json is owned by %q, %v; want 0123abcd", id, ok)
	}
	for _, name := range []string{"0123abcd-12.json", ".0123abcd-12.json.tmp42"} {
		if id, ok := Owner(name, true); id != "0123abcd" || !ok {
			t.Errorf("a monitor's event file %s is owned by %q, %v; want 0123abcd", name, id, ok)
		}
	}
}
