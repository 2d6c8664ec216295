package render

import "bytes"

// Resizing follows tmux 3.3a (screen_resize_cursor, grid_reflow): the height
// changes first, then a new width reflows the main screen's lines — wrapped
// rows are joined and split again at the new width — and the cursor keeps
// its place in its line. A taller pane pulls the rows that scrolled off
// back onto the top of the screen, as tmux does (history.go). Where tmux
// reflows its whole history (a new width), the model reflows the screen
// only: the rows that scrolled off before are final, in the file already
// with the same text, and a wider pane adds blank rows at the bottom where
// tmux brings history rows down at the top.

// Resize changes the pane's size to width×height (clamped as in New). Bytes
// written afterwards are drawn at the new size, and the live region is
// reflowed now, as tmux reflows the pane.
func (s *Screen) Resize(width, height int) {
	width, height = clampSize(width, height)
	if width == s.width && height == s.height {
		return
	}
	if width != s.width {
		// As tmux: tab stops go back to every eighth column.
		s.tabs = defaultTabs(width)
	}
	heightChanged := height != s.height
	s.width, s.height = width, height
	if heightChanged {
		s.top, s.bottom = 0, height-1
	}
	if s.alt != nil {
		// The main screen is reflowed when the program leaves the
		// alternate screen, as tmux does.
		s.resizeAlt()
		return
	}
	s.resizeMain()
}

// clampSize bounds a pane size to 1..maxWidth × 1..maxHeight; 0×0 is 80×24.
func clampSize(width, height int) (int, int) {
	if width == 0 && height == 0 {
		return 80, 24
	}
	return min(max(width, 1), maxWidth), min(max(height, 1), maxHeight)
}

// resizeMain brings the main screen's rows, whatever their size, to the
// screen's size: first the height (shorter: rows below the cursor go
// first, then rows at the top scroll off as final lines; taller: rows that
// scrolled off come back at the top, the cursor moving down with them),
// then the width (a reflow).
func (s *Screen) resizeMain() {
	if n := len(s.rows); n > s.height {
		below := min(n-1-s.cy, n-s.height)
		s.rows = s.rows[:n-below]
		if off := len(s.rows) - s.height; off > 0 {
			for _, r := range s.rows[:off] {
				s.final(r)
			}
			s.scrolled += int64(off)
			s.rows = s.rows[off:]
			s.cy -= off
		}
	} else if n < s.height {
		back := s.history.pull(s.height-n, len(s.rows[0].cells), &s.widths)
		s.rows = append(back, s.rows...)
		s.cy += len(back)
		s.scrolled -= int64(len(back))
	}
	if len(s.rows[0].cells) != s.width {
		s.reflow()
	}
	s.fillRows()
	if s.redrawn >= 0 {
		// Rows moved: take nothing on screen as done being redrawn.
		s.redrawn = s.scrolled
	}
}

// fillRows adds blank rows at the bottom up to the screen's height.
func (s *Screen) fillRows() {
	for len(s.rows) < s.height {
		s.rows = append(s.rows, newRow(s.width))
	}
}

// resizeAlt resizes the alternate screen, which has no history and is not
// reflowed: rows are cut or extended, rows below the cursor go first, then
// rows at the top.
func (s *Screen) resizeAlt() {
	if n := len(s.rows); n > s.height {
		below := min(n-1-s.cy, n-s.height)
		s.rows = s.rows[:n-below]
		if off := len(s.rows) - s.height; off > 0 {
			s.rows = s.rows[off:]
			s.cy = max(s.cy-off, 0)
		}
	}
	for i, r := range s.rows {
		s.rows[i] = r.cut(s.width)
	}
	s.fillRows()
	s.cx = min(s.cx, s.width-1)
}

// cut returns the row at width w, its text kept as far as it fits.
func (r *row) cut(w int) *row {
	if len(r.cells) == w {
		return r
	}
	n := newRow(w)
	keep := min(r.used(), w)
	if keep < len(r.cells) && r.cells[keep].kind == cellWide {
		keep-- // half a wide character does not fit
	}
	copy(n.cells, r.cells[:keep])
	n.hi = keep
	for col, m := range r.comb {
		if col < keep {
			if n.comb == nil {
				n.comb = make(map[int][]rune)
			}
			n.comb[col] = m
		}
	}
	n.wrapped = r.wrapped && keep == w
	return n
}

// glyph is one character of a line being reflowed, with the columns it
// takes.
type glyph struct {
	c     cell
	width int
	comb  []rune
}

// reflow lays the main screen's lines out again at the screen's width, as
// tmux's grid_reflow does: each line (rows joined by autowrap) is filled
// into rows greedily, a character that does not fit starting the next
// row. Rows beyond the height scroll off the top as final lines.
func (s *Screen) reflow() {
	var (
		out    []*row
		glyphs []glyph
		done   []byte
		cx, cy = s.cx, s.cy
	)
	for i := 0; i < len(s.rows); {
		j, end := s.lineRows(i)
		var cursorAt int
		glyphs, cursorAt = s.joinLine(glyphs[:0], i, end)
		first := len(out)
		out = appendLaidOut(out, glyphs, s.width)
		// A seeded row that is not the task's stays one (Seed).
		out[first].hidden = j == i && s.rows[i].hidden && s.rows[i].hi == 0
		out[len(out)-1].wrapped = s.rows[end].wrapped
		done = s.lineDone(done[:0], i, end)
		markDone(out[first:], done)
		if cursorAt != -1 {
			cx, cy = unwrapPosition(out[first:], cursorAt)
			cy += first
		}
		if end < j {
			if j == s.cy {
				cx, cy = 0, len(out)
			}
			out = append(out, newRow(s.width))
			done = s.lineDone(done[:0], j, j)
			markDone(out[len(out)-1:], done)
		}
		i = j + 1
	}
	s.rows, s.cx, s.cy = s.scrollExcess(out, cx, cy)
}

