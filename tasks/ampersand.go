package tasks

import "strings"

// EndsWithBareAmpersand reports whether a shell command string ends in a
// bare "&", which would fork the real work away from the task qtask tracks
// (qtask already is the backgrounding). It follows shell quoting in one
// linear pass: "&&", "\&", a quoted '&' and "$(printf '&')" do not count,
// a trailing "# comment" does not hide the "&", and heredoc bodies, $'…'
// strings and backslash-newline continuations are read as the shell would.
func EndsWithBareAmpersand(cmd string) bool {
	sc := ampScanner{cmd: cmd, wordStart: true}
	for sc.i = 0; sc.i < len(cmd); sc.i++ {
		sc.step()
	}
	return sc.last == '&' && sc.prev != '&' && sc.prev != '>' && sc.prev != '<' && sc.prev != '|'
}

// ampScanner is the state of EndsWithBareAmpersand's single pass.
type ampScanner struct {
	cmd        string
	i          int
	stack      []byte   // open contexts: ' " ` ( and 'a' for $'…'
	last, prev byte     // the last two significant bytes at top level
	heredocs   []string // delimiters whose bodies start after the next newline
	wordStart  bool
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
