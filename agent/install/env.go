package install

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/qtask/qtask/agent/route"
)

// EnvVar is one entry of the "env" object of Claude Code's settings, which
// Claude sets for every process it starts (its tool's commands, hooks and
// MCP servers).
type EnvVar struct{ Name, Value string }

// ShellPrefixVar is the variable whose program Claude runs each Bash tool
// call through, with the permission check still on the model's command.
const ShellPrefixVar = "CLAUDE_CODE_SHELL_PREFIX"

// ClaudeEnv is what install sets in Claude's settings: agent mode for
// qtask run from Claude's tool, and, when link is not empty (routing), the
// shell prefix.
func ClaudeEnv(link string) []EnvVar {
	vars := []EnvVar{{"QTASK_AGENT", "1"}}
	if link != "" {
		vars = append(vars, EnvVar{ShellPrefixVar, link})
	}
	return vars
}

// isOursEnv reports whether name=value is one install sets.
func isOursEnv(name string, value any) bool {
	s, _ := value.(string)
	switch name {
	case "QTASK_AGENT":
		return s == "1"
	case ShellPrefixVar:
		return route.IsClaudeShellLink(s)
	}
	return false
}

// AddEnv returns settings with vars set in "env". A shell prefix of the
// user's own is not replaced: that is an error saying so (routing is then
// for the user to decide: --no-route). Settings that already hold vars
// come back unchanged, byte for byte.
func AddEnv(settings []byte, vars []EnvVar) ([]byte, error) {
	root, err := parseObject(settings)
	if err != nil {
		return nil, fmt.Errorf("not a JSON object qtask can rewrite (%w)", err)
	}
	env, err := root.child("env", true)
	if err != nil {
		return nil, err
	}
	changed := false
	for _, v := range vars {
		old, had := env.get(v.Name)
		if had && old == v.Value {
			continue
		}
		if had && !isOursEnv(v.Name, old) {
			return nil, fmt.Errorf("env.%s is already set to %v: qtask will not replace it; remove it, or install with --no-route", v.Name, old)
		}
		env.set(v.Name, v.Value)
		changed = true
	}
	if !changed {
		return settings, nil
	}
	return encode(root), nil
}

// RemoveEnv returns settings without the "env" entries install sets, and
// without "env" if that leaves it empty; settings without them come back
// unchanged, byte for byte.
func RemoveEnv(settings []byte) ([]byte, error) {
	return removeEnv(settings, func(string) bool { return true })
}

// removeEnv is RemoveEnv for the names which selects.
func removeEnv(settings []byte, which func(name string) bool) ([]byte, error) {
	root, err := parseObject(settings)
	if err != nil {
		return settings, nil // Remove reports what is wrong with the file
	}
	env, err := root.child("env", false)
	if err != nil || env == nil {
		return settings, nil
	}
	removed := false
	for _, k := range append([]string{}, env.keys...) {
		if v, _ := env.get(k); which(k) && isOursEnv(k, v) {
			env.del(k)
			removed = true
		}
	}
	if !removed {
		return settings, nil
	}
	if len(env.keys) == 0 {
		root.del("env")
	}
	return encode(root), nil
}

// ShellLinkPath is where install puts the qtask-claude-shell link: beside
// the settings file it writes.
func ShellLinkPath(settingsPath string) string {
	return filepath.Join(filepath.Dir(settingsPath), route.ClaudeShellLink)
}

// Link makes path a symlink to the qtask binary self (Claude's shell
// prefix must be one program: it runs MCP servers as `PREFIX 'COMMAND'`).
// A link of qtask's already there is replaced; anything else is refused.
func Link(path, self string) error {
	if target, err := os.Readlink(path); err == nil {
		if target == self {
			return nil
		}
		if !strings.HasPrefix(filepath.Base(target), "qtask") {
			return fmt.Errorf("%s links to %s, not to qtask: remove it, or install with --no-route", path, target)
		}
		if err := os.Remove(path); err != nil {
			return err
		}
	} else if _, err := os.Lstat(path); err == nil {
		return fmt.Errorf("%s exists and is not qtask's link: remove it, or install with --no-route", path)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.Symlink(self, path)
}

// Unlink removes the link Link made; anything else at path is left.
func Unlink(path string) error {
	target, err := os.Readlink(path)
	if err != nil || !strings.HasPrefix(filepath.Base(target), "qtask") {
		return nil
	}
	return os.Remove(path)
}
