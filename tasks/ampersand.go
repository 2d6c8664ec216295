package tasks

import (
	"path/filepath"
	"strings"

	"github.com/qtask/qtask/tasks/shellword"
)

// EndsWithBareAmpersand reports whether a shell command string ends in a
// bare "&", which would fork the real work away from the task qtask tracks
// (qtask already is the backgrounding). It follows shell quoting in one
// linear pass: "&&", "\&", a quoted '&' and "$(printf '&')" do not count,
// a trailing "# comment" does not hide the "&", and heredoc bodies, $'…'
// strings and backslash-newline continuations are read as the shell would.
// When the last command runs a script with a shell's -c (`bash -c "npm run
// dev &"`, also behind `nohup`, `setsid`, `exec`, `env` or assignments),
// that script is read the same way, as deep as shellword.MaxDepth: the
// inner shell would background the work and exit at once.
func EndsWithBareAmpersand(cmd string) bool {
	return endsWithBareAmpersand(cmd, 0)
}

func endsWithBareAmpersand(cmd string, depth int) bool {
	sc := ampScanner{cmd: cmd, wordStart: true, between: true}
	for sc.i = 0; sc.i < len(cmd); sc.i++ {
		sc.step()
	}
	if sc.last == '&' && sc.prev != '&' && sc.prev != '>' && sc.prev != '<' && sc.prev != '|' {
		return true
	}
	if depth >= shellword.MaxDepth || len(sc.stack) > 0 {
		return false
	}
	words, _ := shellword.FirstCommand(cmd[sc.lastStart:])
	script, ok := shellword.Script(skipLaunchers(words))
	return ok && endsWithBareAmpersand(script, depth+1)
}

// skipLaunchers drops what stands before the program a command runs:
// assignments (X=1) and the commands that run the rest of the line in
// the same process or in one that outlives the line anyway (nohup,
// setsid, exec, env, command), with their options.
func skipLaunchers(words []shellword.Word) []shellword.Word {
	launcher := false
	for len(words) > 0 && words[0].Literal {
		w := words[0].Text
		switch {
		case filepath.Base(w) == "nohup", filepath.Base(w) == "setsid", w == "exec", filepath.Base(w) == "env", w == "command":
			launcher = true
		case launcher && strings.HasPrefix(w, "-"):
		case isAssignment(w):
		default:
			return words
		}
		words = words[1:]
	}
	return words
}

