package tasks

import (
	"context"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/qtask/qtask/tasks/monitor"
	"github.com/qtask/qtask/tasks/output"
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

// The rules of events, line by line with a stopped clock: blank and
// unmatched lines are nothing, a line past the burst is dropped and
// counted, the event reaching the max ends the monitor in the same
// breath, and nothing is counted after that end.
func TestMonitorEventsUpToTheEnd(t *testing.T) {
	s := newTestStore(t)
	r := saveMonitor(t, s, "abcd0001", "A")
	now := time.Unix(1000, 0)
	e := s.newEvents(r, &monitorSpec{Match: "^e", MaxEvents: 6, IdleTimeout: time.Hour}, 0, func() time.Time { return now })
	for _, line := range []string{"e1", "", "  ", "x", "e2", "e3", "e4", "e5", "e6 dropped", "e7 dropped"} {
		e.line(line)
	}
	now = now.Add(time.Second)
	e.line("e8") // a token came back: the sixth and last event
	e.line("e9 after the end")

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
	e := s.newEvents(r, &monitorSpec{MaxEvents: 10, IdleTimeout: time.Hour}, 0, time.Now)
	e.log = monitor.CreateLog(r.OutputPath, r.OutputMaxBytes)
	e.line("one")
	e.log.Close()
	settleOrFail(t, s, "abcd0001", 0)
	assertOnlyEntries(t, s.queue.ScopeDir("A"), "abcd0001-1.json", "abcd0001.json")
	var seen []monitor.Event
	s.Events(context.Background(), "abcd0001", false, func(ev monitor.Event) error { seen = append(seen, ev); return nil })
	if len(seen) != 1 || seen[0].Line != "one" || seen[0].Count != 1 {
		t.Fatalf("the events log holds %+v, want event 1 \"one\"", seen)
	}
	if _, _, err := s.Prune(context.Background(), PruneOptions{All: true}); err != nil {
		t.Fatal(err)
	}
	assertOnlyEntries(t, s.queue.ScopeDir("A"))
	if _, err := os.Lstat(monitor.EventsPath(r.OutputPath)); !os.IsNotExist(err) {
		t.Fatalf("prune left the monitor's events log: %v", err)
	}
}

// A long line reaches its event cut at monitor.LineMax characters with
// the truncation mark; a line longer than output.MaxLineBytes is taken in pieces
// of that size (lineWriter), so the monitor never holds more of it.
func TestMonitorLongLines(t *testing.T) {
	s := newTestStore(t)
	r := saveMonitor(t, s, "abcd0001", "A")
	e := s.newEvents(r, &monitorSpec{MaxEvents: 10, IdleTimeout: time.Hour}, 0, time.Now)
	long := strings.Repeat("é", 2040) + "\n" // 4,080 bytes: one line
	endless := strings.Repeat("x", output.MaxLineBytes+10)
	e.lines.Write([]byte(long + endless))
	e.lines.Flush()
	list, err := deliver(s, []string{"A"}, NotifyOptions{})
	if err != nil || len(list) != 3 {
		t.Fatalf("got %d notifications (%v), want 3 events", len(list), err)
	}
	want := []string{
		strings.Repeat("é", monitor.LineMax) + monitor.TruncatedMark,
		strings.Repeat("x", monitor.LineMax) + monitor.TruncatedMark,
		strings.Repeat("x", 10),
	}
	for i, n := range list {
		if n.Event.Line != want[i] {
			t.Errorf("event %d: %d bytes %.30q…, want %d bytes %.30q…", i+1, len(n.Event.Line), n.Event.Line, len(want[i]), want[i])
		}
	}
}

// At most monitor.MaxUnread events of a monitor wait unread: a line that
// the bucket lets through while they do is dropped and counted, and once
// a reader has taken them, lines are events again.
func TestMonitorUnreadEventsAreBounded(t *testing.T) {
	s := newTestStore(t)
	r := saveMonitor(t, s, "abcd0001", "A")
	now := time.Unix(1000, 0)
	e := s.newEvents(r, &monitorSpec{MaxEvents: 1000, IdleTimeout: time.Hour}, 0, func() time.Time { return now })
	for i := range monitor.MaxUnread + 5 {
		now = now.Add(time.Second) // the bucket always has a token
		e.line("line " + strings.Repeat("x", i))
	}
	if got := consume(t, s, "A"); len(got) != monitor.MaxUnread {
		t.Fatalf("%d events waited unread, want %d", len(got), monitor.MaxUnread)
	}
	now = now.Add(time.Second)
	e.line("after the read")
	got := consume(t, s, "A")
	if len(got) != 1 {
		t.Fatalf("after a read, one more line gave %d notifications, want its event", len(got))
	}
	e.countDropped(true)
	if st, _ := s.load("abcd0001"); st.Events != monitor.MaxUnread+1 || st.EventsDropped != 5 {
		t.Errorf("the monitor counts %d events and %d dropped, want %d and 5", st.Events, st.EventsDropped, monitor.MaxUnread+1)
	}
}

// A line that comes after the monitor has ended (stopped, say, while its
// command still prints) is no event: nothing in its events log.
func TestMonitorLineAfterItsEndIsNoEvent(t *testing.T) {
	s := newTestStore(t)
	r := saveMonitor(t, s, "abcd0001", "A")
	e := s.newEvents(r, &monitorSpec{MaxEvents: 10, IdleTimeout: time.Hour}, 0, time.Now)
	e.log = monitor.CreateLog(r.OutputPath, r.OutputMaxBytes)
	settleOrFail(t, s, "abcd0001", 0)
	e.line("late")
	e.log.Close()
	var seen []monitor.Event
	s.Events(context.Background(), "abcd0001", false, func(ev monitor.Event) error { seen = append(seen, ev); return nil })
	if len(seen) != 0 {
		t.Fatalf("the events log of an ended monitor holds %+v, want nothing", seen)
	}
}
