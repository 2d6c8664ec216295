package main

import (
	"encoding/json"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/qtask/qtask/internal/testenv"
)

// nobodyUID owns the foreign files these tests plant.
const nobodyUID = 65534

// stateCommands are commands that read or write the state directory, each
// of which must refuse a state directory it cannot trust.
var stateCommands = [][]string{
	{"ls"},
	{"ls", "--json"},
	{"status", "abcd0001"},
	{"logs", "abcd0001"},
	{"wait", "abcd0001"},
	{"stop", "--all"},
	{"promote", "abcd0001"},
	{"run", "--bg", "--", "touch marker"},
	{"run", "--", "touch marker"},
	{"attach", "abcd0001"},
	{"prune"},
	{"agent", "inbox"},
	{"init", "bash"},
}

// assertRefused runs every state command and checks each exits 1 with one
// line of stderr holding all of want, and that none ran its command.
func (h *harness) assertRefused(extraEnv []string, want ...string) {
	h.t.Helper()
	for _, args := range stateCommands {
		r := h.qtaskIn(h.root, extraEnv, args...)
		if r.code != exitError || strings.Count(r.stderr, "\n") != 1 {
			h.t.Errorf("qtask %s: exit %d, stderr %q; want exit 1 and one line", strings.Join(args, " "), r.code, r.stderr)
			continue
		}
		for _, w := range want {
			if !strings.Contains(r.stderr, w) {
				h.t.Errorf("qtask %s: stderr %q does not say %q", strings.Join(args, " "), r.stderr, w)
			}
		}
	}
	if _, err := os.Stat(filepath.Join(h.root, "marker")); err == nil {
		h.t.Error("a task ran although the state directory was refused")
	}
}

func TestForeignStateDirIsRefused(t *testing.T) {
	t.Parallel()
	for _, sub := range []string{"", "tasks", "output"} {
		t.Run("owner of state/"+sub, func(t *testing.T) {
			h := newHarness(t)
			for _, d := range []string{"tasks", "output"} {
				if err := os.MkdirAll(filepath.Join(h.state, d), 0o700); err != nil {
					t.Fatal(err)
				}
			}
			foreign := filepath.Join(h.state, sub)
			testenv.Chown(t, foreign, nobodyUID)
			h.assertRefused(nil, filepath.Clean(foreign), "owned by nobody (uid 65534)", "chown 0 ")
		})
	}
}

func TestForeignSpecIsNotRun(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	marker := filepath.Join(h.root, "evil-ran")
	evil, err := json.Marshal(map[string]any{"command": "touch " + marker, "shell": "/bin/sh", "cwd": "/",
		"env": []string{"PATH=/usr/bin:/bin"}})
	if err != nil {
		t.Fatal(err)
	}
	evilPath := filepath.Join(h.root, "evil.spec")
	if err := os.WriteFile(evilPath, evil, 0o600); err != nil {
		t.Fatal(err)
	}
	testenv.Chown(t, evilPath, nobodyUID)
	// Another user swaps the spec between `qtask run` writing it and the
	// wrapper reading it: a tmux on PATH that does so just before it
	// starts the task's window (`run` writes the spec while tmux opens
	// the window, so the shim waits for it to be there).
	realTmux, err := exec.LookPath("tmux")
	if err != nil {
		t.Fatal(err)
	}
	shimDir := filepath.Join(h.root, "bin")
	os.Mkdir(shimDir, 0o700)
	shim := `#!/bin/sh
case " $* " in *" _exec "*)
	n=0; until [ -n "$(find "$QTASK_STATE_DIR/tasks" -name '*.spec')" ] || [ $n -ge 1000 ]; do sleep 0.01; n=$((n+1)); done
	for spec in "$QTASK_STATE_DIR"/tasks/*.spec; do cp -p "` + evilPath + `" "$spec.swap" && mv -f "$spec.swap" "$spec"; done;;
esac
exec "` + realTmux + `" "$@"
`
	writeExecutable(t, filepath.Join(shimDir, "tmux"), []byte(shim))
	r := h.qtaskIn(h.root, []string{"PATH=" + shimDir + ":" + os.Getenv("PATH")}, "run", "--bg", "--json", "--", "true")
	if r.code != 0 {
		t.Fatalf("run --bg: exit %d, stderr %q", r.code, r.stderr)
	}
	task := h.wait(decodeTask(t, r.stdout).ID)
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("the wrapper ran a spec another user had put in place of the task's own")
	}
	if task.Status != "failed" || !strings.Contains(task.Error, "owned by nobody") {
		t.Errorf("task with a foreign spec: status %q, error %q; want failed saying the spec is owned by nobody", task.Status, task.Error)
	}
}

