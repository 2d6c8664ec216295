package tasks

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func permOf(t *testing.T, path string) fs.FileMode {
	t.Helper()
	fi, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Mode().Perm()
}

func TestOpenStoreDirectoryModes(t *testing.T) {
	cases := []struct {
		name  string
		sub   string                         // dir below the temp dir
		setup func(t *testing.T, dir string) // prepares dir before OpenStore
	}{
		{"fresh", "state", func(*testing.T, string) {}},
		{"parents missing", "a/b/state", func(*testing.T, string) {}},
		{"existing 0755 dir", "state", func(t *testing.T, dir string) {
			mkdirMode(t, dir, 0o755)
		}},
		{"existing 0755 and 0777 subdirs", "state", func(t *testing.T, dir string) {
			mkdirMode(t, dir, 0o755)
			mkdirMode(t, filepath.Join(dir, "tasks"), 0o755)
			mkdirMode(t, filepath.Join(dir, "output"), 0o777)
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), c.sub)
			c.setup(t, dir)
			s, err := OpenStore(dir)
			if err != nil {
				t.Fatalf("OpenStore(%s): %v", dir, err)
			}
			if s.Dir() != dir {
				t.Errorf("Dir() = %q, want %q", s.Dir(), dir)
			}
			for _, d := range []string{dir, filepath.Join(dir, "tasks"), filepath.Join(dir, "output")} {
				if got := permOf(t, d); got != 0o700 {
					t.Errorf("state directory %s has mode %#o: other users can read task commands and output; want 0700", d, got)
				}
			}
		})
	}
}

func mkdirMode(t *testing.T, dir string, mode fs.FileMode) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, mode); err != nil { // Chmod ignores the umask
		t.Fatal(err)
	}
}

func TestOpenStoreRefusesSymlinkedSubdir(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	elsewhere := t.TempDir()
	mkdirMode(t, dir, 0o700)
	if err := os.Symlink(elsewhere, filepath.Join(dir, "tasks")); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenStore(dir); err == nil || !strings.Contains(err.Error(), "symlink") {
		t.Errorf("OpenStore with tasks/ a symlink to %s: err = %v, want a refusal naming the symlink", elsewhere, err)
	}
}

func TestRecordsArePrivate(t *testing.T) {
	s := newTestStore(t)
	r := saveRunning(t, s, "abcd0001", time.Now().UTC())
	if got := permOf(t, s.recordPath(r.ID)); got != 0o600 {
		t.Errorf("task record has mode %#o, want 0600", got)
	}
	// Rewriting keeps it private.
	if _, _, err := s.settle(r.ID, exitOutcome(exited(0))); err != nil {
		t.Fatal(err)
	}
	if got := permOf(t, s.recordPath(r.ID)); got != 0o600 {
		t.Errorf("task record has mode %#o after an update, want 0600", got)
	}
	if got := permOf(t, s.lockPath()); got != 0o600 {
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
			PID: 42, PaneID: "%3", StartedAt: start, EndedAt: &end, OutputPath: "/o", Background: true},
		WrapperPID: 41, TmuxServer: "-L qtask", EndMarker: "qtask-end-x", OutputMaxBytes: 1 << 20,
		OutputComplete: true,
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
		!got.OutputComplete || got.PaneID != "%3" || got.Status != StatusFailed {
		t.Errorf("record read back differs from what was saved:\n got %+v\nwant %+v", got, want)
	}
	if _, err := s.load("ffff0000"); !errors.Is(err, ErrNotFound) {
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
			if err := writeFileAtomic(path, []byte("new\n")); err != nil {
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
	if err := writeFileAtomic(path, []byte("record")); err != nil {
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
	err := writeFileAtomic(path, []byte("record"))
	if err == nil {
		t.Fatal("writing over a directory succeeded")
	}
	if !strings.Contains(err.Error(), path) {
		t.Errorf("error %q does not name the file", err)
	}
	assertOnlyEntries(t, dir, "abcd0001.json")

	// A missing directory: the temp file cannot even be created.
	if err := writeFileAtomic(filepath.Join(dir, "nope", "r.json"), nil); err == nil {
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
	if id, err := s.Resolve("abc12"); err != nil || id != "abc12345" {
		t.Errorf("Resolve(abc12) = (%q, %v), want abc12345", id, err)
	}
	if _, err := s.Resolve("abc1"); !errors.Is(err, ErrAmbiguous) {
		t.Errorf("Resolve(abc1) = %v, want ambiguous", err)
	}
	// The lock file and the output directory's files never resolve.
	if _, err := s.Resolve("../lock"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Resolve(../lock) = %v, want not found", err)
	}
}
