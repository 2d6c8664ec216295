package tasks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/qtask/qtask/internal/testenv"
	"github.com/qtask/qtask/tasks/procs"
	"github.com/qtask/qtask/tasks/statefs"
	"github.com/qtask/qtask/tasks/taskid"
	"github.com/qtask/qtask/tmux"
)

func permOf(t *testing.T, path string) fs.FileMode {
	t.Helper()
	fi, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Mode().Perm()
}

// newStateDir is a path for a fresh state directory: OpenStore creates it
// 0700. (t.TempDir itself is 0755, which OpenStore rightly refuses.)
func newStateDir(t testing.TB) string {
	return filepath.Join(t.TempDir(), "state")
}

func TestOpenStoreCreatesPrivateDirectories(t *testing.T) {
	for _, sub := range []string{"state", "a/b/state"} {
		t.Run(sub, func(t *testing.T) {
			base := t.TempDir()
			dir := filepath.Join(base, sub)
			s, err := OpenStore(dir)
			if err != nil {
				t.Fatalf("OpenStore(%s): %v", dir, err)
			}
			if s.Dir() != dir {
				t.Errorf("Dir() = %q, want %q", s.Dir(), dir)
			}
			// Every directory qtask created, missing parents included, is private.
			for d := dir; d != base; d = filepath.Dir(d) {
				if got := permOf(t, d); got != 0o700 {
					t.Errorf("created directory %s has mode %#o: other users can read task commands and output; want 0700", d, got)
				}
			}
			for _, d := range []string{filepath.Join(dir, "tasks"), filepath.Join(dir, "output")} {
				if got := permOf(t, d); got != 0o700 {
					t.Errorf("state directory %s has mode %#o, want 0700", d, got)
				}
			}
			if _, err := OpenStore(dir); err != nil {
				t.Errorf("opening the store a second time: %v", err)
			}
		})
	}
}

func symlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

func TestRecordsArePrivate(t *testing.T) {
	s := newTestStore(t)
	r := saveRunning(t, s, "abcd0001", time.Now().UTC())
	if got := permOf(t, s.recordPath(r.ID)); got != 0o600 {
		t.Errorf("task record has mode %#o, want 0600", got)
	}
	// Rewriting keeps it private.
	if _, _, err := s.settle(context.Background(), r.ID, exitOutcome(exited(0))); err != nil {
		t.Fatal(err)
	}
	if got := permOf(t, s.recordPath(r.ID)); got != 0o600 {
		t.Errorf("task record has mode %#o after an update, want 0600", got)
	}
	if got := permOf(t, filepath.Join(s.Dir(), lockName)); got != 0o600 {
		t.Errorf("lock file has mode %#o, want 0600", got)
	}
}

func TestSaveLoadRoundTrip(t *testing.T) {
	s := newTestStore(t)
	code := 3
	start := time.Date(2025, 1, 2, 3, 4, 5, 6, time.UTC)
	end := start.Add(time.Minute)
	want := &record{
		Task: Task{ID: "abcd0001", Name: "build", Kind: KindShell, Command: "make -j4 'a b' \"$X\"\n#x",
			Cwd: "/src", Scope: "s", Status: StatusFailed, ExitCode: &code, Error: "exited with code 3",
			PID: 42, PaneID: "%3", StartedAt: start, EndedAt: &end, OutputPath: s.outputPath("abcd0001"), Background: true},
		WrapperPID: 41, TmuxServer: tmux.NewSocketServer("/tmp/tmux-0/qtask"), EndMarker: "qtask-end-x", OutputMaxBytes: 1 << 20,
		OutputAcked: true,
	}
	if err := s.save(want); err != nil {
		t.Fatal(err)
	}
	got, err := s.load("abcd0001")
	if err != nil {
		t.Fatal(err)
	}
	if got.Command != want.Command || !got.StartedAt.Equal(start) || got.EndedAt == nil || !got.EndedAt.Equal(end) ||
		got.ExitCode == nil || *got.ExitCode != 3 || got.WrapperPID != 41 || got.EndMarker != want.EndMarker ||
		!got.OutputAcked || got.PaneID != "%3" || got.Status != StatusFailed || !got.TmuxServer.Same(want.TmuxServer) {
		t.Errorf("record read back differs from what was saved:\n got %+v\nwant %+v", got, want)
	}
	if _, err := s.load("ffff0000"); !errors.Is(err, taskid.ErrNotFound) {
		t.Errorf("loading a missing record: %v, want not found", err)
	}
}