func TestStateDirIsNeverChmodded(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		mode fs.FileMode
		want []string
	}{
		{"0755", 0o755, []string{"mode 0755", "chmod 700"}},
		{"0750", 0o750, []string{"mode 0750", "chmod 700"}},
		{"world-writable and sticky like /tmp", 0o777 | fs.ModeSticky, []string{"mode 1777", "set QTASK_STATE_DIR"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := newHarness(t)
			dir := filepath.Join(h.root, "shared")
			if err := os.Mkdir(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(dir, c.mode); err != nil {
				t.Fatal(err)
			}
			h.assertRefused([]string{"QTASK_STATE_DIR=" + dir}, append([]string{dir}, c.want...)...)
			fi, err := os.Stat(dir)
			if err != nil {
				t.Fatal(err)
			}
			if got := fi.Mode() & (fs.ModePerm | fs.ModeSticky); got != c.mode {
				t.Errorf("qtask changed the mode of %s from %v to %v", dir, c.mode, got)
			}
			if entries, _ := os.ReadDir(dir); len(entries) != 0 {
				t.Errorf("qtask created %v in a directory it refused", entries)
			}
		})
	}
	t.Run("symlink", func(t *testing.T) {
		h := newHarness(t)
		real := filepath.Join(h.root, "real")
		if err := os.Mkdir(real, 0o700); err != nil {
			t.Fatal(err)
		}
		link := filepath.Join(h.root, "link")
		if err := os.Symlink(real, link); err != nil {
			t.Fatal(err)
		}
		h.assertRefused([]string{"QTASK_STATE_DIR=" + link}, link, "symlink to "+real)
		if entries, _ := os.ReadDir(real); len(entries) != 0 {
			t.Errorf("qtask wrote %v through a symlinked state directory", entries)
		}
	})
	t.Run("missing parents are created private", func(t *testing.T) {
		h := newHarness(t)
		dir := filepath.Join(h.root, "a", "b", "state")
		if r := h.qtaskIn(h.root, []string{"QTASK_STATE_DIR=" + dir}, "ls"); r.code != 0 {
			t.Fatalf("ls with a new state dir: exit %d, stderr %q", r.code, r.stderr)
		}
		for d := dir; d != h.root; d = filepath.Dir(d) {
			if fi, err := os.Stat(d); err != nil || fi.Mode().Perm() != 0o700 {
				t.Errorf("created %s: %v (%v); want mode 0700", d, fi.Mode(), err)
			}
		}
	})
}

