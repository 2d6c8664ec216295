package install

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/qtask/qtask/agent/hooks"
)

func TestAddMCP(t *testing.T) {
	const mine = "{\n  \"mcpServers\": {\n    \"other\": {\n      \"command\": \"x\"\n    }\n  }\n}\n"
	got, err := AddMCP(hooks.Gemini, []byte(mine), "/opt/qtask")
	if err != nil {
		t.Fatal(err)
	}
	want := "{\n  \"mcpServers\": {\n    \"other\": {\n      \"command\": \"x\"\n    },\n    \"qtask\": {\n      \"command\": \"/opt/qtask\",\n" +
		"      \"args\": [\n        \"mcp\"\n      ],\n      \"trust\": true\n    }\n  }\n}\n"
	if string(got) != want {
		t.Errorf("AddMCP gemini:\n%s\nwant:\n%s", got, want)
	}
	if again, _ := AddMCP(hooks.Gemini, got, "/opt/qtask"); string(again) != string(got) {
		t.Errorf("a second AddMCP changed the file:\n%s", again)
	}
	moved, _ := AddMCP(hooks.Gemini, got, "/usr/bin/qtask")
	if !strings.Contains(string(moved), `"command": "/usr/bin/qtask"`) || strings.Count(string(moved), `"qtask"`) != 1 {
		t.Errorf("AddMCP with a new binary path:\n%s", moved)
	}
	removed, err := RemoveMCP(moved)
	if err != nil || string(removed) != mine {
		t.Errorf("RemoveMCP: %v\n%s\nwant the file as it was", err, removed)
	}
	claude, _ := AddMCP(hooks.Claude, nil, "/opt/qtask")
	if !strings.Contains(string(claude), `"type": "stdio"`) || strings.Contains(string(claude), "trust") {
		t.Errorf("AddMCP claude:\n%s", claude)
	}
	if empty, _ := RemoveMCP(claude); string(empty) != "{}\n" {
		t.Errorf("RemoveMCP left %q, want an empty object", empty)
	}
	foreign := `{"mcpServers":{"qtask":{"command":"npx","args":["some-qtask"]}}}`
	if _, err := AddMCP(hooks.Qwen, []byte(foreign), "/opt/qtask"); err == nil || !strings.Contains(err.Error(), "rename or remove it") {
		t.Errorf("AddMCP over someone else's qtask entry: %v", err)
	}
	if kept, _ := RemoveMCP([]byte(foreign)); string(kept) != foreign {
		t.Errorf("RemoveMCP touched someone else's entry: %s", kept)
	}
}

// TestSharedMCPCommand: Claude's committed .mcp.json gets the bare name
// when the PATH finds the very binary (through a link too), else the path.
func TestSharedMCPCommand(t *testing.T) {
	dir := t.TempDir()
	self := filepath.Join(dir, "real", "qtask")
	os.MkdirAll(filepath.Dir(self), 0o755)
	os.WriteFile(self, []byte("#!/bin/sh\n"), 0o755)
	onPath := filepath.Join(dir, "bin")
	os.MkdirAll(onPath, 0o755)
	t.Setenv("PATH", onPath)
	if cmd, portable := SharedMCPCommand(self); cmd != self || portable {
		t.Errorf("no qtask on PATH: %q %v, want the path", cmd, portable)
	}
	os.Symlink(self, filepath.Join(onPath, "qtask"))
	if cmd, portable := SharedMCPCommand(self); cmd != "qtask" || !portable {
		t.Errorf("PATH finds it through a link: %q %v, want the bare name", cmd, portable)
	}
	other := filepath.Join(dir, "other", "qtask")
	os.MkdirAll(filepath.Dir(other), 0o755)
	os.WriteFile(other, []byte("#!/bin/sh\n"), 0o755)
	if cmd, portable := SharedMCPCommand(other); cmd != other || portable {
		t.Errorf("PATH finds another qtask: %q %v, want the path", cmd, portable)
	}
	c, err := PlanAddMCP(hooks.Claude, false, Paths{Cwd: dir}, Change{Path: filepath.Join(dir, ".claude", "settings.local.json")}, other)
	if err != nil || len(c) != 2 || !strings.Contains(string(c[1].New), `"command": "`+other+`"`) || !strings.Contains(c[1].Note, "keep it out of version control") {
		t.Errorf("PlanAddMCP with another qtask on PATH: %v %+v", err, c)
	}
	c, err = PlanAddMCP(hooks.Claude, false, Paths{Cwd: dir}, Change{Path: filepath.Join(dir, ".claude", "settings.local.json")}, self)
	if err != nil || len(c) != 2 || !strings.Contains(string(c[1].New), `"command": "qtask"`) || c[1].Note != "" {
		t.Errorf("PlanAddMCP with this qtask on PATH: %v %+v", err, c)
	}
}
