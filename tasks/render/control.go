package render

import (
	"bytes"
	"fmt"

	"github.com/charmbracelet/x/ansi"
	"github.com/mattn/go-runewidth"
)

// widths measures characters as a terminal in a UTF-8 locale does, not
// depending on the environment's locale (runewidth's default reads LANG
// and would make ambiguous characters two columns wide under CJK locales).
var widths = &runewidth.Condition{EastAsianWidth: false}

// RuneWidth is the number of columns r takes on a terminal: 0 for
// combining marks. Readers that lay text out for a terminal (logs -f) use
// it to agree with the screen model.
func RuneWidth(r rune) int {
	return widths.RuneWidth(r)
}

// widthCache remembers the widths of the characters of the Basic
// Multilingual Plane a Screen has met, plus one (0: not looked up yet):
// runewidth's table search is the costliest step of drawing CJK text.
type widthCache [1 << 16]int8

func (c *widthCache) width(r rune) int {
	if r >= 1<<16 {
		return RuneWidth(r)
	}
	if w := c[r]; w != 0 {
		return int(w) - 1
	}
	w := RuneWidth(r)
	c[r] = int8(w + 1)
	return w
}

// count is the i-th parameter as a count: missing or 0 means 1.
func count(params ansi.Params, i int) int {
	n, _, _ := params.Param(i, 1)
	return max(n, 1)
}

// execute handles a C0 control.
func (s *Screen) execute(b byte) {
	switch b {
	case '\b':
		s.backspace()
	case '\t':
		s.tab()
	case '\n', '\v', '\f':
		s.lineFeed()
	case '\r':
		s.cx = 0
	}
}

// backspace moves the cursor left; at the start of a row continued from
// the one above, it goes back to that row's end, as tmux does.
func (s *Screen) backspace() {
	switch {
	case s.cx > 0:
		s.cx = min(s.cx, s.width) - 1
	case s.cy > 0 && s.rows[s.cy-1].wrapped:
		s.cy--
		s.cx = s.width - 1
	}
}

// tab moves the cursor to the next tab stop, recording a tab on the row
// when it moves over blank columns.
func (s *Screen) tab() {
	from := min(s.cx, s.width-1)
	to := from
	if to < s.width-1 {
		to++
		for to < s.width-1 && !s.tabs[to] {
			to++
		}
	}
	if to > from && s.cx < s.width {
		s.rows[s.cy].tab(from, to)
	}
	s.cx = to
}

// backTab moves the cursor to the n-th previous tab stop.
func (s *Screen) backTab(n int) {
	x := min(s.cx, s.width-1)
	for ; n > 0 && x > 0; n-- {
		x--
		for x > 0 && !s.tabs[x] {
			x--
		}
	}
	s.cx = x
}

// esc handles an escape sequence other than CSI and strings.
func (s *Screen) esc(cmd ansi.Cmd) {
	if cmd.Intermediate() != 0 {
		return // charset designations and the like: nothing to draw
	}
	switch cmd.Final() {
	case '7':
		s.saveCursor()
	case '8':
		s.restoreCursor()
	case 'D':
		s.lineFeed()
	case 'E':
		s.cx = 0
		s.lineFeed()
	case 'M':
		s.reverseIndex()
	case 'H':
		s.tabs[min(s.cx, s.width-1)] = true
	case 'c':
		s.clearToHistory()
		s.resetModes()
		s.cx, s.cy = 0, 0
	}
}

// reverseIndex moves the cursor up, scrolling the region down at its top.
func (s *Screen) reverseIndex() {
	switch {
	case s.cy == s.top:
		s.scrollDown(1)
	case s.cy > 0:
		s.cy--
	}
}

func (s *Screen) saveCursor() {
	s.saved = cursorState{cx: s.cx, cy: s.cy, origin: s.origin}
}

func (s *Screen) restoreCursor() {
	s.cx, s.cy, s.origin = min(s.saved.cx, s.width), min(s.saved.cy, s.height-1), s.saved.origin
}

