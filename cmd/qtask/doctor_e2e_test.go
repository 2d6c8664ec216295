package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// doctor runs `qtask doctor --json` with a UTF-8 locale and returns its
// findings by check, and its exit code.
func (h *harness) doctor(extraEnv ...string) (map[string]map[string]any, int) {
	h.t.Helper()
	r := h.qtaskIn(h.root, append([]string{"LANG=C.UTF-8", "LC_ALL="}, extraEnv...), "doctor", "--json")
	var list []map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &list); err != nil {
		h.t.Fatalf("doctor --json: %v\n%s%s", err, r.stdout, r.stderr)
	}
	byCheck := map[string]map[string]any{}
	for _, f := range list {
		byCheck[f["check"].(string)] = f
	}
	return byCheck, r.code
}

// doctor passes on a healthy sandbox: tmux, a server with the plugin
// loaded, a private state dir, a valid config, a UTF-8 locale.
func TestDoctorHealthy(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.shellSession("work")
	h.loadPlugin()
	h.writeConfig("keep_finished = 10\n")
	findings, code := h.doctor()
	if code != 0 {
		t.Fatalf("doctor on a healthy sandbox: exit %d, %v", code, findings)
	}
	for _, check := range []string{"tmux", "tmux server", "plugin key bindings", "state directory", "config", "locale"} {
		if f, ok := findings[check]; !ok || f["ok"] != true {
			t.Errorf("check %q: %v", check, f)
		}
	}
	text := h.qtaskIn(h.root, []string{"LANG=C.UTF-8"}, "doctor")
	if text.code != 0 || !strings.Contains(text.stdout, "ok    plugin key bindings: bound") {
		t.Errorf("doctor (text): exit %d\n%s", text.code, text.stdout)
	}
}

// doctor names the problem and its fix, and exits 1, for a bad config, a
// state dir others can read, a server without the plugin's bindings and a
// locale that is not UTF-8.
func TestDoctorFindsProblems(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.shellSession("work") // a server, without the plugin
	h.writeConfig("keep_finished = \"lots\"\n")
	os.MkdirAll(h.state, 0o700)
	os.Chmod(h.state, 0o755)
	findings, code := h.doctor()
	if code != 1 {
		t.Errorf("doctor with problems: exit %d, want 1", code)
	}
	want := map[string]string{
		"config":              "qtask config check",
		"state directory":     "chmod 700",
		"plugin key bindings": "scripts/qtask.tmux",
	}
	for check, fix := range want {
		f := findings[check]
		if f == nil || f["ok"] != false || !strings.Contains(f["fix"].(string)+" "+f["detail"].(string), fix) {
			t.Errorf("check %q: %v, want a failure mentioning %q", check, f, fix)
		}
	}
	if f := findings["config"]; f != nil && !strings.Contains(f["detail"].(string), filepath.Base(h.config)+":1:") {
		t.Errorf("config finding does not name the file and line: %v", f)
	}
	findings, _ = h.doctor("LANG=C", "LC_ALL=C")
	if f := findings["locale"]; f == nil || f["ok"] != false || !strings.Contains(f["fix"].(string), "UTF-8") {
		t.Errorf("locale C: %v", f)
	}
}

// doctor says in which shell panes qtask's hooks are loaded (the promote
// key can move a typed command only there) and how to add them, without
// failing for it; and it notices the plugin's tmux hooks gone.
func TestDoctorShellAndTmuxHooks(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	hooked := h.shellSession("work")
	plain := h.shellSession("plain")
	h.loadPlugin()
	h.typeLine(hooked, `eval "$(qtask init bash)"; echo hooks-$((3+4))`)
	h.waitScreen(hooked, "hooks-7\n")
	eventually(t, "the hooks' first prompt", func() bool {
		_, err := os.Stat(filepath.Join(h.state, "panes", strings.TrimPrefix(hooked, "%")))
		return err == nil
	})
	findings, code := h.doctor()
	f := findings["shell hooks"]
	want := "loaded in 1 of 2 shell panes (not in " + plain + ` bash); to promote a command typed there, add eval "$(qtask init bash)" in ~/.bashrc`
	if code != 0 || f == nil || f["ok"] != true || f["detail"] != want {
		t.Fatalf("doctor: exit %d, shell hooks %v; want ok, %q", code, f, want)
	}
	h.tmux("set-hook", "-gu", "window-unlinked[0]")
	findings, code = h.doctor()
	f = findings["plugin key bindings"]
	if code != 1 || f == nil || f["ok"] != false || !strings.Contains(f["detail"].(string), "tmux hooks without qtask (a killed task pane is noticed late): window-unlinked") {
		t.Fatalf("doctor without the window-unlinked hook: exit %d, %v", code, f)
	}
}

// doctor typed at a shell prompt counts its own pane as that shell (tmux
// names qtask as the pane's command while it runs: "loaded in 0 of 0
// shell panes" was what a person saw), and says when running tasks are
// on another tmux server than the one it checks.
func TestDoctorFromAShellPane(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	pane := h.shellSession("work") // bash without qtask's hooks
	h.loadPlugin()
	// A task started outside tmux, on qtask's own server (tmux -L qtask).
	if r := h.qtaskIn(h.root, []string{"QTASK_TMUX_SOCKET="}, "run", "--bg", "--", "sleep 60"); r.code != 0 {
		t.Fatalf("run --bg on qtask's own server: exit %d %s", r.code, r.stderr)
	}
	out := filepath.Join(h.root, "doctor.json")
	h.typeLine(pane, "qtask doctor --json > "+out+"; echo doctor-done-$((2+3))")
	h.waitScreen(pane, "doctor-done-5")
	var list []map[string]any
	if err := json.Unmarshal([]byte(mustRead(t, out)), &list); err != nil {
		t.Fatal(err)
	}
	findings := map[string]map[string]any{}
	for _, f := range list {
		findings[f["check"].(string)] = f
	}
	want := "loaded in 0 of 1 shell panes (not in " + pane + ` bash); to promote a command typed there, add eval "$(qtask init bash)" in ~/.bashrc`
	if f := findings["shell hooks"]; f == nil || f["ok"] != true || f["detail"] != want {
		t.Errorf("doctor run in %s: shell hooks %v; want %q", pane, f, want)
	}
	own := "-S " + filepath.Join(h.root, fmt.Sprintf("tmux-%d", os.Getuid()), "qtask")
	f := findings["tasks on other servers"]
	if f == nil || f["ok"] != true || !strings.Contains(f["detail"].(string), "1 running task runs on another tmux server than this one (1 on tmux "+own+")") ||
		!strings.Contains(f["detail"].(string), "`tmux "+own+" attach`") {
		t.Errorf("doctor with a task on tmux -L qtask: %v; want a note naming that server", f)
	}
	// Where doctor checks that server, there is nothing to say.
	findings, _ = h.doctor("QTASK_TMUX_SOCKET=")
	if f := findings["tasks on other servers"]; f != nil {
		t.Errorf("doctor on the server the task runs on: %v, want no note", f)
	}
	h.qtaskIn(h.root, []string{"QTASK_TMUX_SOCKET="}, "stop", "--all")
}