// isAssignment reports whether w is NAME=value.
func isAssignment(w string) bool {
	name, _, ok := strings.Cut(w, "=")
	if !ok || name == "" || name[0] >= '0' && name[0] <= '9' {
		return false
	}
	return strings.Trim(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") == ""
}

// ampScanner is the state of EndsWithBareAmpersand's single pass.
type ampScanner struct {
	cmd        string
	i          int
	stack      []byte   // open contexts: ' " ` ( and 'a' for $'…'
	last, prev byte     // the last two significant bytes at top level
	heredocs   []string // delimiters whose bodies start after the next newline
	wordStart  bool
	between    bool // at top level, no command has begun since the last separator
	lastStart  int  // where the last top-level command began
}

func (sc *ampScanner) top() byte {
	if len(sc.stack) == 0 {
		return 0
	}
	return sc.stack[len(sc.stack)-1]
}

func (sc *ampScanner) push(c byte) { sc.stack = append(sc.stack, c) }
func (sc *ampScanner) pop()        { sc.stack = sc.stack[:len(sc.stack)-1] }

// mark records a significant byte, if it stands at top level.
func (sc *ampScanner) mark(c byte) {
	if len(sc.stack) == 0 {
		sc.prev, sc.last = sc.last, c
	}
}

func (sc *ampScanner) next() byte {
	if sc.i+1 < len(sc.cmd) {
		return sc.cmd[sc.i+1]
	}
	return 0
}

func (sc *ampScanner) step() {
	c, top := sc.cmd[sc.i], sc.top()
	if top == 0 {
		sc.noteCommand(c)
	}
	switch {
	case top == '\'':
		if c == '\'' {
			sc.pop()
			sc.mark(c)
		}
		return
	case top == 'a': // $'…': backslash escapes, even a quote
		if c == '\\' {
			sc.i++
		} else if c == '\'' {
			sc.pop()
			sc.mark(c)
		}
		return
	case c == '\\' && sc.next() == '\n':
		sc.i++ // line continuation: as if neither byte were there
		return
	case c == '\\':
		sc.i++ // the next byte is literal
		sc.mark('x')
	case top == '"' && c == '"', top == '`' && c == '`', top == '(' && c == ')':
		sc.pop()
		sc.mark(c)
	case c == '$' && sc.next() == '(':
		sc.push('(')
		sc.i++
	case top == '"':
		// Inside double quotes only \, $( and ` are special.
		if c == '`' {
			sc.push('`')
		}
	case c == '$' && sc.next() == '\'':
		sc.push('a')
		sc.i++
	case c == '\'', c == '"', c == '`', c == '(':
		sc.push(c)
	case c == '#' && sc.wordStart:
		// A comment runs to the newline (in backticks: to the closing one).
		for sc.i+1 < len(sc.cmd) && sc.cmd[sc.i+1] != '\n' && !(top == '`' && sc.cmd[sc.i+1] == '`') {
			sc.i++
		}
	case c == '<' && sc.next() == '<' && !strings.HasPrefix(sc.cmd[sc.i:], "<<<"):
		sc.heredoc()
		sc.mark('x')
	case c == '\n' && len(sc.heredocs) > 0:
		sc.skipHeredocBodies()
	case c == ' ' || c == '\t' || c == '\n':
	default:
		sc.mark(c)
	}
	sc.wordStart = c == ' ' || c == '\t' || c == '\n' || c == ';' || c == '&' || c == '|' || c == '('
}

// noteCommand keeps lastStart at the first byte of the last top-level
// command: after a separator (";", a newline, "|", "&" other than in a
// redirection such as 2>&1 or &>file), the next byte that is not blank, a
// comment or a line continuation.
func (sc *ampScanner) noteCommand(c byte) {
	switch {
	case c == ' ' || c == '\t', c == '#' && sc.wordStart, c == '\\' && sc.next() == '\n':
	case c == '\n', c == ';', c == '|':
		sc.between = true
	case c == '&':
		if sc.last != '>' && sc.last != '<' && sc.next() != '>' {
			sc.between = true
		}
	case sc.between:
		sc.between, sc.lastStart = false, sc.i
	}
}

// heredoc reads "<<[-]WORD" at sc.i and queues WORD (unquoted) as a
// delimiter; "-" (strip leading tabs) is kept as a prefix of the entry.
func (sc *ampScanner) heredoc() {
	j := sc.i + 2
	strip := ""
	if j < len(sc.cmd) && sc.cmd[j] == '-' {
		strip, j = "-", j+1
	}
	for j < len(sc.cmd) && (sc.cmd[j] == ' ' || sc.cmd[j] == '\t') {
		j++
	}
	var word strings.Builder
	for ; j < len(sc.cmd) && !strings.ContainsRune(" \t\n;&|<>()", rune(sc.cmd[j])); j++ {
		if c := sc.cmd[j]; c != '\'' && c != '"' && c != '\\' {
			word.WriteByte(c)
		}
	}
	if word.Len() > 0 {
		sc.heredocs = append(sc.heredocs, strip+word.String())
	}
	sc.i = j - 1
}

// skipHeredocBodies moves past the bodies of the queued heredocs, which
// start after the newline at sc.i; their text is data, not shell.
func (sc *ampScanner) skipHeredocBodies() {
	pos := sc.i + 1 // start of the next body line
	for _, d := range sc.heredocs {
		delim, strip := strings.CutPrefix(d, "-")
		for pos < len(sc.cmd) {
			end := strings.IndexByte(sc.cmd[pos:], '\n')
			if end < 0 {
				end = len(sc.cmd) - pos
			}
			line := sc.cmd[pos : pos+end]
			pos += end + 1
			if strip {
				line = strings.TrimLeft(line, "\t")
			}
			if line == delim {
				break
			}
		}
	}
	sc.heredocs = sc.heredocs[:0]
	sc.i = min(pos, len(sc.cmd)) - 1 // the newline that ends the last body line
}
