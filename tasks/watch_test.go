package tasks

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// inotifyInstances counts this process's open inotify descriptors.
func inotifyInstances(t *testing.T) int {
	t.Helper()
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, fd := range fds {
		if target, _ := os.Readlink(filepath.Join("/proc/self/fd", fd.Name())); target == "anon_inode:inotify" {
			n++
		}
	}
	return n
}

// A short watch polls and never opens an inotify instance, whose teardown
// would cost the waiter a kernel grace period at exit; one that lasts
// longer than pollFor gets file events, and gives them up when closed.
func TestWatchPollsBeforeItSetsUpFileEvents(t *testing.T) {
	s := newTestStore(t)
	before := inotifyInstances(t)
	w := s.watch([]string{"a1b2c3d4"}, true)
	start := time.Now()
	for range 3 {
		select {
		case <-w.C:
		case <-time.After(time.Second):
			t.Fatal("a fresh watch did not wake its owner within 1s")
		}
	}
	if n := inotifyInstances(t); time.Since(start) < pollFor && n != before {
		t.Fatalf("%d inotify instances %v into a watch, want %d: the first moments are polled", n, time.Since(start), before)
	}
	deadline := time.Now().Add(5 * time.Second)
	for inotifyInstances(t) != before+1 {
		if time.Now().After(deadline) {
			t.Fatal("a watch that outlived its polling has no inotify instance")
		}
		time.Sleep(10 * time.Millisecond)
	}
	w.Close()
	for inotifyInstances(t) != before {
		if time.Now().After(deadline) {
			t.Fatal("a closed watch kept its inotify instance")
		}
		time.Sleep(10 * time.Millisecond)
	}
}
