package tasks

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// ArgumentError is a malformed request (an empty command, an oversized or
// unprintable name, a working directory that is not one): the caller
// asked wrongly, and the CLI reports it as a usage error (exit 2).
// Compare InputError, a well-formed request that cannot be carried out
// here (a shell that is not installed).
type ArgumentError struct{ Msg string }

func (e *ArgumentError) Error() string { return e.Msg }

// CheckID refuses an empty task id ("" typed as an argument, `qtask
// status ""`): a mistake in the call, not a task that is missing, so it is
// an *ArgumentError (exit 2), not a taskid.NotFoundError (exit 1).
func CheckID(id string) error {
	if id == "" {
		return &ArgumentError{Msg: "task id is empty: give a task id or a unique prefix of one"}
	}
	return nil
}

// MaxNameBytes bounds a task name: it is a label for `ls` and a tmux window
// name, and tmux refuses a command line much over 16 KB with a bare
// "command too long".
const MaxNameBytes = 256

// CheckCommand refuses a command with nothing to run (a shell given only
// whitespace exits 0 at once, which would look like a task that worked),
// one holding a NUL byte (no exec can pass it), and one ending in a bare "&" (EndsWithBareAmpersand: the real work would
// escape the task). Start applies it, so every caller gets the same rule.
// example is how the caller's own command takes a command ("qtask monitor
// -- make test"), shown with an empty one: `run` and `monitor` share this
// rule, not their syntax. Start has no caller's syntax and passes "".
func CheckCommand(command, example string) error {
	if strings.TrimSpace(command) == "" {
		msg := "no command given (only whitespace)"
		if example != "" {
			msg += ": put it after --, e.g. " + example
		}
		return &ArgumentError{Msg: msg}
	}
	if i := strings.IndexByte(command, 0); i >= 0 {
		// Only an MCP client (JSON) can send one; the exec of the shell
		// would fail with a bare "invalid argument" after the task exists.
		return &ArgumentError{Msg: fmt.Sprintf("the command holds a NUL byte (at byte %d), which no program can take in its arguments: remove it", i)}
	}
	if EndsWithBareAmpersand(command) {
		return &ArgumentError{Msg: "the command ends with a bare '&': that would fork it away from the task qtask tracks " +
			"(its output, exit code and stop would be lost); drop the '&' — use `qtask run --bg` to run it in the background"}
	}
	return nil
}

// CheckName refuses a name that could not be shown as it is (see
// CheckGivenName); "" is no name, an unnamed task.
func CheckName(name string) error {
	if name == "" {
		return nil
	}
	return CheckGivenName(name)
}

// CheckGivenName refuses a name the caller gave that could not be shown as
// it is: blank (only whitespace, or "" where a name was asked for: a blank
// label in `ls` and the tmux window), longer than MaxNameBytes, not UTF-8,
// or holding control characters (a newline or an escape sequence would
// break `ls` and the tmux status line).
func CheckGivenName(name string) error {
	if strings.TrimSpace(name) == "" {
		return &ArgumentError{Msg: "task name is empty (only whitespace): give a name to show, or none"}
	}
	if len(name) > MaxNameBytes {
		return &ArgumentError{Msg: fmt.Sprintf("task name is %d bytes, over the limit of %d: choose a shorter name", len(name), MaxNameBytes)}
	}
	if !utf8.ValidString(name) {
		return &ArgumentError{Msg: "task name is not valid UTF-8: choose a printable name"}
	}
	if i := strings.IndexFunc(name, unicode.IsControl); i >= 0 {
		r, _ := utf8.DecodeRuneInString(name[i:])
		return &ArgumentError{Msg: fmt.Sprintf("task name holds the control character %U at byte %d: choose a printable name", r, i)}
	}
	return nil
}