// lineDone appends to dst the start of the line in rows i..end that the
// file already has: the done text of its first rows, as long as each still
// reads as it did when it was pulled back from the history.
func (s *Screen) lineDone(dst []byte, i, end int) []byte {
	for k := i; k <= end; k++ {
		r := s.rows[k]
		if len(r.done) == 0 {
			break
		}
		start := len(dst)
		dst = r.appendLineText(dst)
		if !bytes.Equal(dst[start:], r.done) {
			return dst[:start]
		}
	}
	return dst
}

// markDone gives the rows of a line laid out again the parts of done, the
// start of the line that the file already has, that they hold.
func markDone(rows []*row, done []byte) {
	var text []byte
	for _, r := range rows {
		if len(done) == 0 {
			return
		}
		text = r.appendLineText(text[:0])
		switch {
		case bytes.HasPrefix(done, text):
			r.done = append(r.done[:0], text...)
			done = done[len(text):]
		case bytes.HasPrefix(text, done):
			r.done = append(r.done[:0], done...)
			return
		default:
			return
		}
	}
}

// lineRows finds the line that starts at row i: rows i..j, all but the last
// wrapped. Its text is in rows i..end: an empty last row of a wrapped line
// stays a row of its own (end is then j-1), the row above still wrapping,
// as tmux leaves it.
func (s *Screen) lineRows(i int) (j, end int) {
	j = i
	for j < len(s.rows)-1 && s.rows[j].wrapped {
		j++
	}
	if j > i && s.rows[j].hi == 0 {
		return j, j - 1
	}
	return j, j
}

// joinLine appends to dst the glyphs of rows i..end, one line, and says
// where the cursor is in it: its offset in columns, -2 past the text of
// its row, or -1 if the cursor is not on these rows.
func (s *Screen) joinLine(dst []glyph, i, end int) ([]glyph, int) {
	cursorAt, offset := -1, 0
	for k := i; k <= end; k++ {
		r := s.rows[k]
		used := r.hi // tmux's cellused: erased columns count
		if k == s.cy {
			if s.cx < used {
				cursorAt = offset + s.cx
			} else {
				cursorAt = -2
			}
		}
		dst = r.appendGlyphs(dst, used)
		offset += used
	}
	return dst, cursorAt
}

// appendLaidOut fills a line's glyphs into new rows of width columns,
// appended to out, greedily: a character that does not fit wraps to the
// next row, one wider than the row is dropped. There is always at least one
// row, the line's last one not yet marked wrapped.
func appendLaidOut(out []*row, glyphs []glyph, width int) []*row {
	cur, col := newRow(width), 0
	out = append(out, cur)
	for _, g := range glyphs {
		if g.width > width {
			continue // a wide character in a one-column pane
		}
		if col+g.width > width {
			cur.wrapped = true
			cur, col = newRow(width), 0
			out = append(out, cur)
		}
		cur.place(col, g)
		col += g.width
	}
	return out
}

// scrollExcess ends the rows above the screen's height as final lines
// (scrolled off the top) and moves the cursor up with the rest; a cursor
// that was on a row scrolled off goes to the top left.
func (s *Screen) scrollExcess(out []*row, cx, cy int) ([]*row, int, int) {
	off := len(out) - s.height
	if off <= 0 {
		return out, cx, cy
	}
	for _, r := range out[:off] {
		s.final(r)
	}
	s.scrolled += int64(off)
	cy -= off
	if cy < 0 {
		cx, cy = 0, 0
	}
	return out[off:], cx, cy
}

// unwrapPosition finds the row and column of offset (-2: the end) in a
// line laid out in rows, as tmux's grid_unwrap_position.
func unwrapPosition(rows []*row, offset int) (x, y int) {
	for y < len(rows)-1 && rows[y].wrapped {
		used := rows[y].hi
		if offset >= 0 && offset < used {
			break
		}
		if offset >= 0 {
			offset -= used
		}
		y++
	}
	if offset < 0 {
		offset = rows[y].hi
	}
	return offset, y
}

// appendGlyphs appends the characters of the row's first n columns.
func (r *row) appendGlyphs(dst []glyph, n int) []glyph {
	for c := 0; c < n; c++ {
		ce := r.cells[c]
		g := glyph{c: ce, width: 1}
		switch ce.kind {
		case cellWide:
			continue
		case cellChar:
			if c+1 < len(r.cells) && r.cells[c+1].kind == cellWide {
				g.width = 2
			}
			g.comb = r.comb[c]
		case cellTab:
			g.c.r -= rune(c) // the tab's length, until it is placed
		}
		dst = append(dst, g)
	}
	return dst
}

// place puts a glyph at col; the caller has made sure it fits.
func (r *row) place(col int, g glyph) {
	c := g.c
	if c.kind == cellTab {
		// A tab stays one only where a reader's tab stop ends it.
		if stop := col + int(c.r); stop == readerTabStop(col) {
			c.r = rune(stop)
		} else {
			c = cell{}
		}
	}
	r.cells[col] = c
	if g.width == 2 {
		r.cells[col+1] = cell{kind: cellWide}
	}
	if len(g.comb) > 0 {
		if r.comb == nil {
			r.comb = make(map[int][]rune)
		}
		r.comb[col] = g.comb
	}
	r.hi = max(r.hi, col+g.width) // as tmux counts cells used, blank or not
}
