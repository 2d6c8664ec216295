package main

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

// TestScripts runs the documentation's scenarios as written (the README's
// and docs/REFERENCE.md's), from testdata/script/*.txtar (one per section,
// named in its first line; CONTRIBUTING.md lists them), against the real
// binary and a private tmux server whose socket lives in the script's own
// short temp dir. When a section changes, its script changes with it.
func TestScripts(t *testing.T) {
	t.Parallel()
	testscript.Run(t, testscript.Params{
		Dir:   "testdata/script",
		Setup: scriptWorld,
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"exit":   cmdExit,
			"taskid": cmdTaskID,
			"mcp":    cmdMCP,
		},
	})
}

// scriptWorld gives a script its own qtask world, as newHarness does: state,
// config, HOME, and a tmux socket (Unix socket paths are limited to about
// 108 bytes, so it goes in a short temp dir, not the work dir), with
// qtask on PATH. TMUX_TMPDIR is that dir too, so a script that unsets
// QTASK_TMUX_SOCKET to show qtask's own default server (`tmux -L qtask`)
// gets it there, never the user's; a script's own "user" server goes there
// too (as $TMUX_TMPDIR/NAME.sock). All are killed at the end.
func scriptWorld(env *testscript.Env) error {
	root, err := os.MkdirTemp("", "qts")
	if err != nil {
		return err
	}
	socket := filepath.Join(root, "tmux.sock")
	env.Defer(func() {
		killServers(root)
		os.RemoveAll(root)
	})
	env.Setenv("TMUX_TMPDIR", root)
	home := filepath.Join(env.WorkDir, "home")
	if err := os.MkdirAll(home, 0o700); err != nil {
		return err
	}
	env.Setenv("HOME", home)
	env.Setenv("QTASK_STATE_DIR", filepath.Join(env.WorkDir, "state"))
	env.Setenv("QTASK_CONFIG", filepath.Join(env.WorkDir, "config.toml"))
	env.Setenv("QTASK_TMUX_SOCKET", socket)
	env.Setenv("PATH", filepath.Dir(qtaskBin)+string(os.PathListSeparator)+os.Getenv("PATH"))
	repo, err := filepath.Abs("../..") // tests run in their package's directory
	if err != nil {
		return err
	}
	env.Setenv("REPO", repo) // for the plugin, scripts/qtask.tmux
	return nil
}

// killServers ends the tmux servers a script may have started under root:
// its socket, others it made there (*.sock), and `tmux -L` ones.
func killServers(root string) {
	sockets, _ := filepath.Glob(filepath.Join(root, "*.sock"))
	named, _ := filepath.Glob(filepath.Join(root, "tmux-*", "*"))
	for _, s := range append(sockets, named...) {
		exec.Command("tmux", "-S", s, "kill-server").Run()
	}
}

// cmdExit is `exit N PROGRAM ARGS...`: run the program and require exit
// status N, as the exit-code table (docs/REFERENCE.md) promises (testscript's own
// `! exec` only tells zero from non-zero). Its output is then there for
// stdout and stderr to check.
func cmdExit(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: exit N program [args...]")
	}
	want, err := strconv.Atoi(args[0])
	if err != nil {
		ts.Fatalf("exit: %q is not a number", args[0])
	}
	got := 0
	if err := ts.Exec(args[1], args[2:]...); err != nil {
		var exitErr *exec.ExitError
		if !errors.As(err, &exitErr) {
			ts.Fatalf("exit: %v", err)
		}
		got = exitErr.ExitCode()
	}
	if got != want {
		ts.Fatalf("%s exited %d, want %d", args[1], got, want)
	}
}

// cmdTaskID is `taskid NAME`: set $NAME to the id of the task the last
// command printed as JSON (`qtask run --bg --json`), for the commands a
// documented scenario then runs on it.
func cmdTaskID(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: taskid NAME")
	}
	var task struct{ ID string }
	if err := json.Unmarshal([]byte(ts.ReadFile("stdout")), &task); err != nil || task.ID == "" {
		ts.Fatalf("taskid: the last command printed no task as JSON: %v", err)
	}
	ts.Setenv(args[0], task.ID)
}
