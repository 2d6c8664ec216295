package tasks

import (
	"context"
	"errors"
	"strings"
	"testing"
)

func TestWindowName(t *testing.T) {
	cases := []struct {
		name, command string
		agent         bool
		want          string
	}{
		{"", "npm test", false, "3f9a1c02"},
		{"build", "npm test", true, "build"},
		{"", "npm test", true, "3f9a1c02 npm test"},
		{"", "  go test ./...\nsecond line", true, "3f9a1c02 go test ./..."},
		{"", "echo a-:-b\x1b[31m\tz", true, "3f9a1c02 echo a-_-b [31m z"},
		{"", "make all-of-the-targets-in-this-long-makefile", true, "3f9a1c02 make all-of-the-targets-in-this-…"},
		{"", "ünïcödé ✓", true, "3f9a1c02 ünïcödé ✓"},
	}
	for _, c := range cases {
		r := &record{Task: Task{ID: "3f9a1c02", Name: c.name, Command: c.command}}
		if got := windowName(r, c.agent); got != c.want {
			t.Errorf("windowName(%q, %q, agent %v) = %q, want %q", c.name, c.command, c.agent, got, c.want)
		}
	}
}

// Every caller of Start (the CLI, the MCP server, the agent hooks) gets the
// trailing-'&' rule, and a refused start leaves nothing behind.
func TestStartRefusesATrailingAmpersand(t *testing.T) {
	s := newTestStore(t)
	_, err := s.Start(context.Background(), StartOptions{Command: "npm run dev &", Cwd: t.TempDir(), Shell: "sh", Self: "/bin/true"})
	if !errors.As(err, new(*ArgumentError)) || !strings.Contains(err.Error(), "bare '&'") {
		t.Fatalf("Start(\"npm run dev &\"): %v, want an ArgumentError about the bare '&'", err)
	}
	if list, _, _ := s.List(Filter{}); len(list) != 0 {
		t.Fatalf("a refused start left %d task(s) behind", len(list))
	}
}
