package render

import (
	"bytes"
	"slices"
	"unicode/utf8"
)

// cellKind says what occupies one column of a row.
type cellKind uint8

const (
	cellBlank   cellKind = iota // never written, or erased
	cellChar                    // a character one or two columns wide
	cellWide                    // the right half of a two-column character
	cellTab                     // where a tab started; r holds the column it reached
	cellTabFill                 // a column a tab moved over
)

// cell is one column of a row: 8 bytes, so a 500×200 screen is 800 KB.
type cell struct {
	r    rune // the character, or for cellTab the column the tab reached
	kind cellKind
}

// maxCombining bounds the combining marks kept on one cell, so a stream of
// marks cannot grow a row without limit.
const maxCombining = 8

// row is one screen row. wrapped says the text went on into the next row
// by autowrap, so the two form one line of the file (as capture-pane -J
// joins them).
type row struct {
	cells []cell
	comb  map[int][]rune // combining marks by column; nil when none
	// hi bounds the columns ever written since the row was last cleared:
	// those from hi on are blank. Lines are mostly far shorter than a
	// wide pane, and this keeps clearing and measuring a row to its text.
	hi      int
	wrapped bool
	// hidden: a row of the screen a capture started on that is not the
	// task's (Seed); while nothing is written there it is never output.
	hidden bool
	// done is the start of the row's line (its text, then a newline
	// unless it wraps) that the file already has as final text: the row
	// was pulled back from the history (history.pull). While the row
	// still starts with it, only the rest is written.
	done []byte
}

func newRow(width int) *row { return &row{cells: make([]cell, width)} }

// clear blanks the whole row.
func (r *row) clear() {
	clear(r.cells[:r.hi])
	clear(r.comb) // keeps the map: rows are recycled as they scroll
	r.hi = 0
	r.wrapped = false
	r.hidden = false
	r.done = r.done[:0]
}

// blank erases columns [from, to), together with the halves of wide
// characters and tabs they cut through.
func (r *row) blank(from, to int) {
	from, to = max(from, 0), min(to, len(r.cells))
	if from >= to {
		return
	}
	if r.cells[from].kind == cellWide && from > 0 {
		from--
	}
	if to < len(r.cells) && r.cells[to].kind == cellWide {
		to++
	}
	clear(r.cells[from:to])
	r.dropComb(from, to)
}

// dropComb forgets the combining marks of columns [from, to).
func (r *row) dropComb(from, to int) {
	if len(r.comb) == 0 {
		return
	}
	for col := range r.comb {
		if col >= from && col < to {
			delete(r.comb, col)
		}
	}
}

// putASCII writes printable ASCII from col on; the caller has made sure it
// fits.
func (r *row) putASCII(col int, b []byte) {
	end := col + len(b)
	if r.cells[col].kind == cellWide {
		r.cells[col-1] = cell{}
	}
	if end < len(r.cells) && r.cells[end].kind == cellWide {
		r.cells[end] = cell{}
	}
	cells := r.cells[col:end]
	for i, c := range b {
		cells[i] = cell{r: rune(c), kind: cellChar}
	}
	r.hi = max(r.hi, end)
	r.dropComb(col, end)
}

// put writes a character of width w (1 or 2) at col; the caller has made
// sure it fits.
func (r *row) put(col int, ch rune, w int) {
	r.blank(col, col+w)
	r.cells[col] = cell{r: ch, kind: cellChar}
	r.hi = max(r.hi, col+w)
	if w == 2 {
		r.cells[col+1] = cell{kind: cellWide}
	}
}

// combine adds a combining mark to the character at col.
func (r *row) combine(col int, mark rune) {
	if col < 0 || col >= len(r.cells) {
		return
	}
	if r.cells[col].kind == cellWide && col > 0 {
		col--
	}
	if r.cells[col].kind != cellChar || len(r.comb[col]) >= maxCombining {
		return
	}
	if r.comb == nil {
		r.comb = make(map[int][]rune)
	}
	r.comb[col] = append(r.comb[col], mark)
}

// tab records a tab from col to stop; the columns between stay blank to
// anything that reads cells, but the row is written out with a tab while
// they are untouched. Only a tab that ends where a reader's would (the
// next multiple of TabWidth) is recorded: after `tabs -4`, or at the last
// column, a tab in the file would put the text after it elsewhere, so the
// columns it moved over are written as spaces.
func (r *row) tab(col, stop int) {
	if stop != readerTabStop(col) || r.cells[col].kind != cellBlank {
		return
	}
	for c := col + 1; c < stop; c++ {
		if r.cells[c].kind != cellBlank {
			return
		}
	}
	r.cells[col] = cell{r: rune(stop), kind: cellTab}
	r.hi = max(r.hi, stop)
	for c := col + 1; c < stop; c++ {
		r.cells[c].kind = cellTabFill
	}
}

// insert shifts columns from col right by n, blanking the gap; what is
// pushed past the edge is lost.
func (r *row) insert(col, n int) {
	w := len(r.cells)
	if col >= w {
		return
	}
	n = min(n, w-col)
	r.blank(w-n, w)
	r.blank(col, col) // split a wide character at col
	copy(r.cells[col+n:], r.cells[col:w-n])
	clear(r.cells[col : col+n])
	r.hi = min(r.hi+n, w)
	r.shiftComb(col, n)
	r.untab(col + n)
}

