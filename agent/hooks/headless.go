package hooks

import (
	"os"
	"slices"
	"strings"
)

// ClaudeOutlivesTurn reports whether the Claude Code session that runs a
// hook goes on after its turn ends, so that the asyncRewake waiter
// (Rewake) has someone to wake. A plain headless run (`claude -p PROMPT`)
// ends with its turn, and Claude holds its exit ~30 s for a waiter still
// waiting on a task (measured with 2.1.330): there the waiter must not be
// armed. entrypoint and pid are $CLAUDE_CODE_ENTRYPOINT and $CLAUDE_PID
// of the hook's environment. Measured with 2.1.330: the TUI sets "cli";
// both `-p` runs set "sdk-cli" and $CLAUDE_CODE_SESSION_ATTENDED=0 alike,
// and the hook's input does not tell them apart either, so a streaming
// run (`-p --input-format stream-json`, the Agent SDK's, which outlives
// its turns) is known by Claude's own command line. Anything else (an
// unknown entrypoint, a command line that cannot be read) arms the
// waiter, as before.
func ClaudeOutlivesTurn(entrypoint, pid string) bool {
	if entrypoint != "sdk-cli" || pid == "" || strings.ContainsAny(pid, "/.") {
		return true
	}
	cmdline, err := os.ReadFile("/proc/" + pid + "/cmdline")
	if err != nil {
		return true
	}
	return streamsInput(strings.Split(strings.TrimSuffix(string(cmdline), "\x00"), "\x00"))
}

// streamsInput reports whether Claude's arguments make it read its
// prompts as a stream (--input-format stream-json).
func streamsInput(args []string) bool {
	if slices.Contains(args, "--input-format=stream-json") {
		return true
	}
	i := slices.Index(args, "--input-format")
	return i >= 0 && i+1 < len(args) && args[i+1] == "stream-json"
}
