package monitor

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/qtask/qtask/tasks/output"
)

// fakeStore is a monitor's record and queue as Events count in them.
type fakeStore struct {
	tally  Tally
	unread int     // events queued and not yet read
	told   []Event // events told, in order
	ended  bool
	reason string // why End ended it
}

func (f *fakeStore) Count(fn func(*Tally) bool) error {
	if f.ended {
		return ErrEnded
	}
	t := f.tally
	if fn(&t) {
		if t.New != nil {
			f.unread++
		}
		t.New = nil
		f.tally = t
	}
	return nil
}

func (f *fakeStore) Unread() int { return f.unread }

func (f *fakeStore) Tell(ev Event) { f.told = append(f.told, ev) }

func (f *fakeStore) End(reason string, dropped int) error {
	f.ended, f.reason = true, reason
	f.tally.Dropped += dropped
	return nil
}

// lines are the lines of the events told.
func (f *fakeStore) lines() []string {
	var got []string
	for _, ev := range f.told {
		got = append(got, ev.Line)
	}
	return got
}

// The rules of events, line by line with a stopped clock: blank and
// unmatched lines are nothing, a line past the burst is dropped and
// counted, the event reaching the max ends the monitor in the same
// breath, and nothing is counted after that end.
func TestEventsUpToTheEnd(t *testing.T) {
	st := &fakeStore{}
	now := time.Unix(1000, 0)
	e := NewEvents(st, &Spec{Match: "^e", MaxEvents: 6, IdleTimeout: time.Hour}, "", nil, func() time.Time { return now })
	for _, line := range []string{"e1", "", "  ", "x", "e2", "e3", "e4", "e5", "e6 dropped", "e7 dropped"} {
		e.line(line)
	}
	now = now.Add(time.Second)
	e.line("e8") // a token came back: the sixth and last event
	e.line("e9 after the end")

	if got, want := st.lines(), []string{"e1", "e2", "e3", "e4", "e5", "e8"}; !slices.Equal(got, want) {
		t.Fatalf("events %q, want %q", got, want)
	}
	for i, ev := range st.told {
		if ev.Count != i+1 || i > 0 && !ev.Time.After(st.told[i-1].Time) {
			t.Errorf("event %q is number %d at %v, want %d after the one before", ev.Line, ev.Count, ev.Time, i+1)
		}
	}
	if st.reason != ReasonMaxEvents || st.tally.Events != 6 || st.tally.Dropped != 2 {
		t.Errorf("the monitor ended %q with %d events and %d dropped, want %q, 6 and 2", st.reason, st.tally.Events, st.tally.Dropped, ReasonMaxEvents)
	}
}

// A long line reaches its event cut at LineMax characters with the
// truncation mark; a line longer than output.MaxLineBytes is taken in
// pieces of that size (the line writer), so the monitor never holds more
// of it.
func TestEventsLongLines(t *testing.T) {
	st := &fakeStore{}
	e := NewEvents(st, &Spec{MaxEvents: 10, IdleTimeout: time.Hour}, "", nil, time.Now)
	long := strings.Repeat("é", 2040) + "\n" // 4,080 bytes: one line
	endless := strings.Repeat("x", output.MaxLineBytes+10)
	e.lines.Write([]byte(long + endless))
	e.lines.Flush()
	want := []string{
		strings.Repeat("é", LineMax) + TruncatedMark,
		strings.Repeat("x", LineMax) + TruncatedMark,
		strings.Repeat("x", 10),
	}
	got := st.lines()
	if len(got) != len(want) {
		t.Fatalf("got %d events, want %d", len(got), len(want))
	}
	for i := range got {
		if got[i] != want[i] {
			t.Errorf("event %d: %d bytes %.30q…, want %d bytes %.30q…", i+1, len(got[i]), got[i], len(want[i]), want[i])
		}
	}
}

// At most MaxUnread events of a monitor wait unread: a line that the
// bucket lets through while they do is dropped and counted, and once a
// reader has taken them, lines are events again.
func TestEventsUnreadAreBounded(t *testing.T) {
	st := &fakeStore{}
	now := time.Unix(1000, 0)
	e := NewEvents(st, &Spec{MaxEvents: 1000, IdleTimeout: time.Hour}, "", nil, func() time.Time { return now })
	for i := range MaxUnread + 5 {
		now = now.Add(time.Second) // the bucket always has a token
		e.line("line " + strings.Repeat("x", i))
	}
	if len(st.told) != MaxUnread {
		t.Fatalf("%d events waited unread, want %d", len(st.told), MaxUnread)
	}
	st.unread = 0 // a reader took them
	now = now.Add(time.Second)
	e.line("after the read")
	if len(st.told) != MaxUnread+1 {
		t.Fatalf("after a read, one more line gave %d events in all, want %d", len(st.told), MaxUnread+1)
	}
	e.countDropped(true)
	if st.tally.Events != MaxUnread+1 || st.tally.Dropped != 5 {
		t.Errorf("the monitor counts %d events and %d dropped, want %d and 5", st.tally.Events, st.tally.Dropped, MaxUnread+1)
	}
}

// A line that comes after the monitor has ended (stopped while its
// command still prints) is no event: not told, not in its log, and no
// line after it is even looked at.
func TestEventsAfterTheEnd(t *testing.T) {
	st := &fakeStore{ended: true}
	out := filepath.Join(t.TempDir(), "abcd0001.log")
	e := NewEvents(st, &Spec{MaxEvents: 10, IdleTimeout: time.Hour}, out, CreateLog(out, 0), time.Now)
	e.line("late")
	e.log.Close()
	if len(st.told) != 0 || !e.ended {
		t.Errorf("after the end, a line was told as %+v (ended: %v)", st.told, e.ended)
	}
	rd := ReadLog("abcd0001", out)
	defer rd.Close()
	if got, err := rd.Read(nil); err != nil || len(got) != 0 {
		t.Errorf("the events log of an ended monitor holds %+v (%v), want nothing", got, err)
	}
}
