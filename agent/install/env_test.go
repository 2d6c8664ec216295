package install

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestAddEnvAndRemoveEnv(t *testing.T) {
	const link = "/p/.claude/qtask-claude-shell"
	for _, before := range []string{"", "{}", `{"env": {"FOO": "1"}, "model": "x"}`, userSettings} {
		added, err := AddEnv([]byte(before), ClaudeEnv(link))
		if err != nil {
			t.Fatalf("AddEnv(%q): %v", before, err)
		}
		for _, want := range []string{`"QTASK_AGENT": "1"`, `"CLAUDE_CODE_SHELL_PREFIX": "` + link + `"`} {
			if !strings.Contains(string(added), want) {
				t.Errorf("AddEnv(%q) lacks %s:\n%s", before, want, added)
			}
		}
		if again, _ := AddEnv(added, ClaudeEnv(link)); string(again) != string(added) {
			t.Errorf("a second AddEnv changed the file:\n%s", Diff("s", added, again))
		}
		removed, err := RemoveEnv(added)
		if err != nil || !sameJSON(t, removed, before) {
			t.Errorf("RemoveEnv after AddEnv(%q) left (err %v):\n%s", before, err, removed)
		}
	}
	if _, err := AddEnv([]byte(`{"env":{"CLAUDE_CODE_SHELL_PREFIX":"/usr/bin/audit"}}`), ClaudeEnv(link)); err == nil || !strings.Contains(err.Error(), "--no-route") {
		t.Errorf("a shell prefix of the user's was replaced (err %v)", err)
	}
	if out, _ := AddEnv([]byte(`{"env":{"CLAUDE_CODE_SHELL_PREFIX":"/usr/bin/audit"}}`), ClaudeEnv("")); !strings.Contains(string(out), "/usr/bin/audit") {
		t.Errorf("--no-route touched the user's prefix:\n%s", out)
	}
	mine := `{"env":{"CLAUDE_CODE_SHELL_PREFIX":"/usr/bin/audit","QTASK_AGENT":"0"}}`
	if out, _ := RemoveEnv([]byte(mine)); string(out) != mine {
		t.Errorf("RemoveEnv took the user's own values:\n%s", out)
	}
}

func TestLinkAndUnlink(t *testing.T) {
	dir := t.TempDir()
	self := filepath.Join(dir, "bin", "qtask")
	link := ShellLinkPath(filepath.Join(dir, ".claude", "settings.json"))
	if err := Link(link, self); err != nil {
		t.Fatal(err)
	}
	if target, err := os.Readlink(link); err != nil || target != self {
		t.Fatalf("link %s -> %q (%v), want %s", link, target, err, self)
	}
	if err := Link(link, "/elsewhere/qtask"); err != nil {
		t.Fatalf("replacing qtask's own link: %v", err)
	}
	if err := Unlink(link); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(link); !os.IsNotExist(err) {
		t.Fatalf("unlink left %s (%v)", link, err)
	}
	os.WriteFile(link, []byte("mine"), 0o755)
	if err := Link(link, self); err == nil {
		t.Errorf("a file of the user's was replaced by the link")
	}
	if Unlink(link); fileText(link) != "mine" {
		t.Errorf("unlink removed a file of the user's")
	}
}

func fileText(p string) string { b, _ := os.ReadFile(p); return string(b) }

// sameJSON compares two settings texts as JSON values ("" reads as {}).
func sameJSON(t *testing.T, a []byte, b string) bool {
	t.Helper()
	var va, vb any
	if b == "" {
		b = "{}"
	}
	if json.Unmarshal(a, &va) != nil || json.Unmarshal([]byte(b), &vb) != nil {
		return false
	}
	return reflect.DeepEqual(va, vb)
}
