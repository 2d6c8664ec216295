package main

import (
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/qtask/qtask/internal/testenv"
	"github.com/qtask/qtask/tasks"
)

// TestStateDirInsideAnotherUsersDirIsRefused: whoever may write to a
// directory above the state directory can rename the state directory away
// under a running qtask and put their own in its place. Such a state
// directory is refused as one another user owns is: exit 1, one line
// naming the directory and the fix, and nothing created.
func TestStateDirInsideAnotherUsersDirIsRefused(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		mode   fs.FileMode
		nobody bool // the parent is another user's
		exists bool // our own state directory is there already
		want   []string
	}{
		{"parent owned by another user", 0o755, true, false, []string{"owned by nobody (uid 65534)", "set QTASK_STATE_DIR"}},
		{"own state dir in a parent another user owns", 0o755, true, true, []string{"owned by nobody (uid 65534)"}},
		{"parent 0777 without the sticky bit", 0o777, false, false, []string{"mode 0777", "set QTASK_STATE_DIR"}},
		{"parent writable by its group", 0o770, false, false, []string{"mode 0770", "chmod g-w"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := newHarness(t)
			parent := filepath.Join(h.root, "shared")
			// Two levels down: every directory above is checked, not
			// just the nearest, and the missing one between is not made.
			state := filepath.Join(parent, "sub", "state")
			if err := os.Mkdir(parent, 0o700); err != nil {
				t.Fatal(err)
			}
			if c.exists {
				if err := os.MkdirAll(state, 0o700); err != nil {
					t.Fatal(err)
				}
			}
			if err := os.Chmod(parent, c.mode); err != nil {
				t.Fatal(err)
			}
			if c.nobody {
				testenv.Chown(t, parent, nobodyUID)
			}
			h.assertRefused([]string{"QTASK_STATE_DIR=" + state}, append([]string{state, "inside " + parent + ","}, c.want...)...)
			look := parent
			if c.exists {
				look = state
			}
			if entries, _ := os.ReadDir(look); len(entries) != 0 {
				t.Errorf("qtask created %v in %s, whose state directory it refused", entries, look)
			}
		})
	}
	t.Run("world-writable and sticky like /tmp", func(t *testing.T) {
		h := newHarness(t)
		parent := filepath.Join(h.root, "tmp")
		if err := os.Mkdir(parent, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(parent, 0o777|fs.ModeSticky); err != nil {
			t.Fatal(err)
		}
		if r := h.qtaskIn(h.root, []string{"QTASK_STATE_DIR=" + filepath.Join(parent, "state")}, "ls"); r.code != 0 {
			t.Errorf("ls with the state directory in a sticky shared directory: exit %d, stderr %q; want it used", r.code, r.stderr)
		}
	})
}

// TestMissingHomeIsNeverCreated: the default state directory is made
// inside $HOME (or $XDG_STATE_HOME), never the home itself: as root,
// `HOME=/nonexistent qtask ls` made /nonexistent.
func TestMissingHomeIsNeverCreated(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"HOME", "XDG_STATE_HOME"} {
		t.Run(name, func(t *testing.T) {
			h := newHarness(t)
			missing := filepath.Join(h.root, "gone", "home")
			h.assertRefused([]string{"QTASK_STATE_DIR=", name + "=" + missing},
				name+"="+missing+" does not exist", "set "+name, "QTASK_STATE_DIR")
			if _, err := os.Lstat(filepath.Join(h.root, "gone")); err == nil {
				t.Errorf("qtask created the missing %s (%s)", name, missing)
			}
		})
	}
	t.Run("existing HOME", func(t *testing.T) {
		h := newHarness(t)
		home := filepath.Join(h.root, "home")
		if r := h.qtaskIn(h.root, []string{"QTASK_STATE_DIR="}, "ls"); r.code != 0 {
			t.Fatalf("ls with the default state directory: exit %d, stderr %q", r.code, r.stderr)
		}
		for _, d := range []string{".local", ".local/state", ".local/state/qtask"} {
			if fi, err := os.Lstat(filepath.Join(home, d)); err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o700 {
				t.Errorf("%s in HOME: %v; want a directory made 0700", d, err)
			}
		}
	})
}

// TestWrapperNeverWritesIntoAReplacedStateDir: the state directory is
// renamed away under a running task and another user's directory put in
// its place. The task's wrapper creates nothing in that directory (the
// lock and counts/ once went there), neither while the command runs (its
// status push) nor once it ends: its bookkeeping fails, saying so, until
// the real directory is back, and then the task ends as it did.
func TestWrapperNeverWritesIntoAReplacedStateDir(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	gate := filepath.Join(h.root, "gate")
	task := h.start("while [ ! -e '" + gate + "' ]; do sleep 0.05; done")
	eventually(t, "task to have a pid", func() bool { return h.status(task.ID).PID != 0 })
	var rec struct {
		WrapperPID int `json:"wrapper_pid"`
	}
	if err := json.Unmarshal([]byte(mustRead(t, filepath.Join(h.state, "tasks", task.ID+".json"))), &rec); err != nil || rec.WrapperPID == 0 {
		t.Fatalf("task record names no wrapper: %v", err)
	}

	away := h.state + ".away"
	if err := os.Rename(h.state, away); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(h.state, 0o700); err != nil {
		t.Fatal(err)
	}
	testenv.Chown(t, h.state, nobodyUID)
	// The wrapper updates the status segment once the command has run a
	// moment, taking the push lock in counts/.
	pushed := func(dir string) bool {
		_, err := os.Lstat(filepath.Join(dir, "counts", ".push-lock"))
		return err == nil
	}
	eventually(t, "the wrapper's status push", func() bool { return pushed(away) || pushed(h.state) })
	if err := os.WriteFile(gate, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	// The command has ended; the wrapper cannot record it, and says so in
	// its process name (what `qtask ls` shows of a task it holds back).
	comm := func() string {
		b, _ := os.ReadFile("/proc/" + strconv.Itoa(rec.WrapperPID) + "/comm")
		return strings.TrimSpace(string(b))
	}
	eventually(t, "the wrapper to settle or say why it cannot", func() bool {
		c := comm()
		return c == "" || strings.HasPrefix(c, "qtask~")
	})
	if entries, _ := os.ReadDir(h.state); len(entries) != 0 {
		t.Errorf("the task's wrapper created %v in the directory put in the state directory's place", entries)
	}
	if comm() == "" {
		t.Errorf("the wrapper is gone without recording the task's end")
	}

	if err := os.Remove(h.state); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(away, h.state); err != nil {
		t.Fatal(err)
	}
	if got := h.wait(task.ID); got.Status != tasks.StatusCompleted {
		t.Errorf("with its state directory back, the task is %s %q; want completed", got.Status, got.Error)
	}
}
