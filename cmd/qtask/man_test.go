package main

import (
	"os"
	"strings"
	"testing"
)

// TestCommandsDocIsCurrent: docs/COMMANDS.md is exactly what `qtask man
// --markdown` prints, every command's --help, so the command reference a
// reader finds in the repository is the one the binary gives. After
// changing a command's help: go run ./cmd/qtask man --markdown > docs/COMMANDS.md
func TestCommandsDocIsCurrent(t *testing.T) {
	t.Parallel()
	deps, out, _ := testDeps()
	root := rootFor(deps, []string{"man"})
	root.SetArgs([]string{"man", "--markdown"})
	if err := root.Execute(); err != nil {
		t.Fatalf("qtask man --markdown: %v", err)
	}
	committed, err := os.ReadFile("../../docs/COMMANDS.md")
	if err != nil {
		t.Fatal(err)
	}
	if out.String() != string(committed) {
		got, want := strings.Split(out.String(), "\n"), strings.Split(string(committed), "\n")
		for i := range min(len(got), len(want)) {
			if got[i] != want[i] {
				t.Fatalf("docs/COMMANDS.md differs from the commands' help at line %d:\n have %q\n want %q\nregenerate it: go run ./cmd/qtask man --markdown > docs/COMMANDS.md", i+1, want[i], got[i])
			}
		}
		t.Fatalf("docs/COMMANDS.md has %d lines, the commands' help %d: regenerate it: go run ./cmd/qtask man --markdown > docs/COMMANDS.md", len(want), len(got))
	}
}
