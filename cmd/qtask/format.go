package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// displayCommand renders user text for one terminal cell row: control
// characters (which could move the cursor or recolour the user's terminal)
// become visible escapes, newlines become "⏎", and text longer than width
// runes is cut there and marked with a trailing "…".
func displayCommand(s string, width int) string {
	if len(s) <= width && plainASCII(s) {
		return s // the common case, and `ls` renders thousands of cells
	}
	var b strings.Builder
	n := 0
	for _, r := range s {
		if n >= width {
			b.WriteString("…")
			break
		}
		switch {
		case r == '\n':
			b.WriteString("⏎")
		case r == '\t':
			b.WriteByte(' ')
		case r == utf8.RuneError, terminalControl(r):
			fmt.Fprintf(&b, "\\u%04x", r)
		default:
			b.WriteRune(r)
		}
		n++
	}
	return b.String()
}

// plainASCII reports whether s is printable ASCII only, which
// displayCommand shows as it is.
func plainASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < ' ' || s[i] >= 0x7f {
			return false
		}
	}
	return true
}

// terminalControl reports whether a terminal may act on r rather than
// show it: C0 and C1 controls, DEL, and the bidi controls that reorder
// what follows.
func terminalControl(r rune) bool {
	return unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r)
}

// writeJSON prints v as indented JSON, laid out as json.MarshalIndent(v,
// "", "  ") lays it out. encoding/json escapes C0 controls but leaves C1
// and bidi controls raw, which a terminal may act on; they can only occur
// inside strings, where \uXXXX means the same to a parser.
func writeJSON(w io.Writer, v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	// Indented, the compact form grows by about half.
	out := appendIndented(make([]byte, 0, len(data)*3/2), data, 0)
	_, err = w.Write(append(out, '\n'))
	return err
}

// writeJSONList prints list exactly as writeJSON does, one element at a
// time, each encoded (compact, as json.Marshal would) by appendElem: encoded
// as one value, a thousand tasks grew a buffer of megabytes (and woke the
// garbage collector) for output that streams. An element that fails to
// encode ends the output there, where writeJSON would print nothing; a
// task never fails to.
func writeJSONList[T any](w io.Writer, list []T, appendElem func([]byte, T) ([]byte, error)) error {
	if len(list) == 0 {
		return writeJSON(w, list) // [] or null
	}
	out := bufio.NewWriterSize(w, 64<<10)
	var compact []byte
	line := []byte("[\n  ")
	for i, v := range list {
		var err error
		if compact, err = appendElem(compact[:0], v); err != nil {
			return err
		}
		line = appendIndented(line, compact, 1)
		if i < len(list)-1 {
			line = append(line, ",\n  "...)
		} else {
			line = append(line, "\n]\n"...)
		}
		if _, err := out.Write(line); err != nil {
			return err
		}
		line = line[:0]
	}
	return out.Flush()
}

// appendIndented appends data, compact JSON from json.Marshal, to out
// indented as json.Indent(…, "", "  ") would, with terminal controls
// escaped (see writeJSON). It is one pass that trusts its input, where
// json.Indent runs its validating scanner over every byte: that was half of
// what `ls --json` of a thousand tasks spent encoding. depth is how deep
// data sits in what out holds.
func appendIndented(out, data []byte, depth int) []byte {
	newline := func() {
		out = append(out, '\n')
		for range depth {
			out = append(out, "  "...)
		}
	}
	for i := 0; i < len(data); i++ {
		switch c := data[i]; c {
		case '"':
			end := i + 1
			for ; data[end] != '"'; end++ {
				if data[end] == '\\' {
					end++ // an escaped quote or backslash
				}
			}
			out = appendTerminalSafe(out, data[i:end+1])
			i = end
		case '{', '[':
			if i+1 < len(data) && (data[i+1] == '}' || data[i+1] == ']') {
				out = append(out, c, data[i+1]) // empty: {} or []
				i++
				continue
			}
			out = append(out, c)
			depth++
			newline()
		case '}', ']':
			depth--
			newline()
			out = append(out, c)
		case ',':
			out = append(out, c)
			newline()
		case ':':
			out = append(out, ':', ' ')
		default:
			out = append(out, c)
		}
	}
	return out
}

// appendTerminalSafe appends the JSON text data to out with every terminal
// control rune (see writeJSON) as a \uXXXX escape. Everything between them
// is copied in runs: `ls --json` prints thousands of tasks.
func appendTerminalSafe(out, data []byte) []byte {
	done := 0
	for i := 0; i < len(data); {
		if data[i] < utf8.RuneSelf {
			i++
			continue
		}
		r, size := utf8.DecodeRune(data[i:])
		if terminalControl(r) {
			out = fmt.Appendf(append(out, data[done:i]...), "\\u%04x", r)
			done = i + size
		}
		i += size
	}
	return append(out, data[done:]...)
}

// displayValue renders a value read from disk (an id, a path, a pane id)
// with the same escaping as displayCommand, but whole: a path cut short
// could not be copied. Records are checked on read, yet what reaches the
// terminal is escaped here whatever a record says.
func displayValue(s string) string { return displayCommand(s, math.MaxInt) }

// printWarnings reports what a command skipped or could not do but carried
// on without, one escaped line each, bounded like an error.
func printWarnings(w io.Writer, warnings []string) {
	for _, msg := range warnings {
		fmt.Fprintf(w, "qtask: warning: %s\n", displayCommand(msg, maxErrorWidth))
	}
}

// formatRuntime is a compact duration: 850ms, 4.2s, 3m07s, 2h05m.
func formatRuntime(d time.Duration) string {
	switch {
	case d < time.Second:
		return fmt.Sprintf("%dms", d.Milliseconds())
	case d < time.Minute:
		// Truncate, not round: 59.97s must not read "60.0s".
		return fmt.Sprintf("%.1fs", d.Truncate(100*time.Millisecond).Seconds())
	case d < time.Hour:
		return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
	default:
		return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
	}
}