// csi handles a control sequence.
func (s *Screen) csi(cmd ansi.Cmd, params ansi.Params) {
	if cmd.Intermediate() != 0 {
		return
	}
	switch cmd.Prefix() {
	case '?':
		s.privateMode(cmd.Final(), params)
		return
	case 0:
	default:
		return
	}
	switch cmd.Final() {
	case 'A':
		s.cursorUp(count(params, 0))
	case 'B', 'e':
		s.cursorDown(count(params, 0))
	case 'C', 'a':
		s.cx = min(s.cx+count(params, 0), s.width-1)
	case 'D':
		s.cx = max(min(s.cx, s.width)-count(params, 0), 0)
	case 'E':
		s.cursorDown(count(params, 0))
		s.cx = 0
	case 'F':
		s.cursorUp(count(params, 0))
		s.cx = 0
	case 'G', '`':
		s.cx = min(count(params, 0), s.width) - 1
	case 'H', 'f':
		s.moveTo(count(params, 0)-1, count(params, 1)-1)
	case 'd':
		s.moveTo(count(params, 0)-1, min(s.cx, s.width-1))
	// CHT (CSI I) is not there: tmux (3.3a, the oracle) ignores it, so the
	// pane shows the text after it where the cursor was.
	case 'Z':
		s.backTab(count(params, 0))
	case 'J':
		s.eraseDisplay(params)
	case 'K':
		s.eraseLine(params)
	case 'X':
		x := min(s.cx, s.width-1)
		s.rows[s.cy].blank(x, x+count(params, 0))
	case '@':
		s.rows[s.cy].insert(min(s.cx, s.width-1), count(params, 0))
	case 'P':
		s.rows[s.cy].remove(min(s.cx, s.width-1), count(params, 0))
	case 'L':
		s.insertLines(count(params, 0))
	case 'M':
		s.deleteLines(count(params, 0))
	case 'S':
		s.scrollUp(count(params, 0))
	case 'T':
		s.scrollDown(count(params, 0))
	case 'b':
		if s.last != 0 {
			// As tmux: repeat at most to the end of the row.
			for n := min(count(params, 0), s.width-min(s.cx, s.width)); n > 0; n-- {
				s.print(s.last)
			}
		}
	case 'g':
		s.clearTabs(params)
	case 'r':
		s.setRegion(params)
	case 's':
		s.saveCursor()
	case 'u':
		s.restoreCursor()
	}
}

// cursorUp moves up n rows, stopping at the scroll region's top if the
// cursor is inside it.
func (s *Screen) cursorUp(n int) {
	limit := 0
	if s.cy >= s.top {
		limit = s.top
	}
	s.cy = max(s.cy-n, limit)
	s.cx = min(s.cx, s.width-1)
}

// cursorDown moves down n rows, stopping at the scroll region's bottom if
// the cursor is inside it.
func (s *Screen) cursorDown(n int) {
	limit := s.height - 1
	if s.cy <= s.bottom {
		limit = s.bottom
	}
	s.cy = min(s.cy+n, limit)
	s.cx = min(s.cx, s.width-1)
}

// moveTo puts the cursor at row y, column x (from 0), relative to the
// scroll region in origin mode.
func (s *Screen) moveTo(y, x int) {
	lo, hi := 0, s.height-1
	if s.origin {
		lo, hi = s.top, s.bottom
		y += s.top
	}
	s.cy = min(max(y, lo), hi)
	s.cx = min(max(x, 0), s.width-1)
}

// eraseDisplay handles ED. Clearing the whole screen, or all of it from
// the top left, scrolls its text into the history first, as tmux does.
func (s *Screen) eraseDisplay(params ansi.Params) {
	mode, _, _ := params.Param(0, 0)
	x := min(s.cx, s.width)
	switch {
	case mode == 2 || mode == 0 && x == 0 && s.cy == 0:
		s.clearToHistory()
	case mode == 0:
		s.rows[s.cy].blank(x, s.width)
		for _, r := range s.rows[s.cy+1:] {
			r.clear()
		}
	case mode == 1:
		if s.alt == nil {
			s.redrawn = s.scrolled
		}
		for _, r := range s.rows[:s.cy] {
			r.clear()
		}
		s.rows[s.cy].blank(0, x+1)
	case mode == 3 && s.alt == nil:
		// tmux drops its history; the file keeps those lines (a log
		// that lost a build's output to a clear would be worse), but a
		// taller pane no longer pulls them back.
		s.history.forget()
	}
}

// eraseLine handles EL. As in tmux, erasing the whole row also ends its
// wrap into the next; erasing part of it does not.
func (s *Screen) eraseLine(params ansi.Params) {
	mode, _, _ := params.Param(0, 0)
	r := s.rows[s.cy]
	x := min(s.cx, s.width)
	switch {
	case mode == 2, mode == 0 && x == 0, mode == 1 && x >= s.width-1:
		r.clear()
	case mode == 0:
		r.blank(x, s.width)
	case mode == 1:
		r.blank(0, x+1)
	}
}

