package hooks

import (
	"os"
	"strconv"
	"testing"
)

// TestClaudeOutlivesTurn: the waiter is armed in Claude's TUI and in a
// streaming-input run, not in a plain `claude -p`; whatever cannot be
// told (no pid, an unreadable one) arms it, as before.
func TestClaudeOutlivesTurn(t *testing.T) {
	for _, c := range []struct {
		args []string
		want bool
	}{
		{[]string{"claude", "-p", "hi", "--output-format", "stream-json"}, false},
		{[]string{"claude", "-p", "--input-format", "stream-json", "--output-format", "stream-json"}, true},
		{[]string{"claude", "-p", "--input-format=stream-json"}, true},
		{[]string{"claude", "-p", "--input-format", "text"}, false},
		{[]string{"claude", "-p", "--input-format"}, false},
	} {
		if got := streamsInput(c.args); got != c.want {
			t.Errorf("streamsInput(%q) = %v, want %v", c.args, got, c.want)
		}
	}
	self := strconv.Itoa(os.Getpid()) // a test binary: not streaming
	for _, c := range []struct {
		entrypoint, pid string
		want            bool
	}{
		{"cli", self, true},
		{"sdk-cli", self, false},
		{"sdk-cli", "", true},
		{"sdk-cli", "999999999", true},
		{"sdk-cli", "self/../1", true},
		{"", self, true},
	} {
		if got := ClaudeOutlivesTurn(c.entrypoint, c.pid); got != c.want {
			t.Errorf("ClaudeOutlivesTurn(%q, %q) = %v, want %v", c.entrypoint, c.pid, got, c.want)
		}
	}
}
