package install

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
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
// file (not with dryRun), and records in stateDir what it appended, for
// ForgetGitRule. home and xdgConfigHome ($HOME and $XDG_CONFIG_HOME,
// absolute or empty) locate that file as git does. It returns what to
// tell the user, "" when there is nothing to say (no git, no work tree,
// already ignored).
func KeepOutOfGit(path, home, xdgConfigHome, stateDir string, dryRun bool) string {
	dir, name := filepath.Dir(filepath.Dir(path)), filepath.Join(filepath.Base(filepath.Dir(path)), filepath.Base(path))
	if git(dir, "rev-parse", "--is-inside-work-tree") != nil {
		return ""
	}
	notes := []string{ignoreLocal(path, dir, name, home, xdgConfigHome, stateDir, dryRun)}
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
func ignoreLocal(path, dir, name, home, xdgConfigHome, stateDir string, dryRun bool) string {
	if git(dir, "check-ignore", "-q", "--", name) == nil {
		if excludes, err := globalExcludes(dir, home, xdgConfigHome); err == nil && !dryRun {
			relyOnRule(stateDir, excludes, path)
		}
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
	added, err := appendLine(excludes, ClaudeLocalRule)
	if err != nil {
		return fmt.Sprintf("warning: git does not ignore %s, which names paths on this machine, and adding %s to %s failed: %v; add %s to .gitignore", path, ClaudeLocalRule, excludes, err, name)
	}
	if added.Appended != "" {
		added.Settings = []string{path}
		if err := saveRuleRecord(stateDir, added); err != nil {
			return fmt.Sprintf("warning: added %s to %s, but could not note it for uninstall (%v): uninstall will leave it", ClaudeLocalRule, excludes, err)
		}
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
// on a line of its own, unless it has that line already; it returns what
// it did (nothing: an empty Appended).
func appendLine(path, line string) (ruleRecord, error) {
	rec := ruleRecord{File: path}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return rec, err
	}
	old, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		rec.Created = true
	} else if err != nil {
		return rec, err
	}
	if hasLine(string(old), line) {
		return rec, nil // there, but not what git reads: the caller checks
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return rec, err
	}
	if len(old) > 0 && old[len(old)-1] != '\n' {
		line = "\n" + line
	}
	_, err = f.WriteString(line + "\n")
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		rec.Appended = line + "\n"
	}
	return rec, err
}

func hasLine(text, line string) bool {
	for _, l := range strings.Split(text, "\n") {
		if strings.TrimSpace(l) == line {
			return true
		}
	}
	return false
}

// ruleRecord remembers the rule install added to git's global excludes
// file: uninstall takes out exactly that (and the file, if install made
// it), once no installed project relies on it. A rule that was there
// before (Claude Code adds the same one) has no record and stays.
type ruleRecord struct {
	File     string `json:"file"`
	Appended string `json:"appended"` // the bytes appended, a newline before the rule included
	Created  bool   `json:"created"`
	// Settings are the local settings files installed since, which git
	// ignores by the rule.
	Settings []string `json:"settings"`
}

// rulesPath is where install keeps its ruleRecords.
func rulesPath(stateDir string) string {
	return filepath.Join(stateDir, "install", "git-excludes.json")
}

func loadRuleRecords(stateDir string) []ruleRecord {
	var recs []ruleRecord
	if data, err := os.ReadFile(rulesPath(stateDir)); err == nil {
		json.Unmarshal(data, &recs) // unreadable: as if none (uninstall then leaves the rule)
	}
	return recs
}

func storeRuleRecords(stateDir string, recs []ruleRecord) error {
	path := rulesPath(stateDir)
	if len(recs) == 0 {
		if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	data, err := json.Marshal(recs)
	if err != nil {
		return err
	}
	return writeAtomic(path, data, 0o600)
}

// saveRuleRecord keeps rec, replacing an earlier one for its file.
func saveRuleRecord(stateDir string, rec ruleRecord) error {
	if stateDir == "" {
		return errors.New("no state directory")
	}
	recs := []ruleRecord{rec}
	for _, r := range loadRuleRecords(stateDir) {
		if r.File != rec.File {
			recs = append(recs, r)
		}
	}
	return storeRuleRecords(stateDir, recs)
}

// relyOnRule notes that the local settings file at path, which git
// ignores, relies on the rule install added to excludes, if it did.
func relyOnRule(stateDir, excludes, path string) {
	recs := loadRuleRecords(stateDir)
	for i, r := range recs {
		if r.File == excludes && !slices.Contains(r.Settings, path) {
			recs[i].Settings = append(r.Settings, path)
			storeRuleRecords(stateDir, recs) // best effort: at worst the rule goes with another project's uninstall
		}
	}
}

// ForgetGitRule is KeepOutOfGit's undo, for the uninstall of the local
// settings file at path: once no installed project relies on the rule
// install added to git's global excludes file, it takes out the very
// bytes install appended (the file, if install made it and nothing else
// is in it). It returns what to tell the user, "" when nothing changed.
func ForgetGitRule(path, stateDir string, dryRun bool) string {
	recs := loadRuleRecords(stateDir)
	var kept []ruleRecord
	note, changed := "", false
	for _, r := range recs {
		i := slices.Index(r.Settings, path)
		if i < 0 {
			kept = append(kept, r)
			continue
		}
		changed = true
		r.Settings = slices.Delete(r.Settings, i, i+1)
		if len(r.Settings) > 0 {
			kept = append(kept, r)
			continue
		}
		if dryRun {
			return fmt.Sprintf("uninstall would remove %s from %s (install added it)", ClaudeLocalRule, r.File)
		}
		if err := removeAppended(r); err != nil {
			return fmt.Sprintf("warning: could not remove %s from %s, which install added: %v", ClaudeLocalRule, r.File, err)
		}
		note = fmt.Sprintf("removed %s from %s (install had added it)", ClaudeLocalRule, r.File)
	}
	if changed && !dryRun {
		if err := storeRuleRecords(stateDir, kept); err != nil {
			note = strings.TrimPrefix(note+"\n", "\n") + fmt.Sprintf("warning: could not update %s: %v", rulesPath(stateDir), err)
		}
	}
	return note
}

// removeAppended takes rec's appended bytes out of its file: from the end,
// where install put them, or else (lines added after it) the rule's line
// alone. The file goes when install made it and nothing else is left.
func removeAppended(rec ruleRecord) error {
	data, err := os.ReadFile(rec.File)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	text := string(data)
	switch rule := ClaudeLocalRule + "\n"; {
	case strings.HasSuffix(text, rec.Appended):
		text = strings.TrimSuffix(text, rec.Appended)
	case strings.HasPrefix(text, rule):
		text = strings.TrimPrefix(text, rule)
	case strings.Contains(text, "\n"+rule):
		text = strings.Replace(text, "\n"+rule, "\n", 1)
	default:
		return nil // taken out by someone else already
	}
	if text == "" && rec.Created {
		return os.Remove(rec.File)
	}
	// In place, as appendLine wrote: the file may be a link into the
	// user's dotfiles.
	fi, err := os.Stat(rec.File)
	if err != nil {
		return err
	}
	return os.WriteFile(rec.File, []byte(text), fi.Mode().Perm())
}
