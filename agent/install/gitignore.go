package install

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// ClaudeLocalRule is the rule Claude Code itself adds to git's global
// excludes file when it writes a project's .claude/settings.local.json
// (read in the shipped 2.1.330: core.excludesFile, else
// $XDG_CONFIG_HOME/git/ignore, else ~/.config/git/ignore), so that no
// repository commits anyone's personal settings.
const ClaudeLocalRule = "**/.claude/settings.local.json"

// KeepOutOfGit makes sure git ignores the local settings file at path
// (Claude's, which install writes and which names paths on this machine)
// when its directory is in a git work tree, the way Claude Code does: if
// git would commit it, it adds ClaudeLocalRule to git's global excludes
// file (not with dryRun). home and xdgConfigHome ($HOME and
// $XDG_CONFIG_HOME, absolute or empty) locate that file as git does. It
// returns what to tell the user, "" when there is nothing to say (no git,
// no work tree, already ignored).
func KeepOutOfGit(path, home, xdgConfigHome string, dryRun bool) string {
	dir, name := filepath.Dir(filepath.Dir(path)), filepath.Join(filepath.Base(filepath.Dir(path)), filepath.Base(path))
	if git(dir, "rev-parse", "--is-inside-work-tree") != nil {
		return ""
	}
	notes := []string{ignoreLocal(path, dir, name, home, xdgConfigHome, dryRun)}
	// Beside it, files Claude's rule does not cover that name paths on
	// this machine too: the backups install keeps (of the local file, and
	// of the shared one an older install's entries were moved out of) and
	// the routing link.
	claudeDir := filepath.Dir(path)
	for _, f := range []struct{ path, what, fix string }{
		{path + backupSuffix, "install's copy of the local settings as they were", "delete it or ignore it"},
		{filepath.Join(claudeDir, "settings.json") + backupSuffix, "install's copy of the shared settings as they were", "delete it or ignore it"},
		{ShellLinkPath(path), "the link Claude's commands are routed through", "ignore it (.gitignore)"},
	} {
		rel, err := filepath.Rel(dir, f.path)
		if _, lerr := os.Lstat(f.path); err == nil && lerr == nil && git(dir, "check-ignore", "-q", "--", rel) != nil {
			notes = append(notes, fmt.Sprintf("warning: git does not ignore %s, %s, which names paths on this machine: %s", f.path, f.what, f.fix))
		}
	}
	return strings.TrimPrefix(strings.Join(notes, "\n"), "\n")
}

// ignoreLocal is KeepOutOfGit for the local settings file itself, name
// (relative to dir) in a git work tree.
func ignoreLocal(path, dir, name, home, xdgConfigHome string, dryRun bool) string {
	if git(dir, "check-ignore", "-q", "--", name) == nil {
		return ""
	}
	if git(dir, "ls-files", "--error-unmatch", "--", name) == nil {
		return fmt.Sprintf("warning: git tracks %s, which names paths on this machine: untrack it (git rm --cached %s) and ignore it", path, name)
	}
	excludes, err := globalExcludes(dir, home, xdgConfigHome)
	switch {
	case err != nil:
		return fmt.Sprintf("warning: git does not ignore %s, which names paths on this machine (%v): add %s to .gitignore", path, err, name)
	case dryRun:
		return fmt.Sprintf("git does not ignore %s: install would add %s to %s (git's global excludes file), as Claude Code does", path, ClaudeLocalRule, excludes)
	}
	if err := appendLine(excludes, ClaudeLocalRule); err != nil {
		return fmt.Sprintf("warning: git does not ignore %s, which names paths on this machine, and adding %s to %s failed: %v; add %s to .gitignore", path, ClaudeLocalRule, excludes, err, name)
	}
	if git(dir, "check-ignore", "-q", "--", name) != nil {
		return fmt.Sprintf("warning: added %s to %s, but git still does not ignore %s: add %s to .gitignore", ClaudeLocalRule, excludes, path, name)
	}
	return fmt.Sprintf("git did not ignore %s: added %s to %s (git's global excludes file), as Claude Code does", path, ClaudeLocalRule, excludes)
}

// git runs git in dir, quietly; nil when it exits 0.
func git(dir string, args ...string) error {
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	return cmd.Run()
}

// globalExcludes is git's global excludes file, as git (and Claude Code)
// find it: core.excludesFile, else $XDG_CONFIG_HOME/git/ignore, else
// ~/.config/git/ignore.
func globalExcludes(dir, home, xdgConfigHome string) (string, error) {
	out, err := exec.Command("git", "-C", dir, "config", "--global", "--path", "--get", "core.excludesFile").Output()
	if f := strings.TrimSpace(string(out)); err == nil && filepath.IsAbs(f) {
		return f, nil
	}
	if xdgConfigHome != "" {
		return filepath.Join(xdgConfigHome, "git", "ignore"), nil
	}
	if !filepath.IsAbs(home) {
		return "", errors.New("HOME is unset or relative: cannot find git's global excludes file")
	}
	return filepath.Join(home, ".config", "git", "ignore"), nil
}

// appendLine adds line to the file (made, with its directory, if missing),
// on a line of its own, unless it has that line already.
func appendLine(path, line string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	old, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	for _, l := range strings.Split(string(old), "\n") {
		if strings.TrimSpace(l) == line {
			return nil // there, but not what git reads: the caller checks
		}
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	if len(old) > 0 && old[len(old)-1] != '\n' {
		line = "\n" + line
	}
	_, err = f.WriteString(line + "\n")
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
