package statefs

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/qtask/qtask/internal/testenv"
)

// newStateDir is a path for a fresh state directory: OpenRoot creates it
// 0700. (t.TempDir itself is 0755, which OpenRoot rightly refuses.)
func newStateDir(t testing.TB) string {
	return filepath.Join(t.TempDir(), "state")
}

// openState opens the state directory dir as the task store does: the
// directory itself, then tasks/ and output/ in it, held to the same rules.
func openState(dir string) error {
	r, err := OpenRoot(dir, Home{})
	for _, sub := range []string{"tasks", "output"} {
		if err == nil {
			err = r.EnsureDir(sub)
		}
	}
	return err
}

func symlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

func TestOpenRootRefusesUnsafeDirectories(t *testing.T) {
	const nobody = 65534
	cases := []struct {
		name  string
		setup func(t *testing.T, dir string) (path string) // returns the offending path
		want  []string                                     // in the error besides the path
	}{
		{"state dir 0755", func(t *testing.T, dir string) string {
			mkdirMode(t, dir, 0o755)
			return dir
		}, []string{"0755", "chmod 700"}},
		{"state dir 0750", func(t *testing.T, dir string) string {
			mkdirMode(t, dir, 0o750)
			return dir
		}, []string{"0750", "chmod 700"}},
		{"state dir 1777 like /tmp", func(t *testing.T, dir string) string {
			mkdirMode(t, dir, 0o777|fs.ModeSticky)
			return dir
		}, []string{"mode 1777", "set QTASK_STATE_DIR"}},
		{"tasks/ 0777", func(t *testing.T, dir string) string {
			mkdirMode(t, dir, 0o700)
			mkdirMode(t, filepath.Join(dir, "tasks"), 0o777)
			return filepath.Join(dir, "tasks")
		}, []string{"0777"}},
		{"state dir owned by nobody", func(t *testing.T, dir string) string {
			mkdirMode(t, dir, 0o700)
			testenv.Chown(t, dir, nobody)
			return dir
		}, []string{"owned by nobody (uid 65534)", "chown"}},
		{"output/ owned by nobody", func(t *testing.T, dir string) string {
			mkdirMode(t, filepath.Join(dir, "output"), 0o700)
			testenv.Chown(t, filepath.Join(dir, "output"), nobody)
			return filepath.Join(dir, "output")
		}, []string{"owned by nobody"}},
		{"state dir a symlink", func(t *testing.T, dir string) string {
			real := filepath.Join(filepath.Dir(dir), "real")
			mkdirMode(t, real, 0o700)
			symlink(t, real, dir)
			return dir
		}, []string{"symlink", "real", "QTASK_STATE_DIR"}},
		{"tasks/ a symlink", func(t *testing.T, dir string) string {
			mkdirMode(t, dir, 0o700)
			symlink(t, t.TempDir(), filepath.Join(dir, "tasks"))
			return filepath.Join(dir, "tasks")
		}, []string{"symlink"}},
		{"state dir a file", func(t *testing.T, dir string) string {
			if err := os.WriteFile(dir, nil, 0o600); err != nil {
				t.Fatal(err)
			}
			return dir
		}, []string{"not a directory"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := newStateDir(t)
			bad := c.setup(t, dir)
			before, err := os.Lstat(bad)
			if err != nil {
				t.Fatal(err)
			}
			err = openState(dir)
			if err == nil {
				t.Fatalf("the state directory was accepted with %s (%v): other users could read or replace task state", bad, before.Mode())
			}
			msg := err.Error()
			for _, w := range append([]string{bad}, c.want...) {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q does not say %q", msg, w)
				}
			}
			if strings.Contains(msg, "\n") {
				t.Errorf("error %q is more than one line", msg)
			}
			after, err := os.Lstat(bad)
			if err != nil {
				t.Fatal(err)
			}
			if after.Mode() != before.Mode() || ownerUID(after) != ownerUID(before) {
				t.Errorf("opening the state directory changed %s from %v (uid %d) to %v (uid %d); it must never change a directory it finds",
					bad, before.Mode(), ownerUID(before), after.Mode(), ownerUID(after))
			}
		})
	}
}

