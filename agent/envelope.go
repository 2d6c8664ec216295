package agent

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/qtask/qtask/tasks"
)

// Limits of the envelope: the agent reads it in its context window, so a
// notification stays small whatever the task printed.
const (
	// TailBytes bounds the output tail, measured before escaping.
	TailBytes = 8 << 10
	// commandMax bounds the command, in characters.
	commandMax = 500
	// labelMax bounds the label quoted in the summary, in characters.
	labelMax = 80
)

// envelopeTags are the element names of the envelope. Text that could be
// read as one of them (a task printing "</task-notification>") is defanged,
// so that neither an XML parser nor a model reading the raw text can take a
// task's output for the end of the envelope or a field of its own.
var envelopeTags = []string{
	"task-notification", "task-id", "kind", "status", "summary", "command", "cwd",
	"pid", "exit-code", "event-count", "dropped-lines", "result", "output-tail", "output-file",
}

// Envelope renders one notification as the <task-notification> element an
// agent reads: one element per line, every value escaped and made inert
// (see clean), the output tail cut to at most TailBytes on a character
// boundary with truncated="true" when anything before it was left out.
//
// A monitor's event says running, its count and its line (in <result>),
// and has no output tail: the line is the news. A monitor's end adds its
// total events and the lines its throttle dropped.
func Envelope(n *tasks.Notification) string {
	t := &n.Task
	var b strings.Builder
	field := func(name, attrs, value string) {
		fmt.Fprintf(&b, "<%s%s>%s</%s>\n", name, attrs, value, name)
	}
	b.WriteString("<task-notification>\n")
	field("task-id", "", clean(t.ID, false))
	field("kind", "", clean(string(t.Kind), false))
	field("status", "", clean(string(t.Status), false))
	field("summary", "", summary(n))
	command, cut := cutRunes(t.Command, commandMax)
	field("command", truncatedAttr(cut, false), clean(command, false))
	field("cwd", "", clean(t.Cwd, false))
	if t.PID > 0 {
		field("pid", "", strconv.Itoa(t.PID))
	}
	if t.ExitCode != nil {
		field("exit-code", "", strconv.Itoa(*t.ExitCode))
	}
	monitor := t.Kind == tasks.KindMonitor
	if monitor {
		field("event-count", "", strconv.Itoa(t.Events))
	}
	switch {
	case n.Event != nil:
		field("result", "", clean(n.Event.Line, false))
	case monitor:
		field("dropped-lines", "", strconv.Itoa(t.EventsDropped))
	}
	if n.Event == nil && t.Error != "" && (t.Status == tasks.StatusFailed || monitor) {
		field("result", "", clean(t.Error, false))
	}
	if n.Event == nil {
		tail, cut := Tail(n)
		field("output-tail", truncatedAttr(cut, true), clean(tail, true))
	}
	field("output-file", "", clean(t.OutputPath, false))
	b.WriteString("</task-notification>")
	return b.String()
}

// Tail is the end of the task's output the envelope quotes, before
// escaping: at most TailBytes, whole characters, and whether anything
// before it was left out.
func Tail(n *tasks.Notification) (string, bool) {
	tail, cut := utf8Tail(n.Tail)
	return string(tail), cut || n.TailCut
}

// truncatedAttr is the truncated attribute: always present when always,
// else only when true.
func truncatedAttr(cut, always bool) string {
	if cut || always {
		return ` truncated="` + strconv.FormatBool(cut) + `"`
	}
	return ""
}

// outlived is what the summary adds for a task that outlived its caller
// (tasks.Task.CallerGone): the agent that started it may have been told by
// its own tool that the command was stopped or did not finish (Claude
// Code, resumed after it was killed: "didn't finish before the previous
// session ended"), and must believe this end instead.
const outlived = " It kept running after the session that started it ended, and this is how it ended: " +
	"it was not stopped with that session, whatever an earlier message said."

