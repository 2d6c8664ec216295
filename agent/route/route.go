// Package route reads what a coding agent hands to the program that runs
// its shell tool's commands, so that qtask can run each command as a task
// while the agent's own permission check stays on the command the model
// wrote.
//
// Claude Code (2.1.330) runs every Bash tool call as
// `$CLAUDE_CODE_SHELL_PREFIX SCRIPT`, SCRIPT being one argument: the whole
// shell script Claude would have run itself. Measured, it reads
//
//	source SNAPSHOT 2>/dev/null || true && { …shell options… } … && eval 'COMMAND' < /dev/null && pwd -P >| CWDFILE
//
// with COMMAND quoted for the shell, and without `< /dev/null` when
// COMMAND redirects its input itself (`< FILE`, `<<EOF`, `<<<`). Claude runs its hooks, its status line
// and its stdio MCP servers through the same prefix (a plain command line,
// not such a script), so only a script of that shape is a tool call.
package route

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/qtask/qtask/tasks/shellword"
)

// ClaudeCommand returns the command the model wrote, read out of the script
// Claude hands its shell prefix, and whether script is a Bash tool call at
// all. It looks for the one `eval WORD [< /dev/null] && pwd -P >| PATH` that
// ends the script (the earliest such eval that parses to the very end, so a
// command that itself contains that text is read whole) and unquotes WORD
// as the shell would. A script that does not end so — a hook, an MCP
// server, or a form of Claude's this code does not know — is not a tool
// call.
func ClaudeCommand(script string) (string, bool) {
	const evalWord = "eval "
	for from := 0; ; {
		i := strings.Index(script[from:], evalWord)
		if i < 0 {
			return "", false
		}
		start := from + i
		from = start + 1
		if start > 0 && script[start-1] != ' ' {
			continue
		}
		cmd, rest, ok := unquoteWord(script[start+len(evalWord):])
		if !ok {
			continue
		}
		tail, found := strings.CutPrefix(rest, " < /dev/null && pwd -P >| ")
		if !found {
			// A command that redirects its input has no `< /dev/null`.
			tail, found = strings.CutPrefix(rest, " && pwd -P >| ")
		}
		if !found {
			continue
		}
		if _, after, ok := unquoteWord(tail); ok && after == "" {
			return cmd, true
		}
	}
}

// unquoteWord reads the shell word s begins with, as shellword.ReadWord
// reads it, and returns its value and what follows it. ok is false for an
// empty word, a comment, or a word the shell would not pass on as it is
// (an expansion, a pattern, a quote left open).
func unquoteWord(s string) (word, rest string, ok bool) {
	if strings.HasPrefix(s, "#") {
		return "", "", false
	}
	w, rest := shellword.ReadWord(s)
	return w.Text, rest, w.Literal && len(rest) < len(s)
}

// ClaudeShell is the shell Claude wrote script for: zsh when it sources a
// zsh snapshot, else bash (Claude runs its tool in bash or zsh only).
func ClaudeShell(script string) string {
	if strings.Contains(script, "/snapshot-zsh-") {
		return "zsh"
	}
	return "bash"
}

// ClaudeToolTimeout is the Bash tool's default timeout given
// $BASH_DEFAULT_TIMEOUT_MS as Claude's commands see it (ms): that, else
// two minutes. (A timeout the model passes with one call comes by the
// PreToolUse hook's mark: Call.)
func ClaudeToolTimeout(envMS string) time.Duration {
	if ms, err := strconv.ParseInt(envMS, 10, 64); err == nil && ms > 0 {
		return time.Duration(ms) * time.Millisecond
	}
	return 2 * time.Minute
}

// ClaudeMaxTimeout bounds a call's own timeout as Claude's Bash tool does:
// $BASH_MAX_TIMEOUT_MS as Claude's commands see it (ms), else 10 minutes,
// and never below the tool's default timeout dflt. Past it, Claude's own
// timeout would fire first; under it, qtask would move the command early.
func ClaudeMaxTimeout(envMS string, dflt time.Duration) time.Duration {
	limit := 10 * time.Minute
	if ms, err := strconv.ParseInt(envMS, 10, 64); err == nil && ms > 0 {
		limit = time.Duration(ms) * time.Millisecond
	}
	return max(limit, dflt)
}

// BackgroundAfter is how long a routed foreground command may run before
// qtask moves it to the background: a little under the agent's own tool
// timeout (110 s of Claude's 120 s), so the agent gets qtask's "moved to
// the background" with the task id rather than its own timeout. A tool
// timeout of 2 s or less (a model may pass one with a call) keeps half of
// it: a second off would leave nothing, which reads as no timeout at all.
func BackgroundAfter(toolTimeout time.Duration) time.Duration {
	margin := min(max(toolTimeout/12, time.Second), toolTimeout/2)
	return max(toolTimeout-margin, time.Millisecond)
}

