package tasks

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/qtask/qtask/tasks/procs"
	"github.com/qtask/qtask/tasks/retention"
)

// saveFinished stores a completed task that ended at end, with an output file.
func saveFinished(t *testing.T, s *Store, id string, end time.Time) {
	t.Helper()
	zero := 0
	r := &record{Task: Task{
		ID: id, Kind: KindShell, Command: "echo " + id, Status: StatusCompleted, ExitCode: &zero,
		StartedAt: end.Add(-time.Second), EndedAt: &end, OutputPath: s.outputPath(id),
	}}
	if err := s.save(r); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(s.outputPath(id), []byte(id+"\n"), fileMode); err != nil {
		t.Fatal(err)
	}
}

// saveAlive stores a running task whose wrapper is this test process, so
// reconcile leaves it running.
func saveAlive(t *testing.T, s *Store, id string, started time.Time) {
	t.Helper()
	r := saveRunning(t, s, id, started)
	r.WrapperPID, r.WrapperStart = os.Getpid(), procs.StartTime(os.Getpid())
	if err := s.save(r); err != nil {
		t.Fatal(err)
	}
}

func TestPruneRemovesEverythingOfTheTaskOnly(t *testing.T) {
	s := newTestStore(t)
	base := time.Now().Add(-time.Hour).UTC()
	saveFinished(t, s, "0000000a", base)
	saveFinished(t, s, "0000000b", base.Add(time.Minute))
	saveFinished(t, s, "0000000c", base.Add(2*time.Minute))
	// Leftovers of the oldest: an untaken spec, the FIFO of a killed
	// wrapper, an interrupted record write and an interrupted output
	// rotation.
	for _, p := range []string{
		s.specPath("0000000a"),
		filepath.Join(s.tasksDir(), "0000000a.pipe"),
		filepath.Join(s.tasksDir(), ".0000000a.json.tmp42"),
		filepath.Join(s.outputDir(), ".0000000a.log.rotate-XYZ"),
	} {
		if err := os.WriteFile(p, nil, fileMode); err != nil {
			t.Fatal(err)
		}
	}
	// A running task older than all of them, and a start in progress (its
	// output file exists, its record not yet): neither may be touched.
	saveAlive(t, s, "0000000e", base.Add(-time.Hour))
	if err := os.WriteFile(s.outputPath("0000000e"), nil, fileMode); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(s.outputPath("0000000f"), nil, fileMode); err != nil {
		t.Fatal(err)
	}

	var forgotten []string
	removed, warnings, err := s.Prune(context.Background(), PruneOptions{Rule: retention.Rule{Keep: 1}, Forget: func(t *Task) { forgotten = append(forgotten, t.ID) }})
	if err != nil || len(warnings) > 0 {
		t.Fatalf("Prune: %v, warnings %q", err, warnings)
	}
	var ids []string
	for _, r := range removed {
		ids = append(ids, r.ID)
	}
	if want := []string{"0000000a", "0000000b"}; !slices.Equal(ids, want) || !slices.Equal(forgotten, want) {
		t.Errorf("removed %q, forgot %q; want both %q", ids, forgotten, want)
	}
	// The running task's record was saved twice: its earlier version's
	// inode is kept for the next save.
	assertOnlyEntries(t, s.tasksDir(), "0000000c.json", "0000000e.json", ".0000000e.json.tmp-spare")
	assertOnlyEntries(t, s.outputDir(), "0000000c.log", "0000000e.log", "0000000f.log")
}

func TestPruneDryRunRemovesNothing(t *testing.T) {
	s := newTestStore(t)
	base := time.Now().Add(-time.Hour).UTC()
	saveFinished(t, s, "0000000a", base)
	saveFinished(t, s, "0000000b", base.Add(time.Minute))
	removed, _, err := s.Prune(context.Background(), PruneOptions{Rule: retention.Rule{All: true}, DryRun: true, Forget: func(*Task) { t.Error("Forget called by a dry run") }})
	if err != nil || len(removed) != 2 {
		t.Fatalf("dry run = %d tasks, %v; want 2", len(removed), err)
	}
	assertOnlyEntries(t, s.tasksDir(), "0000000a.json", "0000000b.json")
	assertOnlyEntries(t, s.outputDir(), "0000000a.log", "0000000b.log")
}

