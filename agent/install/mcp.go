package install

import (
	"bytes"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/qtask/qtask/agent"
	"github.com/qtask/qtask/agent/hooks"
)

// mcpName is the key of qtask's MCP server in an agent's mcpServers: the
// model sees its tools as mcp__qtask__shell (Claude, qwen) and
// mcp_qtask_shell (gemini).
const mcpName = "qtask"

// MCPPath is the file that registers MCP servers for the agent: qwen and
// gemini read mcpServers from their settings file (the hooks' file), Claude
// Code from the project's .mcp.json. Claude's user servers live in
// ~/.claude.json, a state file Claude itself rewrites as it runs, which
// qtask does not edit: "" then, and ClaudeUserMCPHint says what to run.
func MCPPath(a hooks.Agent, user bool, p Paths) (string, error) {
	if a.Name != "claude" {
		return SettingsPath(a, user, p)
	}
	if user {
		return "", nil
	}
	return filepath.Join(p.Cwd, ".mcp.json"), nil
}

// ClaudeUserMCPHint is how a user registers qtask's MCP server with Claude
// Code for all their projects.
func ClaudeUserMCPHint(self string) string {
	return "claude mcp add --scope user " + mcpName + " -- " + agent.ShellQuote(self) + " mcp"
}

// AddMCP returns the file with qtask's MCP server registered under
// mcpServers.qtask: self run with the argument "mcp" (gemini also gets
// "trust", so its calls are not confirmed one by one, as its hooks are
// not). An entry of qtask's that differs (an older binary path) is
// replaced; an mcpServers.qtask that is not qtask's is refused, never
// overwritten.
func AddMCP(a hooks.Agent, file []byte, self string) ([]byte, error) {
	root, err := parseObject(file)
	if err != nil {
		return nil, fmt.Errorf("not a JSON object qtask can rewrite (%w)", err)
	}
	servers, err := root.child("mcpServers", true)
	if err != nil {
		return nil, err
	}
	want := newObject()
	if a.Name == "claude" {
		want.set("type", "stdio")
	}
	want.set("command", self)
	want.set("args", []any{"mcp"})
	if a.Name == "gemini" {
		want.set("trust", true)
	}
	if have, ok := servers.get(mcpName); ok {
		if !isOurMCP(have) {
			return nil, errors.New(`mcpServers has a "qtask" entry that does not run qtask mcp: rename or remove it`)
		}
		if bytes.Equal(encode(have), encode(want)) {
			return file, nil // as it was, formatting and all
		}
	}
	servers.set(mcpName, want)
	return encode(root), nil
}

// RemoveMCP returns the file without qtask's MCP server, and without an
// mcpServers left empty by that; a file without it comes back unchanged.
func RemoveMCP(file []byte) ([]byte, error) {
	root, err := parseObject(file)
	if err != nil {
		return nil, fmt.Errorf("not a JSON object qtask can rewrite (%w)", err)
	}
	servers, err := root.child("mcpServers", false)
	if err != nil || servers == nil {
		return file, err
	}
	if have, ok := servers.get(mcpName); !ok || !isOurMCP(have) {
		return file, nil
	}
	servers.del(mcpName)
	if len(servers.keys) == 0 {
		root.del("mcpServers")
	}
	return encode(root), nil
}

// isOurMCP reports whether an mcpServers entry runs a qtask binary as
// `qtask mcp`.
func isOurMCP(v any) bool {
	e, ok := v.(*object)
	if !ok {
		return false
	}
	cmd, _ := e.vals["command"].(string)
	args, _ := e.vals["args"].([]any)
	return strings.HasPrefix(filepath.Base(cmd), "qtask") && len(args) == 1 && args[0] == "mcp"
}

// SharedMCPCommand is how Claude's project .mcp.json (the project scope,
// which Claude means to be committed) names qtask: by its bare name when
// the PATH finds this very binary self under it, so that the file names no
// path of this machine; else by self's absolute path, and portable is
// false. (Claude expands ${VAR} in .mcp.json from its own environment
// only: a variable set in settings.local.json's env does not reach it,
// measured with 2.1.330, so the path cannot be left to the local file.)
func SharedMCPCommand(self string) (command string, portable bool) {
	found, err := exec.LookPath(mcpName)
	if err != nil {
		return self, false
	}
	a, errA := filepath.EvalSymlinks(found)
	b, errB := filepath.EvalSymlinks(self)
	if errA != nil || errB != nil || a != b {
		return self, false
	}
	return mcpName, true
}

// PlanAddMCP adds the registration of qtask's MCP server to a planned
// hooks change (PlanAdd's): into that change when the agent reads MCP
// servers from the same file, else as a change of its own (Claude's
// .mcp.json; none for Claude's user settings, see MCPPath). PlanRemoveMCP
// does the same for the removal (PlanRemove's). Nothing is written.
func PlanAddMCP(a hooks.Agent, user bool, p Paths, hooksChange Change, self string) ([]Change, error) {
	command, note := self, ""
	if a.Name == "claude" && !user {
		var portable bool
		if command, portable = SharedMCPCommand(self); !portable {
			note = "note: .mcp.json names qtask by its path on this machine (no qtask on PATH is " + self +
				"): keep it out of version control, or put qtask on PATH and install again"
		}
	}
	changes, err := withMCP(a, user, p, hooksChange, func(old []byte) ([]byte, error) { return AddMCP(a, old, command) })
	if err == nil && note != "" {
		changes[len(changes)-1].Note = note
	}
	return changes, err
}

// PlanRemoveMCP: see PlanAddMCP.
func PlanRemoveMCP(a hooks.Agent, user bool, p Paths, hooksChange Change) ([]Change, error) {
	return withMCP(a, user, p, hooksChange, RemoveMCP)
}

func withMCP(a hooks.Agent, user bool, p Paths, hooksChange Change, edit func([]byte) ([]byte, error)) ([]Change, error) {
	mcpFile, err := MCPPath(a, user, p)
	if err != nil {
		return nil, err
	}
	hooksChange.What = "hooks"
	switch mcpFile {
	case "":
		return []Change{hooksChange}, nil
	case hooksChange.Path:
		updated, err := edit(hooksChange.New)
		if err != nil {
			return nil, fmt.Errorf("%s: %w; fix the file or edit it by hand", mcpFile, err)
		}
		hooksChange.New, hooksChange.What = updated, "hooks and MCP server"
		return []Change{hooksChange}, nil
	}
	c, err := plan(a, mcpFile, edit)
	if err != nil {
		return nil, err
	}
	c.What = "MCP server"
	return []Change{hooksChange, c}, nil
}