func TestWriteFileAtomic(t *testing.T) {
	cases := []struct {
		name    string
		prepare func(t *testing.T, path string)
	}{
		{"new file", func(*testing.T, string) {}},
		{"replaces existing file", func(t *testing.T, path string) {
			if err := os.WriteFile(path, []byte("old contents that are longer than the new ones"), 0o644); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "rec.json")
			c.prepare(t, path)
			if err := statefs.WriteAtomic(path, []byte("new\n")); err != nil {
				t.Fatal(err)
			}
			if data, err := os.ReadFile(path); err != nil || string(data) != "new\n" {
				t.Errorf("file holds %q (err %v), want %q", data, err, "new\n")
			}
			if got := permOf(t, path); got != 0o600 {
				t.Errorf("file has mode %#o, want 0600", got)
			}
			assertOnlyEntries(t, dir, "rec.json")
		})
	}
}

func assertOnlyEntries(t *testing.T, dir string, want ...string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	slices.Sort(want)
	if !slices.Equal(names, want) {
		t.Errorf("%s holds %q, want exactly %q (temp files left behind?)", dir, names, want)
	}
}

func TestWriteFileAtomicReplacesSymlink(t *testing.T) {
	dir := t.TempDir()
	victim := filepath.Join(t.TempDir(), "victim")
	if err := os.WriteFile(victim, []byte("precious"), 0o644); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "abcd0001.json")
	if err := os.Symlink(victim, path); err != nil {
		t.Fatal(err)
	}
	if err := statefs.WriteAtomic(path, []byte("record")); err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(victim); string(data) != "precious" {
		t.Errorf("writing a record through a planted symlink overwrote its target: it now holds %q", data)
	}
	fi, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode()&fs.ModeSymlink != 0 || !fi.Mode().IsRegular() {
		t.Errorf("record path is still %v, want a regular file replacing the symlink", fi.Mode())
	}
	if data, _ := os.ReadFile(path); string(data) != "record" {
		t.Errorf("record holds %q, want %q", data, "record")
	}
	assertOnlyEntries(t, dir, "abcd0001.json")
}

func TestWriteFileAtomicFailureLeavesNoTemp(t *testing.T) {
	dir := t.TempDir()
	// A non-empty directory at the path: the rename must fail.
	path := filepath.Join(dir, "abcd0001.json")
	if err := os.MkdirAll(filepath.Join(path, "x"), 0o700); err != nil {
		t.Fatal(err)
	}
	err := statefs.WriteAtomic(path, []byte("record"))
	if err == nil {
		t.Fatal("writing over a directory succeeded")
	}
	if !strings.Contains(err.Error(), path) {
		t.Errorf("error %q does not name the file", err)
	}
	assertOnlyEntries(t, dir, "abcd0001.json")

	// A missing directory: the temp file cannot even be created.
	if err := statefs.WriteAtomic(filepath.Join(dir, "nope", "r.json"), nil); err == nil {
		t.Error("writing into a missing directory succeeded")
	}
}