func TestOpenRootNeverAdvisesChmodOfASharedDir(t *testing.T) {
	for _, mode := range []fs.FileMode{0o777 | fs.ModeSticky, 0o777, 0o733} {
		dir := newStateDir(t)
		mkdirMode(t, dir, mode)
		_, err := OpenRoot(dir, Home{})
		if err == nil || strings.Contains(err.Error(), "chmod") {
			t.Errorf("OpenRoot of a %v directory: %v; want a refusal that does not advise making it private: "+
				"a world-writable directory like /tmp is shared on purpose", mode, err)
		}
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

func TestOpenRootRefusesUnsafeParents(t *testing.T) {
	const nobody = 65534
	cases := []struct {
		name string
		// setup makes the directories above the state directory in base
		// and returns the state directory and the parent to blame ("":
		// the state directory is fine).
		setup func(t *testing.T, base string) (dir, bad string)
		want  []string
	}{
		{"parent 0777", func(t *testing.T, base string) (string, string) {
			mkdirMode(t, filepath.Join(base, "p"), 0o777)
			return filepath.Join(base, "p", "state"), filepath.Join(base, "p")
		}, []string{"mode 0777", "set QTASK_STATE_DIR"}},
		{"grandparent writable by its group, parent missing", func(t *testing.T, base string) (string, string) {
			mkdirMode(t, filepath.Join(base, "g"), 0o775|fs.ModeSetgid)
			return filepath.Join(base, "g", "p", "state"), filepath.Join(base, "g")
		}, []string{"mode 2775", "chmod g-w"}},
		{"parent owned by nobody", func(t *testing.T, base string) (string, string) {
			mkdirMode(t, filepath.Join(base, "p"), 0o755)
			testenv.Chown(t, filepath.Join(base, "p"), nobody)
			return filepath.Join(base, "p", "state"), filepath.Join(base, "p")
		}, []string{"owned by nobody (uid 65534)"}},
		{"sticky parent owned by nobody", func(t *testing.T, base string) (string, string) {
			mkdirMode(t, filepath.Join(base, "p"), 0o777|fs.ModeSticky)
			testenv.Chown(t, filepath.Join(base, "p"), nobody)
			return filepath.Join(base, "p", "state"), filepath.Join(base, "p")
		}, []string{"owned by nobody"}},
		{"through a symlink into a 0777 directory", func(t *testing.T, base string) (string, string) {
			mkdirMode(t, filepath.Join(base, "open", "x"), 0o700)
			mkdirMode(t, filepath.Join(base, "open"), 0o777)
			symlink(t, filepath.Join(base, "open", "x"), filepath.Join(base, "link"))
			return filepath.Join(base, "link", "state"), filepath.Join(base, "open")
		}, []string{"mode 0777"}},
		{"sticky like /tmp", func(t *testing.T, base string) (string, string) {
			mkdirMode(t, filepath.Join(base, "p"), 0o777|fs.ModeSticky)
			return filepath.Join(base, "p", "state"), ""
		}, nil},
		{"through a symlink into a private directory", func(t *testing.T, base string) (string, string) {
			mkdirMode(t, filepath.Join(base, "real"), 0o700)
			symlink(t, filepath.Join(base, "real"), filepath.Join(base, "link"))
			return filepath.Join(base, "link", "state"), ""
		}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir, bad := c.setup(t, t.TempDir())
			_, err := OpenRoot(dir, Home{})
			if bad == "" {
				if err != nil {
					t.Fatalf("OpenRoot(%s): %v", dir, err)
				}
				return
			}
			if err == nil {
				t.Fatalf("OpenRoot accepted %s inside %s, whose other users could swap it", dir, bad)
			}
			for _, w := range append([]string{dir, "inside " + bad + ","}, c.want...) {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
			if _, serr := os.Lstat(dir); serr == nil {
				t.Errorf("OpenRoot created %s although it refused it", dir)
			}
		})
	}
}

func TestOpenRootNeverCreatesHome(t *testing.T) {
	base := t.TempDir()
	home := filepath.Join(base, "home")
	dir := filepath.Join(home, ".local", "state", "qtask")
	_, err := OpenRoot(dir, Home{Dir: home, Var: "HOME"})
	if err == nil || !strings.Contains(err.Error(), "HOME="+home+" does not exist") {
		t.Errorf("OpenRoot under a missing HOME: %v; want an error saying HOME does not exist", err)
	}
	if _, err := os.Lstat(home); err == nil {
		t.Fatalf("OpenRoot created the missing HOME %s", home)
	}
	mkdirMode(t, home, 0o755)
	if _, err := OpenRoot(dir, Home{Dir: home, Var: "HOME"}); err != nil {
		t.Fatalf("OpenRoot under an existing HOME: %v", err)
	}
	if fi, err := os.Stat(home); err != nil || fi.Mode().Perm() != 0o755 {
		t.Errorf("HOME's mode changed: %v %v", fi, err)
	}
}
