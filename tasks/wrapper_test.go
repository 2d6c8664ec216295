package tasks

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestExecWithoutRecordRemovesItsSpec: a start that dies between writing
// the spec and the record (its caller killed) leaves a wrapper that never
// gets a record; the spec holds the caller's environment, so the wrapper
// deletes it before it gives up, fails, and says which task in its pane.
// Not parallel: it shortens the package's recordWait for its run.
func TestExecWithoutRecordRemovesItsSpec(t *testing.T) {
	defer func(d time.Duration) { recordWait = d }(recordWait)
	recordWait = 20 * time.Millisecond
	s, err := OpenStore(newStateDir(t))
	if err != nil {
		t.Fatal(err)
	}
	spec := s.specPath("0badc0de")
	if err := os.WriteFile(spec, []byte(`{"command":"true","shell":"/bin/sh","cwd":"/","env":["SECRET=x"]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	pane, err := os.Create(filepath.Join(t.TempDir(), "pane"))
	if err != nil {
		t.Fatal(err)
	}
	defer pane.Close()
	code := s.Exec(context.Background(), ExecOptions{ID: "0badc0de", Pane: "%99", Out: pane})
	out, _ := os.ReadFile(pane.Name())
	if code == 0 || !strings.Contains(string(out), "0badc0de") {
		t.Fatalf("wrapper without a record: exit %d, output %q; want a failure naming the task", code, out)
	}
	if _, err := os.Stat(spec); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("the spec is still there after the wrapper gave up (stat: %v)", err)
	}
}

// TestAwaitRecordWaitsForALateRecord: the wrapper finds a record saved after
// it started looking, soon (within the watch's first polls) or late (after
// them). How the watch wakes is watch_test.go's to test.
func TestAwaitRecordWaitsForALateRecord(t *testing.T) {
	t.Parallel()
	for _, late := range []time.Duration{0, 5 * time.Millisecond, 400 * time.Millisecond} {
		s := newTestStore(t)
		saved := make(chan error, 1)
		go func() {
			time.Sleep(late)
			saved <- s.save(&record{Task: Task{ID: "0a0a0a0a", Kind: KindShell, Command: "true",
				Status: StatusRunning, StartedAt: time.Now().UTC(), OutputPath: s.outputPath("0a0a0a0a")}})
		}()
		if late == 0 {
			if err := <-saved; err != nil {
				t.Fatal(err)
			}
			saved <- nil
		}
		r, err := s.awaitRecord("0a0a0a0a")
		if serr := <-saved; serr != nil {
			t.Fatal(serr)
		}
		if err != nil || r.ID != "0a0a0a0a" {
			t.Fatalf("record saved %v after the wrapper looked: got %+v, %v", late, r, err)
		}
	}
}