func TestLoadAllSkipsCorruptAndSorts(t *testing.T) {
	s := newTestStore(t)
	base := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	saveRunning(t, s, "cccc0003", base.Add(2*time.Second))
	saveRunning(t, s, "aaaa0001", base.Add(3*time.Second))
	saveRunning(t, s, "bbbb0002", base)
	saveRunning(t, s, "0000000f", base.Add(2*time.Second)) // same start as cccc0003: id breaks the tie
	corrupt := s.recordPath("dddd0004")
	if err := os.WriteFile(corrupt, []byte(`{"id": "dddd0004", "status": `), 0o600); err != nil {
		t.Fatal(err)
	}
	// A temp file from a writer mid-save and a dotfile are not records.
	for _, name := range []string{".eeee0005.json.tmp123", ".ffff0006.json", "notes.txt"} {
		if err := os.WriteFile(filepath.Join(s.tasksDir(), name), []byte("{"), 0o600); err != nil {
			t.Fatal(err)
		}
	}

	recs, warnings, err := s.loadAll()
	if err != nil {
		t.Fatalf("one corrupt record broke the whole listing: %v", err)
	}
	var ids []string
	for _, r := range recs {
		ids = append(ids, r.ID)
	}
	if want := []string{"bbbb0002", "0000000f", "cccc0003", "aaaa0001"}; !slices.Equal(ids, want) {
		t.Errorf("ls order is %q, want oldest first (ties by id) %q", ids, want)
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], corrupt) {
		t.Fatalf("warnings %q, want exactly one naming %s", warnings, corrupt)
	}
	if strings.Count(warnings[0], corrupt) != 1 {
		t.Errorf("warning %q repeats the file name", warnings[0])
	}
}

func TestResolveThroughStore(t *testing.T) {
	s := newTestStore(t)
	saveRunning(t, s, "abc12345", time.Now())
	saveRunning(t, s, "abc19999", time.Now())
	if id, err := s.Resolve(context.Background(), "abc12"); err != nil || id != "abc12345" {
		t.Errorf("Resolve(abc12) = (%q, %v), want abc12345", id, err)
	}
	if _, err := s.Resolve(context.Background(), "abc1"); !errors.Is(err, taskid.ErrAmbiguous) {
		t.Errorf("Resolve(abc1) = %v, want ambiguous", err)
	}
	// The lock file and the output directory's files never resolve.
	if _, err := s.Resolve(context.Background(), "../lock"); !errors.Is(err, taskid.ErrNotFound) {
		t.Errorf("Resolve(../lock) = %v, want not found", err)
	}
	// An empty id is a mistake in the call (exit 2), not a missing task.
	var arg *ArgumentError
	if _, err := s.Resolve(context.Background(), ""); !errors.As(err, &arg) || errors.Is(err, taskid.ErrNotFound) || !strings.Contains(err.Error(), "task id is empty") {
		t.Errorf("Resolve(\"\") = %v, want an *ArgumentError saying the id is empty", err)
	}
}