// summary is the one sentence a person would say about the end, or the
// event (and, for a task that outlived its caller, one more saying so).
func summary(n *tasks.Notification) string {
	t := &n.Task
	label, cut := cutRunes(t.Label(), labelMax-1)
	if cut {
		label += "…"
	}
	what, verb := "Shell command", "completed."
	if t.Kind == tasks.KindMonitor {
		what = "Monitor"
	}
	switch {
	case n.Event != nil:
		verb = fmt.Sprintf("event %d.", n.Event.Count)
	case t.Status == tasks.StatusFailed:
		verb = "failed."
	case t.Status == tasks.StatusCancelled:
		verb = "was cancelled."
	case t.Kind == tasks.KindMonitor && t.Error != "":
		verb = "completed: " + t.Error + "."
	}
	s := fmt.Sprintf("%s %q %s", what, label, verb)
	if t.CallerGone && n.Event == nil {
		s += outlived
	}
	return clean(s, false)
}

// cutRunes keeps the first max characters of s, reporting whether it cut.
func cutRunes(s string, max int) (string, bool) {
	i := 0
	for n := range s {
		if i == max {
			return s[:n], true
		}
		i++
	}
	return s, false
}

// utf8Tail keeps at most the last TailBytes of b, then drops the bytes of
// a character cut in half at its start (at most three), reporting whether
// it left anything out.
func utf8Tail(b []byte) ([]byte, bool) {
	i := max(len(b)-TailBytes, 0)
	cut := i > 0
	for start := i; i < len(b) && i-start < utf8.UTFMax-1 && !utf8.RuneStart(b[i]); i++ {
		cut = true
	}
	return b[i:], cut
}

// clean makes s safe to place between tags: invalid UTF-8 becomes U+FFFD;
// control characters (C0, DEL, C1, so no escape sequence survives) and the
// bidirectional overrides and isolates (which can make text read otherwise
// than it is) are dropped; in one-line fields, newlines and tabs become
// spaces, in the tail they stay; our own tag names are defanged; and
// & < > " ' are escaped.
func clean(s string, multiline bool) string {
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		r, w := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == '\n' || r == '\t':
			if multiline {
				b.WriteRune(r)
			} else {
				b.WriteByte(' ')
			}
		case r == '<':
			b.WriteString("&lt;")
			if tagAt(s[i+1:]) {
				b.WriteByte('\\')
			}
		case r == '>':
			b.WriteString("&gt;")
		case r == '&':
			b.WriteString("&amp;")
		case r == '"':
			b.WriteString("&quot;")
		case r == '\'':
			b.WriteString("&apos;")
		case dropped(r):
		default:
			b.WriteRune(r) // utf8.RuneError for invalid bytes: U+FFFD
		}
		i += w
	}
	return b.String()
}

// dropped reports the characters clean removes.
func dropped(r rune) bool {
	switch {
	case r < 0x20, r >= 0x7f && r <= 0x9f:
		return true
	case r == 0x061c, r == 0x200e, r == 0x200f, r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
		return true // bidi marks, embeddings, overrides and isolates
	case r == 0xfffe, r == 0xffff:
		return true // not characters; XML refuses them
	}
	return false
}

// tagAt reports whether s, just after a '<', opens or closes one of our
// elements: an optional '/', spaces, a tag name in any case, then anything
// that cannot continue a name.
func tagAt(s string) bool {
	s = strings.TrimLeft(strings.TrimPrefix(strings.TrimLeft(s, " \t"), "/"), " \t")
	for _, tag := range envelopeTags {
		if len(s) >= len(tag) && strings.EqualFold(s[:len(tag)], tag) {
			rest := s[len(tag):]
			if rest == "" || !isNameByte(rest[0]) {
				return true
			}
		}
	}
	return false
}

func isNameByte(c byte) bool {
	return c == '-' || c == '_' || c == '.' || c == ':' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}