func TestInvalidRecordsAreSkipped(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	good := h.wait(h.start("echo good").ID)
	var base map[string]any
	if err := json.Unmarshal([]byte(mustRead(t, filepath.Join(h.state, "tasks", good.ID+".json"))), &base); err != nil {
		t.Fatal(err)
	}
	variant := func(id string, edit func(m map[string]any)) string {
		m := map[string]any{}
		for k, v := range base {
			m[k] = v
		}
		m["id"], m["output_path"] = id, filepath.Join(h.state, "output", id+".log")
		edit(m)
		data, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		return string(data)
	}
	bad := map[string]string{ // id -> what ls must say about it
		"0000000a": "no id",
		"0000000b": `unknown status "zombie"`,
		"0000000c": `holds id "ffffffff"`,
		"0000000d": "started_at",
		"0000000e": "/etc/passwd",
		"0000000f": "not a regular file but a FIFO",
		"00000010": "symlink",
	}
	plant := map[string]string{
		"0000000a": "null",
		"0000000b": variant("0000000b", func(m map[string]any) { m["status"] = "zombie" }),
		"0000000c": variant("0000000c", func(m map[string]any) { m["id"] = "ffffffff" }),
		"0000000d": variant("0000000d", func(m map[string]any) { delete(m, "started_at") }),
		"0000000e": variant("0000000e", func(m map[string]any) { m["output_path"] = "/etc/passwd" }),
	}
	path := func(id string) string { return filepath.Join(h.state, "tasks", id+".json") }
	for id, data := range plant {
		if err := os.WriteFile(path(id), []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	// A FIFO would hang a reader that opened it blocking; a symlink could
	// point anywhere.
	if err := syscall.Mkfifo(path("0000000f"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(path(good.ID), path("00000010")); err != nil {
		t.Fatal(err)
	}

	r := h.qtask("ls")
	if r.code != 0 {
		t.Fatalf("ls with invalid records: exit %d, stderr %q", r.code, r.stderr)
	}
	if lines := strings.Split(strings.TrimSpace(r.stdout), "\n"); len(lines) != 2 || !strings.Contains(lines[1], good.ID) {
		t.Errorf("ls printed %q; want the header and the one good task, no rows for invalid records", r.stdout)
	}
	warnings := strings.Split(strings.TrimSpace(r.stderr), "\n")
	if len(warnings) != len(bad) {
		t.Errorf("ls warned %d times, want once per invalid record (%d):\n%s", len(warnings), len(bad), r.stderr)
	}
	for id, why := range bad {
		found := false
		for _, w := range warnings {
			found = found || strings.Contains(w, path(id)) && strings.Contains(w, why)
		}
		if !found {
			t.Errorf("ls gave no warning naming %s and saying %q:\n%s", path(id), why, r.stderr)
		}
	}
	if r := h.qtask("ls", "--json"); r.code != 0 || strings.Count(r.stdout, `"id"`) != 1 {
		t.Errorf("ls --json: exit %d, stdout %q; want only the good task", r.code, r.stdout)
	}
	if r := h.qtask("stop", "--all"); r.code != 0 || !strings.Contains(r.stderr, path("0000000a")) {
		t.Errorf("stop --all: exit %d, stderr %q; want exit 0 and warnings naming the invalid records", r.code, r.stderr)
	}
	// Asked for by id, an invalid record is an error naming its file.
	for _, args := range [][]string{{"status", "0000000a"}, {"stop", "0000000a"}, {"logs", "0000000e"}, {"wait", "0000000b"}} {
		r := h.qtask(args...)
		if r.code != exitError || !strings.Contains(r.stderr, path(args[1])) || strings.Contains(r.stderr, `id ""`) {
			t.Errorf("qtask %s: exit %d, stderr %q; want exit 1 naming %s", strings.Join(args, " "), r.code, r.stderr, path(args[1]))
		}
		if strings.Contains(r.stdout, "root:") {
			t.Errorf("qtask %s printed /etc/passwd, named by a planted record", strings.Join(args, " "))
		}
	}
}

func TestPlantedOutputFileIsRefused(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	secret := filepath.Join(h.root, "secret")
	if err := os.WriteFile(secret, []byte("the secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	fifo := h.wait(h.start("echo one").ID)
	link := h.wait(h.start("echo two").ID)
	os.Remove(fifo.OutputPath)
	if err := syscall.Mkfifo(fifo.OutputPath, 0o600); err != nil {
		t.Fatal(err)
	}
	os.Remove(link.OutputPath)
	if err := os.Symlink(secret, link.OutputPath); err != nil {
		t.Fatal(err)
	}
	for _, task := range []string{fifo.ID, link.ID} {
		for _, args := range [][]string{{"logs"}, {"logs", "--tail", "1"}, {"logs", "-f"}, {"logs", "--offset", "1"}} {
			args = append(args, task)
			r := h.qtask(args...) // a FIFO opened blocking would hang here
			if r.code != exitError || !strings.Contains(r.stderr, filepath.Join(h.state, "output", task+".log")) ||
				strings.Contains(r.stdout, "secret") {
				t.Errorf("qtask %s on a planted output file: exit %d, stdout %q, stderr %q; want exit 1 naming the file, nothing printed",
					strings.Join(args, " "), r.code, r.stdout, r.stderr)
			}
		}
	}
}