func TestAutoPruneReadsRecordsOnlyPastABatch(t *testing.T) {
	s := newTestStore(t)
	base := time.Now().Add(-time.Hour).UTC()
	for i := range 25 {
		saveFinished(t, s, "000000"+strconv.Itoa(10+i), base.Add(time.Duration(i)*time.Second))
	}
	removed, _, err := s.AutoPrune(context.Background(), 20, nil)
	if err != nil || len(removed) != 5 {
		t.Fatalf("AutoPrune(20) over 25 finished = %d removed, %v; want 5", len(removed), err)
	}
	// Two more tasks: within the batch (20/10), so no record is read. A
	// corrupt record would be reported if they were.
	saveFinished(t, s, "00000050", base.Add(time.Minute))
	if err := os.WriteFile(s.recordPath("00000051"), []byte("{"), fileMode); err != nil {
		t.Fatal(err)
	}
	removed, warnings, err := s.AutoPrune(context.Background(), 20, nil)
	if err != nil || len(removed) != 0 || len(warnings) != 0 {
		t.Fatalf("AutoPrune within the batch = %d removed, warnings %q, %v; want nothing read", len(removed), warnings, err)
	}
	// One more: past the batch, the oldest go, the corrupt record stays.
	saveFinished(t, s, "00000052", base.Add(2*time.Minute))
	removed, warnings, err = s.AutoPrune(context.Background(), 20, nil)
	if err != nil || len(removed) != 2 || len(warnings) != 1 {
		t.Fatalf("AutoPrune past the batch = %d removed, warnings %q, %v; want 2 removed, 1 warning", len(removed), warnings, err)
	}
	if _, err := os.Stat(s.recordPath("00000051")); err != nil {
		t.Errorf("a record prune could not read was removed: %v", err)
	}
	// keep 0 keeps everything.
	if removed, _, err := s.AutoPrune(context.Background(), 0, nil); err != nil || len(removed) != 0 {
		t.Errorf("AutoPrune(0) = %d removed, %v; want none", len(removed), err)
	}
}

func TestAutoPruneNeverRemovesRunning(t *testing.T) {
	s := newTestStore(t)
	base := time.Now().Add(-time.Hour).UTC()
	for i := range 5 {
		saveAlive(t, s, "0000001"+strconv.Itoa(i), base)
	}
	removed, _, err := s.AutoPrune(context.Background(), 2, nil)
	if err != nil || len(removed) != 0 {
		t.Fatalf("AutoPrune(2) with 5 running = %d removed, %v; want none", len(removed), err)
	}
	if ids, _ := s.ids(); len(ids) != 5 {
		t.Errorf("%d records left, want all 5 running tasks", len(ids))
	}
}

// TestAutoPruneIgnoresAPlantedMark: the mark of the last prune is read only
// from a regular file of ours; a symlink to a huge count would otherwise
// switch automatic pruning off.
func TestAutoPruneIgnoresAPlantedMark(t *testing.T) {
	s := newTestStore(t)
	base := time.Now().Add(-time.Hour).UTC()
	for i := range 5 {
		saveFinished(t, s, "0000002"+strconv.Itoa(i), base.Add(time.Duration(i)*time.Second))
	}
	huge := filepath.Join(t.TempDir(), "count")
	if err := os.WriteFile(huge, []byte("1000000\n"), fileMode); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(huge, s.prunedPath()); err != nil {
		t.Fatal(err)
	}
	removed, _, err := s.AutoPrune(context.Background(), 3, nil)
	if err != nil || len(removed) != 2 {
		t.Fatalf("AutoPrune(3) over 5 finished with a planted mark = %d removed, %v; want 2", len(removed), err)
	}
}

// A prune removes the FIFOs nobody reads any more and no task owns (a
// display pipe whose `qtask run` and wrapper both died, a killed inbox
// waiter's doorbell, also one an older qtask left in the scope's own
// directory), once they are old enough not to be a maker's between its
// mkfifo and its open; a FIFO someone holds open is in use and stays. A
// dry run removes nothing.
func TestPruneSweepsAbandonedPipes(t *testing.T) {
	s := newTestStore(t)
	scope := filepath.Join(s.queue.ScopeDir("claude:abc"), "waiters")
	if err := os.MkdirAll(scope, 0o700); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-2 * abandonedPipeAge)
	fifo := func(path string, made time.Time) string {
		t.Helper()
		if err := syscall.Mkfifo(path, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(path, made, made); err != nil {
			t.Fatal(err)
		}
		return path
	}
	deadDisplay := fifo(filepath.Join(s.tasksDir(), "display-0000dead.fifo"), old)
	liveDisplay := fifo(filepath.Join(s.tasksDir(), "display-00001ive.fifo"), old)
	newDisplay := fifo(filepath.Join(s.tasksDir(), "display-0000fresh.fifo"), time.Now())
	deadBell := fifo(filepath.Join(scope, ".waiter-"+"4242-0a0b"), old)
	oldLayoutBell := fifo(filepath.Join(s.queue.ScopeDir("claude:abc"), ".waiter-"+"4141-0e0f"), old)
	liveBell := fifo(filepath.Join(scope, ".waiter-"+"4343-0c0d"), old)
	for _, held := range []string{liveDisplay, liveBell} {
		f, err := os.OpenFile(held, os.O_RDWR, 0)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
	}

	if _, _, err := s.Prune(context.Background(), PruneOptions{Rule: retention.Rule{All: true}, DryRun: true}); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{deadDisplay, deadBell, oldLayoutBell} {
		if _, err := os.Lstat(p); err != nil {
			t.Errorf("a dry run removed %s: %v", filepath.Base(p), err)
		}
	}

	if _, _, err := s.Prune(context.Background(), PruneOptions{Rule: retention.Rule{All: true}}); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{deadDisplay, deadBell, oldLayoutBell} {
		if _, err := os.Lstat(p); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s, read by nobody, is still there after a prune (%v)", filepath.Base(p), err)
		}
	}
	for _, p := range []string{liveDisplay, liveBell, newDisplay} {
		if _, err := os.Lstat(p); err != nil {
			t.Errorf("%s, in use or just made, was removed by a prune: %v", filepath.Base(p), err)
		}
	}
}
