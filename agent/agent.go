// Package agent holds the rules qtask applies on behalf of the people and
// coding agents that run commands through it: refusing commands that would
// escape the task manager, and hints that steer an agent toward background
// runs. It owns no task state.
package agent

import (
	"fmt"
	"time"
)

// EndsWithBareAmpersand reports whether a shell command string ends in a
// bare "&", which would fork the real work away from the task qtask tracks
// (qtask already is the backgrounding). It follows shell quoting in one
// linear pass: "&&", "\&", a quoted '&' and "$(printf '&')" do not count,
// and a trailing "# comment" does not hide the "&".
func EndsWithBareAmpersand(cmd string) bool {
	var stack []byte // open contexts: '\'', '"', '(' for $( … ), '`'
	var last, prev byte
	mark := func(c byte) {
		if len(stack) == 0 {
			prev, last = last, c
		}
	}
	wordStart := true
	for i := 0; i < len(cmd); i++ {
		c := cmd[i]
		top := byte(0)
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		switch {
		case top == '\'':
			if c == '\'' {
				stack = stack[:len(stack)-1]
				mark(c)
			}
			continue
		case c == '\\':
			i++ // the next byte is literal
			mark('x')
		case top == '"' && c == '"', top == '`' && c == '`', top == '(' && c == ')':
			stack = stack[:len(stack)-1]
			mark(c)
		case c == '$' && i+1 < len(cmd) && cmd[i+1] == '(':
			stack = append(stack, '(')
			i++
		case top == '"':
			// Inside double quotes only \, $( and ` are special.
			if c == '`' {
				stack = append(stack, '`')
			}
		case c == '\'', c == '"', c == '`':
			stack = append(stack, c)
		case c == '#' && wordStart:
			for i+1 < len(cmd) && cmd[i+1] != '\n' {
				i++
			}
		case c == ' ' || c == '\t' || c == '\n':
		default:
			mark(c)
		}
		wordStart = c == ' ' || c == '\t' || c == '\n' || c == ';' || c == '&' || c == '|' || c == '('
	}
	return last == '&' && prev != '&' && prev != '>' && prev != '<' && prev != '|'
}

// TrailingAmpersandError explains the refusal of a command ending in "&".
type TrailingAmpersandError struct{}

func (TrailingAmpersandError) Error() string {
	return "the command ends with a bare '&': that would fork it away from the task qtask tracks " +
		"(its output, exit code and stop would be lost); drop the '&' — use `qtask run --bg` to run it in the background"
}

// LongRunningHint is the note for a foreground command that ran at least
// max(1s, timeout/2) and ended on its own; "" when no note is due. Callers
// must not ask for it after a promote, a timeout, a stop or a signal.
func LongRunningHint(ran, timeout time.Duration, outputPath string) string {
	if ran < max(time.Second, timeout/2) {
		return ""
	}
	return fmt.Sprintf("qtask: note: this command ran for %ds. Next time, start similar long commands with "+
		"`qtask run --bg` and check on them with `qtask wait` or `qtask logs`. It has finished; "+
		"do not re-run it: its output is in %s", int(ran.Round(time.Second)/time.Second), outputPath)
}
