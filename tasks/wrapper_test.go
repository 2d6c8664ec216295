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

// TestExecLeavesAnotherWindowsTask: two starts that picked the same id at
// once both open a window; the one that lost the claim must not run the
// winner's command. Its wrapper finds a record naming another wrapper and
// stops there, leaving the winner's spec and record as they were.
func TestExecLeavesAnotherWindowsTask(t *testing.T) {
	t.Parallel()
	s := newTestStore(t)
	const id = "0c0c0c0c"
	if err := s.claimID(id); err != nil {
		t.Fatal(err)
	}
	winner := &record{Task: Task{ID: id, Kind: KindShell, Command: "true", Status: StatusRunning,
		StartedAt: time.Now().UTC(), OutputPath: s.outputPath(id)}, WrapperPID: os.Getpid() + 1}
	if err := s.save(winner); err != nil {
		t.Fatal(err)
	}
	spec := s.specPath(id)
	if err := os.WriteFile(spec, []byte(`{"command":"true","shell":"/bin/sh","cwd":"/"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	pane, err := os.Create(filepath.Join(t.TempDir(), "pane"))
	if err != nil {
		t.Fatal(err)
	}
	defer pane.Close()
	code := s.Exec(context.Background(), ExecOptions{ID: id, Pane: "%98", Out: pane})
	out, _ := os.ReadFile(pane.Name())
	if code == 0 || !strings.Contains(string(out), "another window") {
		t.Fatalf("wrapper of the losing start: exit %d, output %q; want a failure saying the task is another window's", code, out)
	}
	if _, err := os.Stat(spec); err != nil {
		t.Fatalf("the winner's spec is gone: %v", err)
	}
	if r, err := s.load(id); err != nil || r.Status != StatusRunning || r.WrapperPID != winner.WrapperPID {
		t.Fatalf("the winner's record changed: %+v, %v", r, err)
	}
}

// TestClaimIDOnce: of two claims of one id, the second is told it was
// taken (errIDTaken, so its start removes nothing of the winner's), and
// pickID no longer offers the claimed id.
func TestClaimIDOnce(t *testing.T) {
	t.Parallel()
	s := newTestStore(t)
	id, err := s.pickID()
	if err != nil {
		t.Fatal(err)
	}
	if err := s.claimID(id); err != nil {
		t.Fatalf("first claim of %s: %v", id, err)
	}
	if err := s.claimID(id); !errors.Is(err, errIDTaken) {
		t.Fatalf("second claim of %s: %v, want errIDTaken", id, err)
	}
	for range 20 {
		if other, err := s.pickID(); err != nil || other == id {
			t.Fatalf("pickID after %s was claimed: %q, %v", id, other, err)
		}
	}
}
