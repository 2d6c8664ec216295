package main

import (
	"encoding/json"
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