// insertLines inserts n blank rows at the cursor's row within the scroll
// region; rows pushed off its bottom are lost.
func (s *Screen) insertLines(n int) {
	if s.cy < s.top || s.cy > s.bottom {
		return
	}
	top := s.top
	s.top = s.cy
	s.scrollDown(n)
	s.top = top
	s.cx = 0
}

// deleteLines deletes n rows at the cursor's row within the scroll region,
// pulling blank rows in at its bottom; nothing goes to the history.
func (s *Screen) deleteLines(n int) {
	if s.cy < s.top || s.cy > s.bottom {
		return
	}
	n = min(n, s.bottom-s.cy+1)
	for range n {
		gone := s.rows[s.cy]
		copy(s.rows[s.cy:], s.rows[s.cy+1:s.bottom+1])
		gone.clear()
		s.rows[s.bottom] = gone
	}
	s.cx = 0
}

// clearTabs handles TBC: 0 clears the stop at the cursor, 3 all of them.
func (s *Screen) clearTabs(params ansi.Params) {
	switch mode, _, _ := params.Param(0, 0); mode {
	case 0:
		s.tabs[min(s.cx, s.width-1)] = false
	case 3:
		clear(s.tabs)
	}
}

// setRegion handles DECSTBM; an invalid region is ignored. The cursor goes
// home.
func (s *Screen) setRegion(params ansi.Params) {
	top, _, _ := params.Param(0, 1)
	bottom, _, _ := params.Param(1, s.height)
	top, bottom = max(top, 1)-1, min(max(bottom, 1), s.height)-1
	if top >= bottom {
		return
	}
	s.top, s.bottom = top, bottom
	s.moveTo(0, 0)
}

// privateMode handles DECSET and DECRST for the modes that change what is
// drawn: autowrap, origin and the alternate screen.
func (s *Screen) privateMode(final byte, params ansi.Params) {
	if final != 'h' && final != 'l' {
		return
	}
	on := final == 'h'
	params.ForEach(0, func(_, mode int, _ bool) {
		switch mode {
		case 7:
			if s.alt == nil {
				s.noWrap = !on
			}
		case 6:
			if s.alt == nil {
				s.origin = on
				s.moveTo(0, 0)
			}
		case 47, 1047, 1049:
			if on {
				s.enterAlt()
			} else {
				s.leaveAlt()
			}
		}
	})
}

// enterAlt puts the main screen aside for a full-screen program, which
// draws on a blank screen of its own without history.
func (s *Screen) enterAlt() {
	if s.alt != nil {
		return
	}
	s.alt = &altScreen{rows: s.rows, cursor: cursorState{cx: s.cx, cy: s.cy, origin: s.origin}}
	// The rows of the last alternate screen are used again: programs
	// switch screens often, and a 500×200 screen is 800 KB.
	s.rows, s.spare = s.spare[:0], nil
	for _, r := range s.rows[:cap(s.rows)] {
		if len(s.rows) == s.height || len(r.cells) != s.width {
			break
		}
		r.clear()
		s.rows = append(s.rows, r)
	}
	s.fillRows()
}

// leaveAlt brings the main screen back, at the pane's current size, and
// puts on it the note standing for the full-screen program's output and,
// if kept, the program's last screen.
func (s *Screen) leaveAlt() {
	if s.alt == nil {
		return
	}
	var last []byte
	if s.keepLast {
		for _, r := range s.rows[:textRows(s.rows)] {
			last = r.appendLine(last)
		}
	}
	a := s.alt
	s.alt = nil
	s.rows, s.spare = a.rows, s.rows
	s.cx, s.cy, s.origin = a.cursor.cx, a.cursor.cy, a.cursor.origin
	if len(s.rows) != s.height || len(s.rows[0].cells) != s.width {
		s.resizeMain()
		s.cx, s.cy = min(s.cx, s.width-1), min(s.cy, s.height-1)
	}
	s.note(fmt.Sprintf("[qtask: full-screen program output not kept (%s, %d KB)]", s.prog, (a.bytes+1023)/1024))
	for len(last) > 0 {
		line, rest, _ := bytes.Cut(last, []byte{'\n'})
		s.note(string(line))
		last = rest
	}
}
