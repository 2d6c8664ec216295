package render

// Resizing follows tmux 3.3a (screen_resize_cursor, grid_reflow): the height
// changes first, then a new width reflows the main screen's lines — wrapped
// rows are joined and split again at the new width — and the cursor keeps
// its place in its line. Where tmux pulls lines back from its history (a
// taller or wider pane), the model adds blank rows at the bottom instead:
// lines that scrolled off are final, already in the file, and their text
// is the same either way.

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
// screen's size: first the height (rows below the cursor go first, then
// rows at the top scroll off as final lines), then the width (a reflow).
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
		out      []*row
		glyphs   []glyph
		cur      *row
		col      int
		cursorAt = -1 // the cursor's offset in its line, in columns; -2: its end
		curLine  = -1 // index in out of the first row of the cursor's line
		cx, cy   = s.cx, s.cy
	)
	newLine := func() {
		cur = newRow(s.width)
		col = 0
		out = append(out, cur)
	}
	for i := 0; i < len(s.rows); {
		// One line: rows i..j, all but the last wrapped.
		j := i
		for j < len(s.rows)-1 && s.rows[j].wrapped {
			j++
		}
		// An empty last row of a wrapped line stays a row of its own, the
		// row above still wrapping (as tmux leaves it).
		trailingEmpty := j > i && s.rows[j].hi == 0
		end := j
		if trailingEmpty {
			end = j - 1
		}
		glyphs = glyphs[:0]
		offset := 0
		for k := i; k <= end; k++ {
			r := s.rows[k]
			used := r.hi // tmux's cellused: erased columns count
			if k == s.cy {
				curLine = len(out)
				if s.cx < used {
					cursorAt = offset + s.cx
				} else {
					cursorAt = -2
				}
			}
			glyphs = r.appendGlyphs(glyphs, used)
			offset += used
		}
		newLine()
		first := len(out) - 1
		// A seeded row that is not the task's stays one (Seed).
		cur.hidden = j == i && s.rows[i].hidden && s.rows[i].hi == 0
		for _, g := range glyphs {
			if g.width > s.width {
				continue // a wide character in a one-column pane
			}
			if col+g.width > s.width {
				cur.wrapped = true
				newLine()
			}
			cur.place(col, g)
			col += g.width
		}
		cur.wrapped = s.rows[end].wrapped
		if curLine == first && cursorAt != -1 {
			cx, cy = unwrapPosition(out[first:], cursorAt)
			cy += first
			cursorAt = -1
		}
		if trailingEmpty {
			if j == s.cy {
				cx, cy = 0, len(out)
			}
			newLine()
		}
		i = j + 1
	}
	if off := len(out) - s.height; off > 0 {
		for _, r := range out[:off] {
			s.final(r)
		}
		s.scrolled += int64(off)
		out = out[off:]
		cy -= off
		if cy < 0 {
			cx, cy = 0, 0
		}
	}
	s.rows, s.cx, s.cy = out, cx, cy
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
		if stop := col + int(c.r); stop == (col/TabWidth+1)*TabWidth {
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
