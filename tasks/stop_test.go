package tasks

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"
)

// A stop of everything skips what is not running, lost tasks included
// (found out on the way), and says which records it could not read.
func TestStopAllStopsOnlyRunningTasksAndWarnsOfDamage(t *testing.T) {
	var warnings []string
	s := newTestStore(t).WithWarnings(func(msg string) { warnings = append(warnings, msg) })
	ended := saveRunning(t, s, "a11e0001", time.Now().UTC())
	settleOrFail(t, s, ended.ID, 0)
	// Its wrapper never started, an hour ago: lost, with no pid to signal.
	saveRunning(t, s, "a11e0002", time.Now().UTC().Add(-time.Hour))
	if err := os.WriteFile(s.recordPath("a11e0003"), []byte("{not json"), fileMode); err != nil {
		t.Fatal(err)
	}

	results, err := s.StopAll(context.Background(), StopOptions{Grace: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if len(results) != 0 {
		t.Fatalf("StopAll stopped %d tasks, want none: nothing was running", len(results))
	}
	if lost, err := s.Get("a11e0002"); err != nil || lost.Status != StatusFailed {
		t.Fatalf("the task whose wrapper never started: %v %v, want it settled as failed", lost, err)
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], "a11e0003") {
		t.Fatalf("warnings %q, want one naming the damaged record a11e0003", warnings)
	}
}
