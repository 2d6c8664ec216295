package agent

import (
	"fmt"
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// MinRefusedSleep is the shortest leading sleep agent mode refuses: a
// shorter one is a debounce, not a wait.
const MinRefusedSleep = 2 * time.Second

// maxShellDepth bounds how far CheckSleep looks into `bash -c '…'` nested
// in `bash -c '…'`; each level is a strictly shorter string.
const maxShellDepth = 4

// SleepError refuses a foreground command that begins by sleeping: an agent
// that sleeps to wait for something blocks its own shell tool and learns
// nothing more than a notification would tell it.
type SleepError struct {
	Duration time.Duration // math.MaxInt64 for `sleep infinity`
	// Qtask is how the agent's shell runs qtask: "qtask", or its full
	// path when the agent's PATH does not find it.
	Qtask string
}

func (e *SleepError) Error() string {
	d := "forever"
	if e.Duration < math.MaxInt64 {
		d = "for " + e.Duration.String()
	}
	return fmt.Sprintf("refused: this command starts by sleeping %[1]s, which only blocks your shell. "+
		"To wait for something to finish, start it in the background (`%[3]s run --bg -- COMMAND`, or your "+
		"shell tool's background option): you will be told with a <task-notification> when it ends, or wait "+
		"for it with `%[3]s wait ID`. To wait for a condition, run the check itself in the background "+
		"(`%[3]s run --bg -- 'until CHECK; do sleep 1; done'`); to wait for a line in some output (a server "+
		"saying it is ready, an ERROR), start a monitor (`%[3]s monitor --match REGEX -- COMMAND`, or "+
		"`%[3]s monitor ID --match REGEX` for a running task): each matching line is a notification. "+
		"Sleeps under %[2]s, `sleep N &` and sleeps "+
		"later in a chain are not refused.", d, MinRefusedSleep, e.Qtask)
}

// CheckSleep returns a *SleepError when cmd begins with `sleep N` (N at
// least MinRefusedSleep; units ms, s, m, h, d; several operands add up)
// that is alone or followed by `&&`, `||`, `;` or a newline — a trailing
// comment does not hide it, and `bash -c 'sleep 5'` is looked into. A
// sleep piped into something, sent to the background with `&`, shorter
// than MinRefusedSleep, whose length is not literal (`sleep $N`), or not
// first in the chain is left alone. One linear pass per nesting level.
// qtask is how the agent's shell runs qtask, for the refusal's advice.
func CheckSleep(cmd, qtask string) error {
	if d, ok := leadingSleep(cmd, 0); ok {
		return &SleepError{Duration: d, Qtask: qtask}
	}
	return nil
}

func leadingSleep(cmd string, depth int) (time.Duration, bool) {
	words, op := firstCommand(cmd)
	switch op {
	case "", "\n", ";", "&&", "||":
	default:
		return 0, false // piped, backgrounded, redirected or grouped
	}
	if len(words) == 0 || !words[0].literal {
		return 0, false
	}
	switch name := filepath.Base(words[0].text); {
	case name == "sleep":
		return sleepOperands(words[1:])
	case isShell(name) && depth < maxShellDepth && len(words) >= 3 && isDashC(words[1]) && words[2].literal:
		return leadingSleep(words[2].text, depth+1)
	}
	return 0, false
}

// sleepOperands adds up sleep's operands; false when one is not a literal
// duration or the total is short.
func sleepOperands(args []word) (time.Duration, bool) {
	if len(args) == 0 {
		return 0, false
	}
	var total float64 // seconds
	for _, a := range args {
		if !a.literal {
			return 0, false
		}
		secs, ok := parseSleep(a.text)
		if !ok {
			return 0, false
		}
		total += secs
	}
	if total < MinRefusedSleep.Seconds() {
		return 0, false
	}
	if total >= float64(math.MaxInt64)/float64(time.Second) {
		return math.MaxInt64, true
	}
	return time.Duration(total * float64(time.Second)).Round(time.Millisecond), true
}

// parseSleep reads one operand of sleep in seconds: a non-negative number
// with an optional unit, or "infinity".
func parseSleep(s string) (float64, bool) {
	if s == "inf" || s == "infinity" {
		return math.Inf(1), true
	}
	unit := 1.0
	for _, u := range []struct {
		suffix string
		secs   float64
	}{{"ms", 0.001}, {"s", 1}, {"m", 60}, {"h", 3600}, {"d", 86400}} {
		if strings.HasSuffix(s, u.suffix) {
			s, unit = strings.TrimSuffix(s, u.suffix), u.secs
			break
		}
	}
	if s == "" || strings.Trim(s, "0123456789.") != "" {
		return 0, false
	}
	n, err := strconv.ParseFloat(s, 64)
	if err != nil || n < 0 {
		return 0, false
	}
	return n * unit, true
}

func isShell(name string) bool {
	switch name {
	case "sh", "bash", "dash", "zsh", "ksh":
		return true
	}
	return false
}

// isDashC reports whether w is -c, alone or among other single-letter
// options (-lc, -ec).
func isDashC(w word) bool {
	return w.literal && len(w.text) >= 2 && w.text[0] == '-' && strings.Contains(w.text, "c") &&
		strings.Trim(w.text[1:], "abcdefghijklmnopqrstuvwxyz") == ""
}

// word is one shell word with its quotes removed; literal is false when
// it holds an expansion ($VAR, $(…), `…`) whose value only the shell knows.
type word struct {
	text    string
	literal bool
}

// firstCommand reads the words of cmd's first simple command, skipping
// leading blank and comment lines, and the operator that ends it: "" at
// the end, "\n", ";", "&&", "||", "&", "|", or one of "<>()" for what this
// reader does not follow. A comment after the words ends the command as
// its newline does.
func firstCommand(cmd string) ([]word, string) {
	var words []word
	i := 0
	for {
		for i < len(cmd) && (cmd[i] == ' ' || cmd[i] == '\t' || (cmd[i] == '\n' && len(words) == 0)) {
			i++
		}
		if i >= len(cmd) {
			return words, ""
		}
		switch c := cmd[i]; c {
		case '#':
			j := strings.IndexByte(cmd[i:], '\n')
			if j < 0 {
				return words, ""
			}
			if len(words) > 0 {
				return words, "\n"
			}
			i += j + 1
			continue
		case '\n', ';':
			return words, string(c)
		case '&', '|':
			if i+1 < len(cmd) && cmd[i+1] == c {
				return words, string([]byte{c, c})
			}
			return words, string(c)
		case '<', '>', '(', ')':
			return words, string(c)
		case '\\':
			if i+1 < len(cmd) && cmd[i+1] == '\n' {
				i += 2 // a line continuation between words
				continue
			}
		}
		w, next := readWord(cmd, i)
		words, i = append(words, w), next
	}
}

// readWord reads the word starting at cmd[i] and returns it with the index
// just past it.
func readWord(cmd string, i int) (word, int) {
	var b strings.Builder
	w := word{literal: true}
	for i < len(cmd) {
		switch c := cmd[i]; c {
		case ' ', '\t', '\n', ';', '&', '|', '<', '>', '(', ')':
			w.text = b.String()
			return w, i
		case '\\':
			switch {
			case i+1 >= len(cmd):
				b.WriteByte(c) // a backslash at the very end is itself
			case cmd[i+1] != '\n':
				b.WriteByte(cmd[i+1])
			}
			i += 2
		case '\'':
			j := strings.IndexByte(cmd[i+1:], '\'')
			if j < 0 { // unterminated: a syntax error, not a sleep
				j, w.literal = len(cmd)-i-1, false
			}
			b.WriteString(cmd[i+1 : i+1+j])
			i += j + 2
		case '"':
			i++
			for i < len(cmd) && cmd[i] != '"' {
				switch {
				case cmd[i] == '\\' && i+1 < len(cmd) && strings.IndexByte("\\\"$`\n", cmd[i+1]) >= 0:
					if cmd[i+1] != '\n' {
						b.WriteByte(cmd[i+1])
					}
					i++
				case cmd[i] == '$' || cmd[i] == '`':
					w.literal = false
					b.WriteByte(cmd[i])
				default:
					b.WriteByte(cmd[i])
				}
				i++
			}
			if i >= len(cmd) { // unterminated: a syntax error, not a sleep
				w.literal = false
			}
			i++
		case '$', '`':
			// An expansion: its text (and so where the word ends) is the
			// shell's business; the word is marked and read on as is.
			w.literal = false
			b.WriteByte(c)
			i++
		default:
			b.WriteByte(c)
			i++
		}
	}
	w.text = b.String()
	return w, len(cmd)
}
