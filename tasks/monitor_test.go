package tasks

import (
	"context"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/qtask/qtask/tasks/monitor"
	"github.com/qtask/qtask/tasks/retention"
)

// saveMonitor stores a running monitor of scope.
func saveMonitor(t *testing.T, s *Store, id, scope string) *record {
	t.Helper()
	saveRunningIn(t, s, id, scope, "")
	r, err := s.load(id)
	if err != nil {
		t.Fatal(err)
	}
	r.Kind, r.Background = KindMonitor, true
	if err := s.save(r); err != nil {
		t.Fatal(err)
	}
	return r
}

// runEvents makes monitor r's events of output, as its wrapper would, its
// bucket on clock, and returns once they are all counted.
func runEvents(t *testing.T, s *Store, r *record, spec *monitor.Spec, output string, clock func() time.Time) {
	t.Helper()
	if err := os.WriteFile(r.OutputPath, []byte(output), fileMode); err != nil {
		t.Fatal(err)
	}
	e := monitor.NewEvents(&monitorTask{s: s, r: r}, spec, r.OutputPath, monitor.CreateLog(r.OutputPath, r.OutputMaxBytes), clock)
	go e.Run(nil)
	e.Finish()
}

// Events reach the store as the rules make them (monitor's tests): each
// counted and queued in one step, its notification reading as the monitor
// at that event, running; the one reaching the max ends the monitor with
// the lines dropped; nothing after that end; each is consumed once.
func TestMonitorEventsUpToTheEnd(t *testing.T) {
	s := newTestStore(t)
	r := saveMonitor(t, s, "abcd0001", "A")
	// The bucket's clock stands still until "e8", its ninth read (one at
	// the start, one for each line past the blank and unmatched ones):
	// then a token has come back.
	start, reads := time.Unix(1000, 0), 0
	clock := func() time.Time {
		if reads++; reads >= 9 {
			return start.Add(time.Second)
		}
		return start
	}
	runEvents(t, s, r, &monitor.Spec{Match: "^e", MaxEvents: 6, IdleTimeout: time.Hour},
		"e1\n\n  \nx\ne2\ne3\ne4\ne5\ne6 dropped\ne7 dropped\ne8\ne9 after the end\n", clock)

	list, err := deliver(s, []string{"A"}, NotifyOptions{TailBytes: 1024})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, n := range list {
		if n.Event != nil {
			got = append(got, n.Event.Line)
			if n.Task.Status != StatusRunning || n.Task.Events != n.Event.Count {
				t.Errorf("event %d reads as %s with %d events", n.Event.Count, n.Task.Status, n.Task.Events)
			}
		} else {
			got = append(got, "end: "+n.Task.StatusText())
		}
	}
	want := []string{"e1", "e2", "e3", "e4", "e5", "e8", "end: completed (max events reached, 6 events, 2 dropped)"}
	if !slices.Equal(got, want) {
		t.Fatalf("notifications %q, want %q", got, want)
	}
	if end := list[len(list)-1].Task; end.EventsDropped != 2 {
		t.Errorf("the end counts %d lines dropped, want 2", end.EventsDropped)
	}
	if again := consume(t, s, "A"); len(again) != 0 {
		t.Errorf("a second reader got %q: events are consumed once", again)
	}
}

// An event entry is its task's: pruning the task takes it too, read or not.
func TestPruneRemovesAMonitorsEvents(t *testing.T) {
	s := newTestStore(t)
	r := saveMonitor(t, s, "abcd0001", "A")
	runEvents(t, s, r, &monitor.Spec{MaxEvents: 10, IdleTimeout: time.Hour}, "one\n", time.Now)
	settleOrFail(t, s, "abcd0001", 0)
	assertOnlyEntries(t, s.queue.ScopeDir("A"), "abcd0001-1.json", "abcd0001.json")
	var seen []monitor.Event
	s.Events(context.Background(), "abcd0001", false, func(ev monitor.Event) error { seen = append(seen, ev); return nil })
	if len(seen) != 1 || seen[0].Line != "one" || seen[0].Count != 1 {
		t.Fatalf("the events log holds %+v, want event 1 \"one\"", seen)
	}
	if _, _, err := s.Prune(context.Background(), PruneOptions{Rule: retention.Rule{All: true}}); err != nil {
		t.Fatal(err)
	}
	assertOnlyEntries(t, s.queue.ScopeDir("A"))
	if _, err := os.Lstat(monitor.EventsPath(r.OutputPath)); !os.IsNotExist(err) {
		t.Fatalf("prune left the monitor's events log: %v", err)
	}
}

// A line that comes after the monitor has ended (stopped, say, while its
// command still prints) is no event: nothing in its events log.
func TestMonitorLineAfterItsEndIsNoEvent(t *testing.T) {
	s := newTestStore(t)
	r := saveMonitor(t, s, "abcd0001", "A")
	settleOrFail(t, s, "abcd0001", 0)
	runEvents(t, s, r, &monitor.Spec{MaxEvents: 10, IdleTimeout: time.Hour}, "late\n", time.Now)
	var seen []monitor.Event
	s.Events(context.Background(), "abcd0001", false, func(ev monitor.Event) error { seen = append(seen, ev); return nil })
	if len(seen) != 0 {
		t.Fatalf("the events log of an ended monitor holds %+v, want nothing", seen)
	}
}