func TestLoadSkipsInvalidRecords(t *testing.T) {
	const id = "abcd0001"
	valid := func(s *Store) map[string]any {
		return map[string]any{"id": id, "kind": "shell", "command": "echo hi", "status": "completed",
			"exit_code": 0, "started_at": "2025-01-02T03:04:05Z", "ended_at": "2025-01-02T03:04:06Z",
			"output_path": s.outputPath(id)}
	}
	cases := []struct {
		name   string
		file   string // record file name, default id.json
		plant  func(t *testing.T, s *Store, path string)
		reason string // in the warning
	}{
		{"null", "", writeJSONValue(nil), "no id"},
		{"empty object", "", writeJSONValue(map[string]any{}), "no id"},
		{"id differs from the file name", "", editRecord(valid, "id", "ffff0000"), `"ffff0000"`},
		{"name is not an id", "notes.json", editRecord(valid, "id", "notes"), "not a task id"},
		{"unknown status", "", editRecord(valid, "status", "zombie"), `"zombie"`},
		{"no status", "", editRecord(valid, "status", nil), `unknown status ""`},
		{"unknown kind", "", editRecord(valid, "kind", "cron"), `"cron"`},
		{"no started_at", "", editRecord(valid, "started_at", nil), "started_at"},
		{"ended without ended_at", "", editRecord(valid, "ended_at", nil), "ended_at"},
		{"output_path elsewhere", "", editRecord(valid, "output_path", "/etc/shadow"), "/etc/shadow"},
		{"output_path of another task", "", func(t *testing.T, s *Store, path string) {
			editRecord(valid, "output_path", s.outputPath("ffff0000"))(t, s, path)
		}, "output_path"},
		{"not JSON", "", func(t *testing.T, _ *Store, path string) {
			writeFile(t, path, `{"id": "abcd0001", "status": `)
		}, "unexpected end"},
		{"a symlink to a good record", "", func(t *testing.T, s *Store, path string) {
			good := filepath.Join(t.TempDir(), "good.json")
			editRecord(valid, "id", id)(t, s, good)
			symlink(t, good, path)
		}, "symlink"},
		{"a FIFO", "", func(t *testing.T, _ *Store, path string) {
			if err := syscall.Mkfifo(path, 0o600); err != nil {
				t.Fatal(err)
			}
		}, "not a regular file but a FIFO"},
		{"a directory", "", func(t *testing.T, _ *Store, path string) {
			if err := os.Mkdir(path, 0o700); err != nil {
				t.Fatal(err)
			}
		}, "not a regular file but a directory"},
		{"owned by nobody", "", func(t *testing.T, s *Store, path string) {
			editRecord(valid, "id", id)(t, s, path)
			testenv.Chown(t, path, 65534)
		}, "owned by nobody"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := newTestStore(t)
			good := saveRunning(t, s, "0000000a", time.Now())
			file := c.file
			if file == "" {
				file = id + ".json"
			}
			path := filepath.Join(s.tasksDir(), file)
			c.plant(t, s, path)

			done := make(chan struct{})
			var recs []*record
			var warnings []string
			var err error
			go func() {
				defer close(done)
				recs, warnings, err = s.loadAll()
			}()
			select {
			case <-done:
			case <-time.After(10 * time.Second):
				t.Fatalf("listing tasks hangs on %s", c.name)
			}
			if err != nil {
				t.Fatalf("one bad record broke the whole listing: %v", err)
			}
			if len(recs) != 1 || recs[0].ID != good.ID {
				t.Errorf("listing returned %d records, want only the good one: the bad record was taken for a task", len(recs))
			}
			if len(warnings) != 1 || !strings.Contains(warnings[0], path) || !strings.Contains(warnings[0], c.reason) {
				t.Errorf("warnings %q, want one naming %s and saying %q", warnings, path, c.reason)
			}
			// Asked for by id, it is an error naming the file, not a task.
			if id, ok := isRecordName(file); ok {
				r, err := s.load(id)
				var invalid *InvalidRecordError
				if !errors.As(err, &invalid) || invalid.Path != path {
					t.Errorf("load(%s) = %+v, %v; want an InvalidRecordError naming %s", id, r, err, path)
				}
			}
		})
	}
}

// writeJSONValue plants v, encoded, as a record.
func writeJSONValue(v any) func(t *testing.T, s *Store, path string) {
	return func(t *testing.T, _ *Store, path string) {
		data, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		writeFile(t, path, string(data))
	}
}

// editRecord plants the record base returns with key set to v (nil: removed).
func editRecord(base func(*Store) map[string]any, key string, v any) func(t *testing.T, s *Store, path string) {
	return func(t *testing.T, s *Store, path string) {
		m := base(s)
		if v == nil {
			delete(m, key)
		} else {
			m[key] = v
		}
		writeJSONValue(m)(t, s, path)
	}
}

func writeFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestLoadAcceptsOutputPathThroughAnotherSpelling(t *testing.T) {
	s := newTestStore(t)
	// The same state directory reached through a symlinked parent, as when
	// $HOME is spelled differently by the caller that started the task.
	alias := filepath.Join(t.TempDir(), "alias")
	symlink(t, filepath.Dir(s.Dir()), alias)
	r := saveRunning(t, s, "abcd0001", time.Now())
	r.OutputPath = filepath.Join(alias, filepath.Base(s.Dir()), "output", "abcd0001.log")
	if err := s.save(r); err != nil {
		t.Fatal(err)
	}
	got, err := s.load("abcd0001")
	if err != nil {
		t.Fatalf("a record naming its own output file by another spelling was refused: %v", err)
	}
	if got.OutputPath != s.outputPath("abcd0001") {
		t.Errorf("OutputPath = %q, want this store's own %q", got.OutputPath, s.outputPath("abcd0001"))
	}
}

// Saving a record again and again allocates and frees no inode: the two
// versions' inodes take turns (see save).
func TestSavesRecycleTheRecordsInodes(t *testing.T) {
	s := newTestStore(t)
	r := saveRunning(t, s, "0000abcd", time.Now())
	inodes := map[uint64]bool{}
	for i := range 6 {
		r.Name = fmt.Sprintf("version %d", i)
		if err := s.save(r); err != nil {
			t.Fatal(err)
		}
		got, err := s.load(r.ID)
		if err != nil || got.Name != r.Name {
			t.Fatalf("after save %d: load %+v, %v", i, got, err)
		}
		for _, p := range []string{s.recordPath(r.ID), s.sparePath(r.ID)} {
			if fi, err := os.Lstat(p); err == nil {
				inodes[fi.Sys().(*syscall.Stat_t).Ino] = true
			}
		}
	}
	if len(inodes) != 2 {
		t.Errorf("six saves used %d inodes, want the same two", len(inodes))
	}
}

// TestStateReplacedUnderAStoreGetsNothing: a store whose state directory
// is renamed away and replaced writes neither its lock nor a count into
// the new directory, and refuses the transition.
func TestStateReplacedUnderAStoreGetsNothing(t *testing.T) {
	s := newTestStore(t)
	saveRunning(t, s, "abcd0001", time.Now().UTC())
	if err := os.Rename(s.Dir(), s.Dir()+".away"); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(s.Dir(), 0o700); err != nil {
		t.Fatal(err)
	}
	s.statusLine().Start("abcd0002")
	_, _, err := s.settle(context.Background(), "abcd0001", exitOutcome(exited(0)))
	if !errors.Is(err, statefs.ErrReplaced) || errors.Is(err, fs.ErrNotExist) {
		t.Errorf("settle into a replaced state directory: %v; want it refused as replaced", err)
	}
	if entries, _ := os.ReadDir(s.Dir()); len(entries) != 0 {
		t.Errorf("the store wrote %v into the directory put in its state directory's place", entries)
	}
	// Moved away and not replaced: gone, as far as the path goes.
	os.Remove(s.Dir())
	if _, _, err := s.settle(context.Background(), "abcd0001", exitOutcome(exited(0))); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("settle with the state directory moved away: %v; want it not to exist", err)
	}
}

// BenchmarkOpenStore is what opening an existing state directory costs
// every command, the status line's included.
func BenchmarkOpenStore(b *testing.B) {
	dir := newStateDir(b)
	if _, err := OpenStore(dir); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := OpenStore(dir); err != nil {
			b.Fatal(err)
		}
	}
}

