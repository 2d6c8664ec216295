package main

import (
	"strings"
	"testing"
)

// TestWaitTimeoutZeroChecksOnce: `wait --timeout 0` is a poll, not "wait
// forever" (what a 0 meant before, to a script's surprise).
func TestWaitTimeoutZeroChecksOnce(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	running := h.start("sleep 300")
	done := h.start("exit 3")
	h.wait(done.ID)
	w := h.spawn(nil, "wait", "--timeout", "0", running.ID)
	if code := w.wait(t); code != exitTimeout || !strings.Contains(w.stderr.String(), "still running: "+running.ID) {
		t.Errorf("wait --timeout 0 on a running task: exit %d, stderr %q; want %d at once", code, w.stderr.String(), exitTimeout)
	}
	if r := h.qtask("wait", "--timeout", "0", done.ID); r.code != 3 {
		t.Errorf("wait --timeout 0 on a task that exited 3: exit %d, stderr %q", r.code, r.stderr)
	}
	h.mustQtask("stop", running.ID)
}
