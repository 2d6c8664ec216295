package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestAgentUninstallRestoresSettings: for each agent, install then
// uninstall gives back every file it wrote as it was, byte for byte,
// whatever its formatting (compact, four-space indent), deletes a file
// install created, and removes its backup once the file is restored; the
// backup holds the file as it was before install, not as an earlier
// install left it; a file changed since install is merged (qtask's
// entries out, the change kept), its backup kept, and uninstall says so.
func TestAgentUninstallRestoresSettings(t *testing.T) {
	t.Parallel()
	for _, agent := range []string{"claude", "qwen", "gemini"} {
		t.Run(agent, func(t *testing.T) {
			t.Parallel()
			testUninstallRestores(t, agent)
		})
	}
}

func testUninstallRestores(t *testing.T, agent string) {
	h := newHarness(t)
	// The files install writes for agent, relative to the project, each
	// with a text of the user's own.
	texts := map[string]map[string]string{
		"claude": {
			".claude/settings.local.json": `{"permissions":{"allow":["Bash(make:*)"]},"env":{"FOO":"1"}}`,
			".mcp.json":                   `{"mcpServers":{"other":{"command":"srv","args":[]}}}`,
		},
		"qwen":   {".qwen/settings.json": `{"model":{"name":"x"},"hooks":{"Stop":[{"hooks":[{"type":"command","command":"notify-send done"}]}]}}`},
		"gemini": {".gemini/settings.json": `{"general":{"vimMode":true},"mcpServers":{"other":{"command":"srv"}}}`},
	}[agent]
	indent4 := func(compact string) string {
		var b bytes.Buffer
		if err := json.Indent(&b, []byte(compact), "", "    "); err != nil {
			t.Fatal(err)
		}
		return b.String() + "\n"
	}
	n := 0
	project := func(texts map[string]string) string {
		n++
		proj := filepath.Join(h.root, "proj"+string(rune('0'+n)))
		for rel, text := range texts {
			os.MkdirAll(filepath.Dir(filepath.Join(proj, rel)), 0o755)
			if err := os.WriteFile(filepath.Join(proj, rel), []byte(text), 0o640); err != nil {
				t.Fatal(err)
			}
		}
		os.MkdirAll(proj, 0o755)
		return proj
	}
	run := func(proj string, args ...string) result {
		t.Helper()
		r := h.qtaskIn(proj, nil, append([]string{"agent"}, args...)...)
		if r.code != 0 {
			t.Fatalf("agent %v: exit %d\n%s%s", args, r.code, r.stdout, r.stderr)
		}
		return r
	}
	roundTrip := func(what string, texts map[string]string) {
		t.Helper()
		proj := project(texts)
		run(proj, "install", agent)
		for rel, text := range texts {
			if backup, _ := os.ReadFile(filepath.Join(proj, rel) + ".qtask-backup"); string(backup) != text {
				t.Errorf("%s: after install the backup of %s holds\n%s\nwant the file as it was:\n%s", what, rel, backup, text)
			}
		}
		// An install again, with another hold: the file changes, the
		// backup keeps the file as it was before qtask.
		run(proj, "install", agent, "--hold", "30s")
		for rel, text := range texts {
			if backup, _ := os.ReadFile(filepath.Join(proj, rel) + ".qtask-backup"); string(backup) != text {
				t.Errorf("%s: after a second install the backup of %s holds\n%s\nwant the file as it was before the first:\n%s", what, rel, backup, text)
			}
		}
		run(proj, "uninstall", agent)
		for rel, text := range texts {
			path := filepath.Join(proj, rel)
			if got, _ := os.ReadFile(path); string(got) != text {
				t.Errorf("%s: after uninstall %s is\n%s\nwant it byte for byte as it was:\n%s", what, rel, got, text)
			}
			if fi, err := os.Stat(path); err == nil && fi.Mode().Perm() != 0o640 {
				t.Errorf("%s: uninstall changed the mode of %s to %v", what, rel, fi.Mode().Perm())
			}
			if _, err := os.Lstat(path + ".qtask-backup"); !os.IsNotExist(err) {
				t.Errorf("%s: uninstall left %s.qtask-backup though the file is restored (%v)", what, rel, err)
			}
		}
	}
	roundTrip("compact JSON", texts)
	spaced := map[string]string{}
	for rel, text := range texts {
		spaced[rel] = indent4(text)
	}
	roundTrip("four-space JSON", spaced)

	// No file before: install creates it (an install again makes no
	// backup of it), uninstall deletes it.
	proj := project(nil)
	run(proj, "install", agent)
	run(proj, "install", agent, "--hold", "30s")
	r := run(proj, "uninstall", agent)
	for rel := range texts {
		if _, err := os.Lstat(filepath.Join(proj, rel)); !os.IsNotExist(err) {
			got, _ := os.ReadFile(filepath.Join(proj, rel))
			t.Errorf("no %s before install: after uninstall it is there (%v):\n%s\n%s", rel, err, got, r.stdout)
		}
		if _, err := os.Lstat(filepath.Join(proj, rel) + ".qtask-backup"); !os.IsNotExist(err) {
			t.Errorf("no %s before install: uninstall left a backup of it (%v)", rel, err)
		}
	}

	// Changed since install: merged, the backup kept, and said.
	proj = project(texts)
	run(proj, "install", agent)
	for rel := range texts {
		path := filepath.Join(proj, rel)
		installed, _ := os.ReadFile(path)
		os.WriteFile(path, []byte(strings.Replace(string(installed), "{", "{\n  \"mine\": true,", 1)), 0o640)
	}
	r = run(proj, "uninstall", agent)
	for rel, text := range texts {
		path := filepath.Join(proj, rel)
		got, _ := os.ReadFile(path)
		if !strings.Contains(string(got), `"mine": true`) || strings.Contains(string(got), "qtask") {
			t.Errorf("changed since install: after uninstall %s is\n%s\nwant the change kept and qtask's entries out", rel, got)
		}
		if backup, _ := os.ReadFile(path + ".qtask-backup"); string(backup) != text {
			t.Errorf("changed since install: the backup of %s holds\n%s\nwant the file as it was before install:\n%s", rel, backup, text)
		}
		if want := path + " changed since install: qtask's entries are taken out of it and the rest kept; as it was before install: " + path + ".qtask-backup"; !strings.Contains(r.stdout, want) {
			t.Errorf("changed since install: uninstall said\n%s\nwant %q", r.stdout, want)
		}
	}
}

