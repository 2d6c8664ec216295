package monitor

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// A monitor's events come back from its log as written, oldest first,
// each read once; a line that is no event (the cap's note) comes as a Note
// at the time of the event before it; a monitor without a log has none.
func TestEventsLogRoundTrip(t *testing.T) {
	out := filepath.Join(t.TempDir(), "0000000a.log")
	if got := EventsPath(out); got != filepath.Join(filepath.Dir(out), "0000000a.events") {
		t.Fatalf("EventsPath(%q) = %q, want the .events file beside it", out, got)
	}
	rd := ReadLog("0000000a", out)
	defer rd.Close()
	if got, err := rd.Read(nil); err != nil || len(got) != 0 {
		t.Fatalf("a monitor without a log gave %+v, %v; want nothing", got, err)
	}

	l := CreateLog(out, 0)
	if l == nil {
		t.Fatal("CreateLog made no log")
	}
	at := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	l.Add(at, 1, "ERROR one")
	l.out.Write([]byte("[qtask: older events dropped]\n")) // as the cap writes it
	l.Close()
	if fi, err := os.Stat(EventsPath(out)); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("events log: %v, %v; want mode 0600", fi, err)
	}
	got, err := rd.Read(nil)
	want := []Event{
		{Task: "0000000a", Time: at, Count: 1, Line: "ERROR one"},
		{Task: "0000000a", Time: at, Note: "[qtask: older events dropped]"},
	}
	if err != nil || len(got) != len(want) {
		t.Fatalf("read %+v, %v; want %+v", got, err, want)
	}
	for i := range want {
		if !got[i].Time.Equal(want[i].Time) || got[i].Task != want[i].Task || got[i].Count != want[i].Count ||
			got[i].Line != want[i].Line || got[i].Note != want[i].Note {
			t.Errorf("event %d: %+v, want %+v", i, got[i], want[i])
		}
	}
	if again, err := rd.Read(nil); err != nil || len(again) != 0 {
		t.Errorf("a second read gave %+v, %v; want nothing new", again, err)
	}
	var nilLog *Log
	nilLog.Add(at, 2, "x") // no log: nothing, no panic
	nilLog.Close()
}
