package install

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/qtask/qtask/agent/hooks"
	"github.com/qtask/qtask/internal/testenv"
)

// TestClaudeProjectGoesLocal: a Claude project install writes
// .claude/settings.local.json; the shared .claude/settings.json is where
// an older install wrote, and only there for a Claude project.
func TestClaudeProjectGoesLocal(t *testing.T) {
	p := Paths{Cwd: "/p", Home: "/h"}
	for _, c := range []struct {
		a            hooks.Agent
		user         bool
		want, shared string
	}{
		{hooks.Claude, false, "/p/.claude/settings.local.json", "/p/.claude/settings.json"},
		{hooks.Claude, true, "/h/.claude/settings.json", ""},
		{hooks.Qwen, false, "/p/.qwen/settings.json", ""},
		{hooks.Gemini, false, "/p/.gemini/settings.json", ""},
	} {
		got, err := SettingsPath(c.a, c.user, p)
		if err != nil || got != c.want {
			t.Errorf("SettingsPath(%s, user %v) = %q (%v), want %q", c.a.Name, c.user, got, err, c.want)
		}
		if s := SharedSettingsPath(c.a, c.user, p); s != c.shared {
			t.Errorf("SharedSettingsPath(%s, user %v) = %q, want %q", c.a.Name, c.user, s, c.shared)
		}
	}
}

// TestPlanRemoveShared: an older install's entries (hooks, env) leave the
// shared settings, the user's stay as they were; a shared file without
// them is not changed by a byte; a shell prefix of the user's there is
// refused, as in the local file.
func TestPlanRemoveShared(t *testing.T) {
	dir := t.TempDir()
	p := Paths{Cwd: dir}
	shared := filepath.Join(dir, ".claude", "settings.json")
	os.MkdirAll(filepath.Dir(shared), 0o755)
	link := ShellLinkPath(shared)
	old := mustAdd(t, hooks.Claude, userSettings, cmdClaude, 0)
	routed, err := AddRoute(hooks.Claude, []byte(old), cmdClaude)
	if err == nil {
		routed, err = AddEnv(routed, ClaudeEnv(link))
	}
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(shared, routed, 0o644)
	c, ok, err := PlanRemoveShared(hooks.Claude, false, p, ClaudeEnv(link))
	if err != nil || !ok || !c.Shared || c.Path != shared {
		t.Fatalf("PlanRemoveShared: %+v %v %v", c, ok, err)
	}
	if string(c.New) != userSettings {
		t.Errorf("the shared settings after the move:\n%s\nwant the user's as they were:\n%s", c.New, userSettings)
	}

	untouched := "{\"env\": {\"FOO\": \"1\"},\n \"hooks\": {}}" // not in qtask's style: kept as is
	os.WriteFile(shared, []byte(untouched), 0o644)
	if c, _, err := PlanRemoveShared(hooks.Claude, false, p, ClaudeEnv(link)); err != nil || c.Diff() != "" {
		t.Errorf("a shared file without qtask's entries: %v\n%s", err, c.Diff())
	}
	os.WriteFile(shared, []byte(`{"env":{"CLAUDE_CODE_SHELL_PREFIX":"/usr/bin/audit"}}`), 0o644)
	if _, _, err := PlanRemoveShared(hooks.Claude, false, p, ClaudeEnv(link)); err == nil || !strings.Contains(err.Error(), shared) || !strings.Contains(err.Error(), "--no-route") {
		t.Errorf("a shell prefix of the user's in the shared file: %v", err)
	}
	if _, _, err := PlanRemoveShared(hooks.Claude, false, p, ClaudeEnv("")); err != nil {
		t.Errorf("--no-route with the user's prefix in the shared file: %v", err)
	}
	// A shared file qtask could not rewrite is left alone when nothing of
	// qtask's is in it, and refused when something is.
	os.Remove(shared)
	os.WriteFile(filepath.Join(dir, "dotfiles.json"), []byte("{\n  // mine\n}\n"), 0o644)
	os.Symlink(filepath.Join(dir, "dotfiles.json"), shared)
	if c, ok, err := PlanRemoveShared(hooks.Claude, false, p, ClaudeEnv(link)); err != nil || !ok || c.Diff() != "" {
		t.Errorf("a symlinked shared file with comments and no qtask: %v %v %q", err, ok, c.Diff())
	}
	os.WriteFile(filepath.Join(dir, "dotfiles.json"), routed, 0o644)
	if _, _, err := PlanRemoveShared(hooks.Claude, false, p, ClaudeEnv(link)); err == nil || !strings.Contains(err.Error(), "symlink") {
		t.Errorf("a symlinked shared file with qtask's entries: %v", err)
	}
	if _, ok, _ := PlanRemoveShared(hooks.Qwen, false, p, nil); ok {
		t.Errorf("qwen has no shared file to clean")
	}
}

