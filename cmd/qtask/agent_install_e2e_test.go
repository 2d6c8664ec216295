package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/qtask/qtask/internal/agenttest"
)

// TestAgentInstall: install merges qtask's hooks into an agent's settings
// without touching the rest, a second install changes nothing, --dry-run
// prints the diff and writes nothing, a backup keeps the previous text,
// and uninstall gives back the file as it was.
func TestAgentInstall(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	proj := filepath.Join(h.root, "proj")
	settings := filepath.Join(proj, ".qwen", "settings.json")
	mine := "{\n  \"model\": {\n    \"name\": \"x\"\n  },\n  \"hooks\": {\n    \"Stop\": [\n      {\n        \"hooks\": [\n          {\n            \"type\": \"command\",\n            \"command\": \"notify-send done\"\n          }\n        ]\n      }\n    ]\n  }\n}\n"
	if err := os.MkdirAll(filepath.Dir(settings), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(settings, []byte(mine), 0o640); err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) result { return h.qtaskIn(proj, nil, append([]string{"agent"}, args...)...) }
	dry := run("install", "qwen", "--dry-run")
	if dry.code != 0 || !strings.HasPrefix(dry.stdout, "--- "+settings+"\n+++ "+settings+"\n@@ ") ||
		!strings.Contains(dry.stdout, "+            \"command\": \""+qtaskBin+" agent hook qwen\",") || strings.Contains(dry.stdout, "\n-") {
		t.Errorf("install --dry-run: exit %d\n%s\nwant a diff that only adds qtask's hooks", dry.code, dry.stdout)
	}
	if got, _ := os.ReadFile(settings); string(got) != mine {
		t.Fatalf("--dry-run wrote the settings:\n%s", got)
	}
	if r := run("install", "qwen"); r.code != 0 || !strings.Contains(r.stdout, "previous version: "+settings+".qtask-backup") {
		t.Fatalf("install: exit %d, %q %q", r.code, r.stdout, r.stderr)
	}
	installed, _ := os.ReadFile(settings)
	if backup, _ := os.ReadFile(settings + ".qtask-backup"); string(backup) != mine {
		t.Errorf("backup holds %q, want the file as it was", backup)
	}
	if fi, _ := os.Stat(settings); fi.Mode().Perm() != 0o640 {
		t.Errorf("settings mode changed to %v", fi.Mode().Perm())
	}
	for _, want := range []string{"notify-send done", "\"UserPromptSubmit\"", "\"PostToolUse\"", "\"SessionStart\"", "agent hook qwen\",\n            \"timeout\": 10"} {
		if !strings.Contains(string(installed), want) {
			t.Errorf("installed settings lack %q:\n%s", want, installed)
		}
	}
	if r := run("install", "qwen"); r.code != 0 || !strings.Contains(r.stdout, "nothing to change") {
		t.Errorf("second install: %q", r.stdout)
	}
	if again, _ := os.ReadFile(settings); string(again) != string(installed) {
		t.Errorf("second install changed the file")
	}
	if r := run("uninstall", "qwen"); r.code != 0 {
		t.Fatalf("uninstall: exit %d %q", r.code, r.stderr)
	}
	if got, _ := os.ReadFile(settings); string(got) != mine {
		t.Errorf("after uninstall the settings are:\n%s\nwant them as they were:\n%s", got, mine)
	}
	if r := run("uninstall", "qwen"); !strings.Contains(r.stdout, "nothing to change") {
		t.Errorf("second uninstall: %q", r.stdout)
	}

	// Bad input: one line naming the file and what to do, exit 1; usage errors exit 2.
	if err := os.WriteFile(settings, []byte("{ // mine\n}"), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := run("install", "qwen"); r.code != 1 || !strings.Contains(r.stderr, settings) || !strings.Contains(r.stderr, "by hand") {
		t.Errorf("install into a file with comments: exit %d, %q", r.code, r.stderr)
	}
	for _, args := range [][]string{{"install", "codex"}, {"install"}, {"install", "claude", "--user", "--project"}} {
		if r := run(args...); r.code != exitUsage {
			t.Errorf("agent %q: exit %d, want %d", args, r.code, exitUsage)
		}
	}
}

// TestRealAgentClaudeDoctorAcceptsInstall: the settings install writes are valid
// for Claude Code itself (`claude doctor` lists "Invalid settings"
// otherwise; in -p mode bad settings are ignored without a word).
func TestRealAgentClaudeDoctorAcceptsInstall(t *testing.T) {
	t.Parallel()
	claude := agenttest.Require(t, agenttest.Claude)
	h := newHarness(t)
	proj, home := filepath.Join(h.root, "proj"), filepath.Join(h.root, "home")
	os.MkdirAll(proj, 0o755)
	for _, args := range [][]string{{"install", "claude", "--hold", "90s"}, {"install", "claude", "--user"}} {
		if r := h.qtaskIn(proj, []string{"CLAUDE_CONFIG_DIR=" + filepath.Join(home, ".claude")}, append([]string{"agent"}, args...)...); r.code != 0 {
			t.Fatalf("agent %v: exit %d %s", args, r.code, r.stderr)
		}
	}
	doctor := func() string {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, claude, "doctor")
		cmd.Dir = proj
		cmd.Env = []string{"HOME=" + home, "CLAUDE_CONFIG_DIR=" + filepath.Join(home, ".claude"), "PATH=/usr/bin:/bin", "TERM=dumb"}
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("claude doctor: %v\n%s", err, out)
		}
		return string(out)
	}
	if out := doctor(); strings.Contains(out, "Invalid settings") || !strings.Contains(out, "Claude Code doctor") {
		t.Errorf("claude doctor on the installed settings:\n%s", out)
	}
	// The check can fail: a hook entry Claude does not know is reported.
	bad := filepath.Join(proj, ".claude", "settings.json")
	if err := os.WriteFile(bad, []byte(`{"hooks":{"Stop":[{"hooks":[{"type":"qtask"}]}]}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if out := doctor(); !strings.Contains(out, "Invalid settings") {
		t.Errorf("claude doctor did not report a bad hook entry:\n%s", out)
	}
}

// TestAgentInstallRoutesClaude: installing for Claude sets the shell
// prefix (a qtask-claude-shell link beside the settings) and agent mode in
// the env of the project's local settings (.claude/settings.local.json), and the routing hook; --no-route leaves the prefix
// out; a prefix of the user's own is never replaced; uninstall takes out
// exactly that, the link included.
func TestAgentInstallRoutesClaude(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	proj := filepath.Join(h.root, "proj")
	settings := filepath.Join(proj, ".claude", "settings.local.json")
	link := filepath.Join(proj, ".claude", "qtask-claude-shell")
	mine := "{\n  \"env\": {\n    \"FOO\": \"1\"\n  }\n}\n"
	if err := os.MkdirAll(filepath.Dir(settings), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(settings, []byte(mine), 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) result { return h.qtaskIn(proj, nil, append([]string{"agent"}, args...)...) }
	if r := run("install", "claude"); r.code != 0 {
		t.Fatalf("install: exit %d %q", r.code, r.stderr)
	}
	installed, _ := os.ReadFile(settings)
	for _, want := range []string{`"FOO": "1"`, `"QTASK_AGENT": "1"`, `"CLAUDE_CODE_SHELL_PREFIX": "` + link + `"`, `"PreToolUse"`, `"matcher": "Bash|TaskStop"`} {
		if !strings.Contains(string(installed), want) {
			t.Errorf("installed settings lack %s:\n%s", want, installed)
		}
	}
	if target, err := os.Readlink(link); err != nil || target != qtaskBin {
		t.Errorf("the prefix link points to %q (%v), want %s", target, err, qtaskBin)
	}
	if r := run("uninstall", "claude"); r.code != 0 {
		t.Fatalf("uninstall: exit %d %q", r.code, r.stderr)
	}
	if got, _ := os.ReadFile(settings); string(got) != mine {
		t.Errorf("after uninstall the settings are:\n%s\nwant:\n%s", got, mine)
	}
	if _, err := os.Lstat(link); !os.IsNotExist(err) {
		t.Errorf("uninstall left the prefix link (%v)", err)
	}

	if r := run("install", "claude", "--no-route"); r.code != 0 {
		t.Fatalf("install --no-route: exit %d %q", r.code, r.stderr)
	}
	if got, _ := os.ReadFile(settings); strings.Contains(string(got), "CLAUDE_CODE_SHELL_PREFIX") || strings.Contains(string(got), "PreToolUse") {
		t.Errorf("--no-route routed:\n%s", got)
	}
	if _, err := os.Lstat(link); !os.IsNotExist(err) {
		t.Errorf("--no-route made the prefix link (%v)", err)
	}
	// Over a routed install, --no-route turns routing off, and nothing else.
	run("install", "claude")
	if r := run("install", "claude", "--no-route"); r.code != 0 || strings.Contains(r.stdout, "hooks for claude already in") {
		t.Errorf("install --no-route over a routed install: exit %d %q %q; want routing taken out", r.code, r.stdout, r.stderr)
	}
	got, _ := os.ReadFile(settings)
	if strings.Contains(string(got), "CLAUDE_CODE_SHELL_PREFIX") || strings.Contains(string(got), "PreToolUse") || !strings.Contains(string(got), `"QTASK_AGENT": "1"`) {
		t.Errorf("--no-route over a routed install left:\n%s", got)
	}
	if _, err := os.Lstat(link); !os.IsNotExist(err) {
		t.Errorf("--no-route over a routed install left the prefix link (%v)", err)
	}
	run("uninstall", "claude")
	if got, _ := os.ReadFile(settings); string(got) != mine {
		t.Errorf("after uninstall the settings are:\n%s\nwant:\n%s", got, mine)
	}

	theirs := "{\n  \"env\": {\n    \"CLAUDE_CODE_SHELL_PREFIX\": \"/usr/bin/audit\"\n  }\n}\n"
	os.WriteFile(settings, []byte(theirs), 0o644)
	if r := run("install", "claude"); r.code != 1 || !strings.Contains(r.stderr, "--no-route") {
		t.Errorf("install over the user's own shell prefix: exit %d %q; want 1 and the way out", r.code, r.stderr)
	}
	if got, _ := os.ReadFile(settings); string(got) != theirs {
		t.Errorf("the user's prefix was touched:\n%s", got)
	}
	if _, err := os.Lstat(link); !os.IsNotExist(err) {
		t.Errorf("a refused install made the prefix link (%v)", err)
	}
}

// TestAgentInstallMovesClaudeOutOfSharedSettings: a Claude project install
// writes .claude/settings.local.json, takes an older install's entries out
// of the shared .claude/settings.json (which teams commit) so that no hook
// runs twice, leaving the user's own there byte for byte, and, in a git
// work tree that would commit the local file, adds Claude's own rule to
// git's global excludes file and says so, and warns of the files beside it
// that name paths on this machine and git would commit (the shared file's
// backup). Uninstall cleans both files.
func TestAgentInstallMovesClaudeOutOfSharedSettings(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	mine := "{\n  \"permissions\": {\n    \"allow\": [\n      \"Bash(make:*)\"\n    ]\n  },\n  \"env\": {\n    \"FOO\": \"1\"\n  }\n}\n"
	// What an older install left in the shared file: qtask's entries
	// merged into the user's, as install merges them into any file.
	older := filepath.Join(h.root, "older")
	os.MkdirAll(filepath.Join(older, ".claude"), 0o755)
	os.WriteFile(filepath.Join(older, ".claude", "settings.local.json"), []byte(mine), 0o644)
	if r := h.qtaskIn(older, nil, "agent", "install", "claude"); r.code != 0 {
		t.Fatalf("install: exit %d %q", r.code, r.stderr)
	}
	oldShared, _ := os.ReadFile(filepath.Join(older, ".claude", "settings.local.json"))

	proj := filepath.Join(h.root, "proj")
	shared, local := filepath.Join(proj, ".claude", "settings.json"), filepath.Join(proj, ".claude", "settings.local.json")
	os.MkdirAll(filepath.Dir(shared), 0o755)
	if out, err := exec.Command("git", "init", "-q", proj).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v %s", err, out)
	}
	os.WriteFile(shared, oldShared, 0o644)
	run := func(args ...string) result { return h.qtaskIn(proj, nil, append([]string{"agent"}, args...)...) }
	r := run("install", "claude")
	excludes := filepath.Join(h.root, "home", ".config", "git", "ignore")
	if r.code != 0 || !strings.Contains(r.stdout, "removed from "+shared+" (an older install's, now in settings.local.json") ||
		!strings.Contains(r.stdout, "added **/.claude/settings.local.json to "+excludes) ||
		!strings.Contains(r.stdout, "warning: git does not ignore "+shared+".qtask-backup") {
		t.Fatalf("install over an older one: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if got, _ := os.ReadFile(shared); string(got) != mine {
		t.Errorf("the shared settings after install:\n%s\nwant the user's as they were:\n%s", got, mine)
	}
	installed, _ := os.ReadFile(local)
	for _, want := range []string{"agent hook claude --rewake", `"PreToolUse"`, `"QTASK_AGENT": "1"`, `"CLAUDE_CODE_SHELL_PREFIX"`} {
		if !strings.Contains(string(installed), want) {
			t.Errorf("the local settings lack %s:\n%s", want, installed)
		}
	}
	check := exec.Command("git", "-C", proj, "check-ignore", "-q", ".claude/settings.local.json")
	check.Env = h.env // the harness's HOME, whose excludes file install wrote
	if err := check.Run(); err != nil {
		t.Errorf("git does not ignore the local settings after install: %v", err)
	}
	// Again: nothing to move, the rule is there; the backup of the shared
	// file (it names paths on this machine too) is still not ignored.
	if r := run("install", "claude"); r.code != 0 || strings.Contains(r.stdout, "removed from") || strings.Contains(r.stdout, "added") ||
		!strings.Contains(r.stdout, "warning: git does not ignore "+shared+".qtask-backup") {
		t.Errorf("a second install: exit %d %q", r.code, r.stdout)
	}
	os.WriteFile(shared, oldShared, 0o644) // an older install again, beside this one
	if r := run("uninstall", "claude"); r.code != 0 || !strings.Contains(r.stdout, "removed from "+shared) {
		t.Fatalf("uninstall: exit %d %q %q", r.code, r.stdout, r.stderr)
	}
	if got, _ := os.ReadFile(shared); string(got) != mine {
		t.Errorf("the shared settings after uninstall:\n%s\nwant:\n%s", got, mine)
	}
	if got, _ := os.ReadFile(local); strings.Contains(string(got), "qtask") {
		t.Errorf("the local settings after uninstall:\n%s", got)
	}
}
