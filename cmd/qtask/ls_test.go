package main

import (
	"context"
	"path/filepath"
	"testing"
)

// TestLsNothingSaysWhatWasFiltered: `ls --status running` with only
// finished tasks once said "No background tasks.", as if they were gone.
// A filtered ls that finds nothing names its filter; a bare one does not.
func TestLsNothingSaysWhatWasFiltered(t *testing.T) {
	state := filepath.Join(t.TempDir(), "state")
	for _, c := range []struct {
		opts LsOptions
		want string
	}{
		{LsOptions{}, "No background tasks.\n"},
		{LsOptions{Status: "running"}, "No running tasks.\n"},
		{LsOptions{Status: "failed"}, "No failed tasks.\n"},
		{LsOptions{Scope: "elsewhere"}, "No background tasks in scope elsewhere.\n"},
		{LsOptions{Status: "cancelled", Scope: "%3"}, "No cancelled tasks in scope %3.\n"},
		{LsOptions{Scope: "odd\x1b[31m"}, "No background tasks in scope odd\\u001b[31m.\n"},
	} {
		deps, out, errOut := testDeps()
		deps.Env.StateDir = state
		if err := runLs(context.Background(), deps, &c.opts); err != nil {
			t.Fatalf("ls %+v: %v", c.opts, err)
		}
		if out.String() != c.want || errOut.Len() != 0 {
			t.Errorf("ls %+v with no tasks printed %q (stderr %q), want %q", c.opts, out, errOut, c.want)
		}
	}
}