// TestAgentUninstallRemovesGitExcludesLine: the rule install adds to git's
// global excludes file for Claude's local settings is taken out again by
// the uninstall of the last project that relied on it, leaving the file
// byte for byte as it was; a rule that was there before install (Claude
// Code writes the same one) stays.
func TestAgentUninstallRemovesGitExcludesLine(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	xdg := filepath.Join(h.root, "xdg")
	excludes := filepath.Join(xdg, "git", "ignore")
	env := []string{"XDG_CONFIG_HOME=" + xdg, "GIT_CONFIG_NOSYSTEM=1"}
	mine := "*.swp\n.envrc" // no newline at the end
	os.MkdirAll(filepath.Dir(excludes), 0o755)
	os.WriteFile(excludes, []byte(mine), 0o644)
	var projs []string
	for _, name := range []string{"a", "b"} {
		proj := filepath.Join(h.root, name)
		if out, err := exec.Command("git", "init", "-q", proj).CombinedOutput(); err != nil {
			t.Fatalf("git init: %v %s", err, out)
		}
		projs = append(projs, proj)
	}
	run := func(proj string, args ...string) result {
		t.Helper()
		r := h.qtaskIn(proj, env, append([]string{"agent"}, args...)...)
		if r.code != 0 {
			t.Fatalf("agent %v in %s: exit %d\n%s%s", args, proj, r.code, r.stdout, r.stderr)
		}
		return r
	}
	if r := run(projs[0], "install", "claude"); !strings.Contains(r.stdout, "added **/.claude/settings.local.json to "+excludes) {
		t.Fatalf("install did not add the rule:\n%s", r.stdout)
	}
	run(projs[1], "install", "claude") // ignored already, by the same rule
	run(projs[0], "uninstall", "claude")
	if got, _ := os.ReadFile(excludes); !strings.Contains(string(got), "**/.claude/settings.local.json") {
		t.Errorf("the uninstall of one project took out the rule another relies on:\n%s", got)
	}
	r := run(projs[1], "uninstall", "claude")
	if got, _ := os.ReadFile(excludes); string(got) != mine {
		t.Errorf("after the last uninstall git's excludes file is\n%q\nwant it as it was:\n%q\n(uninstall said: %s)", got, mine, r.stdout)
	}
	if !strings.Contains(r.stdout, "removed **/.claude/settings.local.json from "+excludes) {
		t.Errorf("uninstall did not say it removed the rule:\n%s", r.stdout)
	}

	// The rule there before install (Claude Code adds it itself): it stays.
	before := mine + "\n**/.claude/settings.local.json\n"
	os.WriteFile(excludes, []byte(before), 0o644)
	run(projs[0], "install", "claude")
	run(projs[0], "uninstall", "claude")
	if got, _ := os.ReadFile(excludes); string(got) != before {
		t.Errorf("uninstall changed an excludes file whose rule install had not added:\n%q\nwant:\n%q", got, before)
	}
}
