package output

import (
	"bytes"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/qtask/qtask/tasks/render"
)

// liveLine is the line a Follower shows on a terminal below the output it
// wrote: the line being redrawn, shown as it is now. Any write through it
// first erases that line (carriage return, erase to the end of the line),
// so the text that replaces it, final at last, appears where it was, once.
// The line is cut to fit in fewer columns than the terminal has, tabs
// expanded, so it never wraps and the carriage return is back at its start.
type liveLine struct {
	w     io.Writer
	width int    // the terminal's columns; 0: never show a line
	shown []byte // the text on the terminal's last line; nil: none
}

// liveErase takes the cursor back to the start of its line and blanks it.
const liveErase = "\r\x1b[K"

// Write erases the shown line, if any, and writes p.
func (l *liveLine) Write(p []byte) (int, error) {
	if len(p) > 0 {
		if err := l.erase(); err != nil {
			return 0, err
		}
	}
	return l.w.Write(p)
}

func (l *liveLine) erase() error {
	if l.shown == nil {
		return nil
	}
	l.shown = nil
	_, err := io.WriteString(l.w, liveErase)
	return err
}

// show makes line, fit to the terminal and made harmless by a PrintFilter,
// the line shown; an empty line shows none.
func (l *liveLine) show(line []byte) error {
	fit := l.fit(line)
	if l.shown != nil && bytes.Equal(fit, l.shown) {
		return nil
	}
	if err := l.erase(); err != nil {
		return err
	}
	if len(fit) == 0 {
		return nil
	}
	var shown bytes.Buffer
	if _, err := NewPrintFilter(&shown, 0, -1).Write(fit); err != nil {
		return err
	}
	l.shown = fit
	_, err := l.w.Write(shown.Bytes())
	return err
}

// fit is line as it shows in fewer than l.width columns: tabs expanded to
// the terminal's stops, cut where the next character would reach the edge.
func (l *liveLine) fit(line []byte) []byte {
	var out []byte
	col := 0
	for _, r := range string(line) {
		w := render.RuneWidth(r)
		if r == '\t' {
			w = render.TabWidth - col%render.TabWidth
		}
		if col+w >= l.width {
			break
		}
		if r == '\t' {
			out = append(out, strings.Repeat(" ", w)...)
		} else {
			out = utf8.AppendRune(out, r)
		}
		col += w
	}
	return out
}