// untab turns the tabs from col on, which were moved, into blanks: a tab
// in the file must end where the reader's tab stop is, and a moved one
// need not.
func (r *row) untab(col int) {
	for c := col; c < r.hi; c++ {
		if r.cells[c].kind == cellTab {
			r.cells[c] = cell{}
		}
	}
}

// remove deletes n columns at col, shifting the rest left and blanking the
// end.
func (r *row) remove(col, n int) {
	w := len(r.cells)
	if col >= w {
		return
	}
	n = min(n, w-col)
	r.blank(col, col+n)
	copy(r.cells[col:], r.cells[col+n:])
	clear(r.cells[w-n:])
	r.shiftComb(col+n, -n)
	r.untab(col)
}

// shiftComb moves the combining marks at or after col by d columns.
func (r *row) shiftComb(col, d int) {
	if r.comb == nil {
		return
	}
	moved := make(map[int][]rune, len(r.comb))
	for c, m := range r.comb {
		if c >= col {
			c += d
		}
		if c >= 0 && c < len(r.cells) && r.cells[c].kind == cellChar {
			moved[c] = m
		}
	}
	r.comb = moved
}

// used is one past the last column holding text or a tab.
func (r *row) used() int {
	for n := r.hi; n > 0; n-- {
		if r.cells[n-1].kind != cellBlank {
			return n
		}
	}
	return 0
}

// textEnd is one past the last column of the row's text: trailing blanks,
// spaces and tabs are left out unless the row wraps into the next, where
// they are part of the line.
func (r *row) textEnd() int {
	if r.wrapped {
		// As tmux's capture-pane -J: every column written in a row that
		// goes on in the next, erased ones too.
		return r.hi
	}
	end := r.used()
	for end > 0 {
		c := r.cells[end-1]
		if c.kind == cellChar && (c.r != ' ' || len(r.comb[end-1]) > 0) || c.kind == cellWide {
			break
		}
		end--
	}
	return end
}

// appendText appends the row's text to dst: blank columns within it as
// spaces, an untouched tab as a tab, no trailing blanks. It never writes
// control characters other than the tab.
func (r *row) appendText(dst []byte) []byte {
	end := r.textEnd()
	plain := len(r.comb) == 0
	for c := 0; c < end; c++ {
		if plain {
			// The common case, a run of ASCII, a byte a cell.
			n := c
			dst = slices.Grow(dst, end-c)
			for _, ce := range r.cells[c:end] {
				if ce.kind != cellChar || ce.r >= utf8.RuneSelf {
					break
				}
				dst = append(dst, byte(ce.r))
				n++
			}
			if n > c {
				c = n - 1
				continue
			}
		}
		ce := r.cells[c]
		switch ce.kind {
		case cellBlank, cellTabFill:
			dst = append(dst, ' ')
		case cellChar:
			if ce.r < utf8.RuneSelf {
				dst = append(dst, byte(ce.r))
			} else {
				dst = utf8.AppendRune(dst, ce.r)
			}
			if r.comb != nil {
				for _, m := range r.comb[c] {
					dst = utf8.AppendRune(dst, m)
				}
			}
		case cellTab:
			if stop := int(ce.r); r.tabIntact(c, stop) {
				dst = append(dst, '\t')
				c = stop - 1
			} else {
				dst = append(dst, ' ')
			}
		}
	}
	return dst
}

// appendLine appends what the file does not have yet of the row's line:
// its text and, unless the row wraps into the next one, a newline; none of
// a row that is not the task's (hidden), only what follows done of a row
// pulled back from the history.
func (r *row) appendLine(dst []byte) []byte {
	if r.skipped() {
		return dst
	}
	start := len(dst)
	dst = r.appendLineText(dst)
	return r.dropDone(dst, start)
}

// skipped reports whether the row is one of the screen a capture started
// on that is not the task's, never written to: it has no line in the file.
func (r *row) skipped() bool { return r.hidden && r.hi == 0 }

// appendLineText appends the row's whole line text: its text and, unless
// the row wraps into the next one, a newline.
func (r *row) appendLineText(dst []byte) []byte {
	dst = r.appendText(dst)
	if !r.wrapped {
		dst = append(dst, '\n')
	}
	return dst
}

// dropDone removes from the row's line text, dst[start:], the part the
// file already has (done), if the line still starts with it.
func (r *row) dropDone(dst []byte, start int) []byte {
	if len(r.done) == 0 || !bytes.HasPrefix(dst[start:], r.done) {
		return dst
	}
	return append(dst[:start], dst[start+len(r.done):]...)
}

// readerTabStop is where a reader of the file (a pager, an editor, a
// terminal with default tab stops) ends a tab that starts at col.
func readerTabStop(col int) int { return (col/TabWidth + 1) * TabWidth }

// tabIntact reports whether nothing has been written over the columns the
// tab at col moved over since.
func (r *row) tabIntact(col, stop int) bool {
	if stop <= col || stop > len(r.cells) {
		return false
	}
	for c := col + 1; c < stop; c++ {
		if r.cells[c].kind != cellTabFill {
			return false
		}
	}
	return true
}