// A task's name works wherever an id does: the running task of that name,
// else the newest; several running is ambiguous and lists them. An id, or a
// unique id prefix, always wins over a name that looks the same.
func TestResolveByName(t *testing.T) {
	s := newTestStore(t)
	base := time.Now().Add(-time.Minute)
	me := os.Getpid()
	named := func(id, name string, started time.Time, running bool) *record {
		t.Helper()
		r := saveRunning(t, s, id, started)
		r.Name, r.WrapperPID, r.WrapperStart = name, me, procs.StartTime(me) // a live wrapper
		if err := s.save(r); err != nil {
			t.Fatal(err)
		}
		if !running {
			settleOrFail(t, s, id, 0)
		}
		return r
	}
	named("aaaa0001", "web", base, true)
	named("aaaa0002", "web", base.Add(time.Second), false) // newer, but ended
	named("bbbb0001", "db", base, false)
	named("bbbb0002", "db", base.Add(2*time.Second), false)
	named("cccc0001", "api", base, true)
	named("cccc0002", "api", base.Add(time.Second), true)
	named("dddd0001", "aaaa", base, true)  // a name that is an ambiguous id prefix
	named("eeee0001", "dddd", base, false) // a name that is a unique id prefix
	named("ffff0001", "job", base, true)
	lost := named("ffff0002", "job", base.Add(time.Second), true)
	lost.WrapperStart++ // its wrapper is gone: the record says running, the task does not
	if err := s.save(lost); err != nil {
		t.Fatal(err)
	}

	if id, err := s.Resolve(context.Background(), "web"); err != nil || id != "aaaa0001" {
		t.Errorf(`Resolve("web") = (%q, %v), want the running task aaaa0001, not the newer ended one`, id, err)
	}
	if id, err := s.Resolve(context.Background(), "db"); err != nil || id != "bbbb0002" {
		t.Errorf(`Resolve("db") = (%q, %v), want the newest, bbbb0002`, id, err)
	}
	if id, err := s.Resolve(context.Background(), "job"); err != nil || id != "ffff0001" {
		t.Errorf(`Resolve("job") = (%q, %v), want ffff0001, the one still running (ffff0002's wrapper is gone)`, id, err)
	}
	var amb *taskid.AmbiguousError
	if _, err := s.Resolve(context.Background(), "api"); !errors.As(err, &amb) || !slices.Equal(amb.Candidates, []string{"cccc0001", "cccc0002"}) ||
		!strings.Contains(err.Error(), `task name "api" is ambiguous`) || !strings.Contains(err.Error(), "cccc0001, cccc0002") {
		t.Errorf(`Resolve("api") with two running = %v, want ambiguous listing cccc0001, cccc0002`, err)
	}
	// Ids first: a full id, and a unique id prefix, whatever the names say.
	if id, err := s.Resolve(context.Background(), "aaaa0001"); err != nil || id != "aaaa0001" {
		t.Errorf(`Resolve("aaaa0001") = (%q, %v), want the id itself`, id, err)
	}
	if id, err := s.Resolve(context.Background(), "dddd"); err != nil || id != "dddd0001" {
		t.Errorf(`Resolve("dddd") = (%q, %v), want dddd0001, the unique id prefix, not eeee0001 named "dddd"`, id, err)
	}
	// An ambiguous id prefix names no task: a task of that name is meant.
	if id, err := s.Resolve(context.Background(), "aaaa"); err != nil || id != "dddd0001" {
		t.Errorf(`Resolve("aaaa") = (%q, %v), want dddd0001, the task named so`, id, err)
	}
	if _, err := s.Resolve(context.Background(), "aaaa0"); !errors.Is(err, taskid.ErrAmbiguous) || !strings.Contains(err.Error(), `task id "aaaa0" is ambiguous`) {
		t.Errorf(`Resolve("aaaa0") = %v, want the ambiguous id prefix`, err)
	}
	if _, err := s.Resolve(context.Background(), "nope"); !errors.Is(err, taskid.ErrNotFound) || err.Error() != `no task with id or name "nope"` {
		t.Errorf(`Resolve("nope") = %v, want not found as an id or name`, err)
	}
	if _, err := s.Resolve(context.Background(), "abc00000"); err == nil || err.Error() != `no task with id "abc00000"` {
		t.Errorf(`Resolve("abc00000") = %v, want not found as an id`, err)
	}
}
