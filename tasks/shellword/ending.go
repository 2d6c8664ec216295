package shellword

import "strings"

// LastCommand reads cmd to its end as sh would and returns the text of its
// last top-level command (from that command's first byte to the end of
// cmd), and whether cmd ends in a bare '&' that sends it to the
// background, or in zsh's "&|" or "&!" (background and disown; bash too
// backgrounds before "!"). "&&", "\&", a quoted '&', "$(printf '&')", the
// '&' of a redirection (2>&1, >&, <&, &>) and "|&" do not count; a trailing
// "# comment" hides neither; heredoc bodies, $'…' strings and
// backslash-newline continuations are read as the shell reads them. last
// is "" when cmd ends inside an open quote or substitution (a syntax
// error). One linear pass, whatever the nesting.
func LastCommand(cmd string) (last string, background bool) {
	sc := scanner{cmd: cmd, wordStart: true, between: true}
	for sc.i = 0; sc.i < len(cmd); sc.i++ {
		sc.step()
	}
	background = bareAmpersand(sc.last, sc.prev) ||
		(sc.last == '|' || sc.last == '!') && bareAmpersand(sc.prev, sc.before)
	if len(sc.stack) > 0 {
		return "", background
	}
	return cmd[sc.lastStart:], background
}

// bareAmpersand reports whether op, after the significant byte before it,
// is a '&' that backgrounds: not "&&", the '&' of a redirection (>&, <&)
// or "|&".
func bareAmpersand(op, before byte) bool {
	return op == '&' && before != '&' && before != '>' && before != '<' && before != '|'
}

// scanner is the state of LastCommand's single pass.
type scanner struct {
	cmd        string
	i          int
	stack      []byte   // open contexts: ' " ` ( and 'a' for $'…'
	last, prev byte     // the last two significant bytes at top level
	before     byte     // and the one before those
	heredocs   []string // delimiters whose bodies start after the next newline
	wordStart  bool
	between    bool // at top level, no command has begun since the last separator
	lastStart  int  // where the last top-level command began
}

func (sc *scanner) top() byte {
	if len(sc.stack) == 0 {
		return 0
	}
	return sc.stack[len(sc.stack)-1]
}

func (sc *scanner) push(c byte) { sc.stack = append(sc.stack, c) }
func (sc *scanner) pop()        { sc.stack = sc.stack[:len(sc.stack)-1] }

// mark records a significant byte, if it stands at top level.
func (sc *scanner) mark(c byte) {
	if len(sc.stack) == 0 {
		sc.before, sc.prev, sc.last = sc.prev, sc.last, c
	}
}

func (sc *scanner) next() byte {
	if sc.i+1 < len(sc.cmd) {
		return sc.cmd[sc.i+1]
	}
	return 0
}

// step reads the byte at sc.i (and any it consumes with it).
func (sc *scanner) step() {
	c, top := sc.cmd[sc.i], sc.top()
	if top == 0 {
		sc.noteCommand(c)
	}
	if top == '\'' || top == 'a' {
		sc.stepSingleQuoted(c, top)
		return
	}
	if c == '\\' && sc.next() == '\n' {
		sc.i++ // line continuation: as if neither byte were there
		return
	}
	sc.stepShell(c, top)
	sc.wordStart = c == ' ' || c == '\t' || c == '\n' || c == ';' || c == '&' || c == '|' || c == '('
}

// stepSingleQuoted reads c inside '…' (no escapes) or $'…' (backslash
// escapes, even of a quote).
func (sc *scanner) stepSingleQuoted(c, top byte) {
	switch {
	case top == 'a' && c == '\\':
		sc.i++
	case c == '\'':
		sc.pop()
		sc.mark(c)
	}
}

// stepShell reads c outside single quotes: at top level, inside "…",
// `…` or $(…).
func (sc *scanner) stepShell(c, top byte) {
	switch {
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
}

// noteCommand keeps lastStart at the first byte of the last top-level
// command: after a separator (";", a newline, "|", "&" other than in a
// redirection such as 2>&1 or &>file), the next byte that is not blank, a
// comment or a line continuation.
func (sc *scanner) noteCommand(c byte) {
	switch {
	case c == ' ' || c == '\t', c == '#' && sc.wordStart, c == '\\' && sc.next() == '\n':
	case c == '!' && sc.i > 0 && sc.cmd[sc.i-1] == '&' && (sc.i < 2 || !strings.ContainsRune("&|<>", rune(sc.cmd[sc.i-2]))):
		// zsh's "&!" is one operator: no command begins at its '!'
		// (after "&&" one does: `a&&!b`).
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
func (sc *scanner) heredoc() {
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
func (sc *scanner) skipHeredocBodies() {
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