// TestKeepOutOfGit: in a git work tree where the local settings are not
// ignored, Claude's own rule goes into git's global excludes file (and is
// said); once ignored, nothing is said or written; outside a work tree
// nothing at all; a tracked file gets a warning.
func TestKeepOutOfGit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		testenv.Unavailable(t, "needs git: %v", err)
	}
	root := t.TempDir()
	home := filepath.Join(root, "home")
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", "")
	t.Setenv("GIT_CONFIG_GLOBAL", filepath.Join(home, ".gitconfig"))
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	proj, state := filepath.Join(root, "proj"), filepath.Join(root, "state")
	local := filepath.Join(proj, ".claude", "settings.local.json")
	os.MkdirAll(filepath.Dir(local), 0o755)
	if note := KeepOutOfGit(local, home, "", state, false); note != "" {
		t.Errorf("outside a work tree: %q", note)
	}
	if out, err := exec.Command("git", "init", "-q", proj).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v %s", err, out)
	}
	if got, err := globalExcludes(proj, home, "/xdg"); err != nil || got != "/xdg/git/ignore" {
		t.Errorf("with XDG_CONFIG_HOME=/xdg the excludes file is %q (%v), want /xdg/git/ignore", got, err)
	}
	excludes := filepath.Join(home, ".config", "git", "ignore")
	if note := KeepOutOfGit(local, home, "", state, true); !strings.Contains(note, "would add "+ClaudeLocalRule+" to "+excludes) {
		t.Errorf("dry run: %q", note)
	}
	if _, err := os.Stat(excludes); !os.IsNotExist(err) {
		t.Fatalf("the dry run wrote %s (%v)", excludes, err)
	}
	if note := KeepOutOfGit(local, home, "", state, false); !strings.Contains(note, "added "+ClaudeLocalRule+" to "+excludes) || strings.HasPrefix(note, "warning") {
		t.Errorf("not ignored: %q", note)
	}
	if got := fileText(excludes); got != ClaudeLocalRule+"\n" {
		t.Errorf("excludes file: %q", got)
	}
	if note := KeepOutOfGit(local, home, "", state, false); note != "" || fileText(excludes) != ClaudeLocalRule+"\n" {
		t.Errorf("once ignored: %q, excludes %q", note, fileText(excludes))
	}
	os.WriteFile(local+".qtask-backup", []byte("{}\n"), 0o644)
	if note := KeepOutOfGit(local, home, "", state, false); note != "warning: git does not ignore "+local+".qtask-backup, install's copy of the local settings as they were, which names paths on this machine: delete it or ignore it" {
		t.Errorf("an unignored backup: %q", note)
	}
	os.Remove(local + ".qtask-backup")
	shared, link := filepath.Join(filepath.Dir(local), "settings.json.qtask-backup"), ShellLinkPath(local)
	os.WriteFile(shared, []byte("{}\n"), 0o644)
	os.Symlink("/usr/bin/qtask", link)
	if note := KeepOutOfGit(local, home, "", state, false); note != "warning: git does not ignore "+shared+", install's copy of the shared settings as they were, which names paths on this machine: delete it or ignore it\n"+
		"warning: git does not ignore "+link+", the link Claude's commands are routed through, which names paths on this machine: ignore it (.gitignore)" {
		t.Errorf("the shared settings' backup and the routing link, not ignored: %q", note)
	}
	os.Remove(shared)
	os.Remove(link)
	os.WriteFile(local, []byte("{}\n"), 0o644)
	if out, err := exec.Command("git", "-C", proj, "add", "-f", ".claude/settings.local.json").CombinedOutput(); err != nil {
		t.Fatalf("git add: %v %s", err, out)
	}
	if note := KeepOutOfGit(local, home, "", state, false); !strings.HasPrefix(note, "warning: git tracks "+local) {
		t.Errorf("tracked: %q", note)
	}
}