// ForegroundTimeout is the foreground timeout of a command run under an
// agent's tool whose timeout is tool (0: none known): the configured one
// (0: none), but never past BackgroundAfter(tool).
func ForegroundTimeout(configured, tool time.Duration) time.Duration {
	if tool <= 0 {
		return configured
	}
	if after := BackgroundAfter(tool); configured <= 0 || configured > after {
		return after
	}
	return configured
}

// ClaudeShellLink is the name of the link to the qtask binary that `qtask
// agent install claude` sets as CLAUDE_CODE_SHELL_PREFIX: Claude runs its
// stdio MCP servers with the prefix as the program itself (no arguments
// can follow it), so qtask knows it is the prefix by the name it was
// called by.
const ClaudeShellLink = "qtask-claude-shell"

// IsClaudeShellLink reports whether argv0 names the link.
func IsClaudeShellLink(argv0 string) bool { return filepath.Base(argv0) == ClaudeShellLink }

// Claude's own background runs (run_in_background) reach the shell prefix
// exactly as foreground ones do: same script, environment and output file
// (measured). Claude waits on the prefix either way and, for a background
// run, tells the model itself when it exits. So a background run must be
// a task that qtask neither times out nor announces — one notification per
// end, Claude's. Nor does the prefix see a timeout the model passes with
// one call, which is that call's tool timeout. Its PreToolUse hook, which
// sees both, leaves a mark for the prefix, keyed by the session and the
// command.

// markTTL bounds how long a mark waits for its command: a call the user
// refused leaves one behind, which must not make a later foreground run of
// the same command a background one forever.
const markTTL = 10 * time.Minute

// Call is what the PreToolUse hook saw of a Bash call that its script
// does not show.
type Call struct {
	Background bool          // run_in_background
	Timeout    time.Duration // the call's own timeout; 0: the default
}

// MarkCall records, in dir, what session's next routed run of command is.
func MarkCall(dir, session, command string, c Call) error {
	return writeMark(markPath(dir, "bg-", session, command), fmt.Sprintf("%t %d\n", c.Background, c.Timeout.Milliseconds()))
}

// TakeCall returns the fresh mark for session's command in dir, if there
// is one, and consumes it.
func TakeCall(dir, session, command string) (Call, bool) {
	data, ok := takeMark(markPath(dir, "bg-", session, command))
	if !ok {
		return Call{}, false
	}
	if len(data) == 0 {
		return Call{Background: true}, true // an older qtask's mark: background calls only
	}
	var c Call
	var ms int64
	if _, err := fmt.Sscanf(string(data), "%t %d", &c.Background, &ms); err != nil || ms < 0 {
		return Call{}, false
	}
	c.Timeout = time.Duration(ms) * time.Millisecond
	return c, true
}

// Claude stops a background call in the same way whoever asks: the model's
// TaskStop, and Claude itself as it exits (on SIGTERM or SIGHUP, a closed
// terminal, /exit), send SIGTERM to the call's process group (measured),
// and no hook tells the exits apart. Only TaskStop fires PreToolUse, with
// Claude's id of the call: {"task_id": ID}. Its hook leaves a stop mark
// for that id, and the prefix of the call, on the signal, finds it: the
// model asked for the stop. Without one, Claude is ending, and the task
// must outlive it.

// MarkStop records, in dir, that session's model asked to stop Claude's
// task claudeTask.
func MarkStop(dir, session, claudeTask string) error {
	return writeMark(markPath(dir, "stop-", session, claudeTask), "")
}

// TakeStop reports whether a fresh stop mark for session's Claude task
// claudeTask is in dir, and consumes it.
func TakeStop(dir, session, claudeTask string) bool {
	_, ok := takeMark(markPath(dir, "stop-", session, claudeTask))
	return ok
}

// ClaudeTaskID is Claude's id of the Bash call whose output file is path:
// Claude hands the prefix of every call, as its stdout, the file
// …/tasks/ID.output (measured), and names the call by ID to TaskStop.
func ClaudeTaskID(path string) (string, bool) {
	if filepath.Base(filepath.Dir(path)) != "tasks" {
		return "", false
	}
	id, ok := strings.CutSuffix(filepath.Base(path), ".output")
	if !ok || id == "" {
		return "", false
	}
	return id, true
}

// writeMark writes a mark file, never through a link.
func writeMark(path, text string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return err
	}
	_, err = f.WriteString(text)
	return errors.Join(err, f.Close())
}

// takeMark returns the text of the mark at path, if it is fresh, and
// removes it: one run takes it, once.
func takeMark(path string) ([]byte, bool) {
	fi, err := os.Lstat(path)
	if err != nil || !fi.Mode().IsRegular() {
		return nil, false
	}
	data, err := os.ReadFile(path)
	if os.Remove(path) != nil || err != nil || time.Since(fi.ModTime()) >= markTTL {
		return nil, false // another run took it, or stale
	}
	return data, true
}

func markPath(dir, kind, session, key string) string {
	sum := sha256.Sum256([]byte(session + "\x00" + key))
	return filepath.Join(dir, kind+hex.EncodeToString(sum[:16]))
}
