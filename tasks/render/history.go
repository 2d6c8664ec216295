package render

import "bytes"

// maxPull is how many rows a taller pane can pull back at most: it grows
// by fewer rows than maxHeight.
const maxPull = maxHeight - 1

// history is the end of the pane's history as tmux keeps it, for one thing
// only: when the pane grows taller, tmux 3.3a (screen_resize_y) pulls the
// rows that scrolled into its history back onto the top of the screen,
// and the cursor moves down with them, so a program that then moves the
// cursor up or to a row works on those rows. The rows are final in the
// file already; the model keeps their text (a few KB), not their cells,
// and makes rows of it again when they come back.
type history struct {
	ring  []pushedRow
	next  int // the ring slot the next row goes to
	n     int // rows that can be pulled back, the newest n of the ring
	width int // the width of the rows in the ring
}

// pushedRow is a row that went into the history: its line text as the
// file has it (a newline at the end unless it wraps into the next row),
// or hidden, a row that was not the task's and never written.
type pushedRow struct {
	text   []byte
	hidden bool
}

// push keeps the text of a row of the given width that scrolled off the
// screen.
func (h *history) push(text []byte, hidden bool, width int) {
	if width != h.width {
		h.forget()
		h.width = width
	}
	if h.next == len(h.ring) {
		h.ring = append(h.ring, pushedRow{}) // until there are maxPull
	}
	e := &h.ring[h.next]
	e.text, e.hidden = append(e.text[:0], text...), hidden
	h.next = (h.next + 1) % maxPull
	h.n = min(h.n+1, maxPull)
}

// forget makes the rows pushed so far unavailable, as tmux's full clear
// and clear-history do (hscrolled = 0): a taller pane then adds blank rows.
func (h *history) forget() { h.n = 0 }

// pull takes back up to n of the newest rows, oldest first, onto a screen
// whose rows are width columns wide; the file already has their text, so
// they write nothing until they change (row.done). Rows pushed at another
// width are not pulled back: tmux reflowed them with the screen, the model
// did not.
func (h *history) pull(n, width int, widths *widthCache) []*row {
	if width != h.width {
		h.forget()
	}
	n = min(n, h.n)
	rows := make([]*row, n)
	for i := range rows {
		slot := (h.next - n + i + 2*maxPull) % maxPull
		rows[i] = rowOfText(h.ring[slot], width, widths)
	}
	h.n -= n
	h.next = (h.next - n + maxPull) % maxPull
	return rows
}

// rowOfText makes the row whose line text e holds again: characters in
// their columns, a tab as a tab to the next reader's stop (the only kind
// a row's text holds), combining marks on their characters.
func rowOfText(e pushedRow, width int, widths *widthCache) *row {
	r := newRow(width)
	r.hidden = e.hidden
	text, ended := bytes.CutSuffix(e.text, []byte{'\n'})
	r.wrapped = !ended && !e.hidden
	col := 0
	for _, ch := range string(text) {
		w := widths.width(ch)
		switch {
		case ch == '\t':
			stop := min(readerTabStop(col), width)
			r.tab(col, stop)
			col = stop
		case w == 0:
			r.combine(col-1, ch)
		case col+w <= width:
			r.put(col, ch, w)
			col += w
		}
	}
	r.done = append(r.done[:0], e.text...)
	return r
}
