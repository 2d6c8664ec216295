// Package render turns the bytes a program wrote to a terminal into the
// text a person watching the pane saw, as tmux itself renders it
// (capture-pane -J -S -): a model of the pane's rows applies carriage
// returns, cursor moves, erases, scroll regions and autowrap, so progress
// bars, spinners and status lines end as their last frame instead of one
// line per frame.
//
// A Screen splits its text in two. Final lines are rows that scrolled off
// the top of the pane: nothing can change them any more, so they are
// written out as they go. The live region is the pane's rows: AppendLive
// gives its current text, which the caller shows after the final lines and
// replaces as it changes. Close makes the live region final.
//
// Escape sequences are parsed by github.com/charmbracelet/x/ansi's parser;
// the screen model is ours. Printable text, the bulk of any stream, takes a
// fast path that never reaches the parser, and so do C0 controls and plain
// control sequences (plainCSI), a progress bar's few bytes a frame. Resize
// follows the pane's size as tmux does (resize.go).
package render

import (
	"fmt"
	"io"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/ansi/parser"
)

// Limits on the pane size, which bound a Screen's memory: two screens of
// maxWidth×maxHeight cells of 8 bytes are 16 MB at most, and panes are far
// smaller in practice (500×200 is 800 KB).
const (
	maxWidth  = 1000
	maxHeight = 1000
	// outFlush is the size at which final lines are handed to the writer
	// in the middle of a Write.
	outFlush = 64 << 10
	// TabWidth is the distance between a terminal's default tab stops.
	TabWidth = 8
)

// Options configures a Screen.
type Options struct {
	// Width and Height are the pane's size in cells; out-of-range values
	// are clamped to 1..1000 (0 means 80×24).
	Width, Height int
	// Program names the task's program in the note that stands for a
	// full-screen program's output; empty means "program".
	Program string
	// KeepLastScreen keeps a full-screen program's last screen, after
	// the note, when it leaves the alternate screen (or the stream ends).
	KeepLastScreen bool
}

// Screen is the terminal model. It is not safe for concurrent use.
type Screen struct {
	w      io.Writer
	err    error
	out    []byte // final text not yet written to w
	p      *ansi.Parser
	width  int
	height int
	prog   string
	// keepLast: see Options.KeepLastScreen.
	keepLast bool

	rows   []*row
	cx, cy int  // cursor; cx == width means a wrap is pending
	top    int  // scroll region's first row
	bottom int  // scroll region's last row
	origin bool // DECOM: rows count from the scroll region's top
	noWrap bool // DECAWM reset: text stops at the last column
	saved  cursorState
	tabs   []bool // tab stops by column
	last   rune   // last character printed, for REP
	carry  []byte // start of a rune split across Writes
	alt    *altScreen
	spare  []*row // the last alternate screen's rows, to be used again
	params [plainParams]ansi.Param
	bin    binaryState
	widths widthCache
	// history: the rows that scrolled off, for a pane that grows taller.
	history history
	// scrolled counts rows gone off the top, so that scrolled+row names a
	// line for good; redrawn is the line the program last went back up to
	// (-1: none), above which it is taken to be done redrawing.
	scrolled int64
	redrawn  int64
}

// cursorState is what DECSC saves and DECRC restores.
type cursorState struct {
	cx, cy int
	origin bool
}

// altScreen is the main screen put aside while a full-screen program runs
// on the alternate screen, and how much that program wrote.
type altScreen struct {
	rows   []*row
	cursor cursorState
	bytes  int64
}

// New returns a Screen writing final lines to w; it never closes w.
func New(w io.Writer, opts Options) *Screen {
	width, height := clampSize(opts.Width, opts.Height)
	prog := opts.Program
	if prog == "" {
		prog = "program"
	}
	s := &Screen{w: w, width: width, height: height, prog: prog, keepLast: opts.KeepLastScreen, out: make([]byte, 0, outFlush+4*maxWidth), redrawn: -1}
	s.rows = make([]*row, height)
	for i := range s.rows {
		s.rows[i] = newRow(width)
	}
	s.resetModes()
	s.p = ansi.NewParser()
	// String payloads (titles, clipboard, images) are skipped before they
	// reach the parser, so its data buffer is never used.
	s.p.SetDataSize(1)
	s.p.SetHandler(ansi.Handler{
		Execute:   func(b byte) { y := s.cy; s.execute(b); s.movedUp(y) },
		HandleCsi: func(cmd ansi.Cmd, params ansi.Params) { y := s.cy; s.csi(cmd, params); s.movedUp(y) },
		HandleEsc: func(cmd ansi.Cmd) { y := s.cy; s.esc(cmd); s.movedUp(y) },
	})
	return s
}

// Seed starts the model on what a pane already shows, for a capture that
// begins after its program has (an adopted pane): rows are the screen's
// rows as plain text, the first hidden of them not the task's (the prompt
// and command line before its output), kept blank and never output unless
// something is written there; the cursor goes to column cx of row cy. When
// a full-screen program has the pane (alternate), the model starts in the
// alternate screen instead, whose rows are never output.
func (s *Screen) Seed(rows []string, hidden, cx, cy int, alternate bool) {
	if alternate {
		s.feed([]byte("\x1b[?1049h"))
		return
	}
	for i, text := range rows[:min(len(rows), s.height)] {
		if i < hidden {
			s.rows[i].hidden = true
			continue
		}
		s.cx, s.cy = 0, i
		s.feed([]byte(text))
	}
	s.cx, s.cy = min(max(cx, 0), s.width-1), min(max(cy, 0), s.height-1)
}

// resetModes sets the scroll region, modes and tab stops to their defaults.
func (s *Screen) resetModes() {
	s.top, s.bottom = 0, s.height-1
	s.origin, s.noWrap = false, false
	s.tabs = defaultTabs(s.width)
	s.saved = cursorState{}
}

// defaultTabs is a terminal's tab stops for a width: every TabWidth columns.
func defaultTabs(width int) []bool {
	tabs := make([]bool, width)
	for c := TabWidth; c < width; c += TabWidth {
		tabs[c] = true
	}
	return tabs
}

// Write consumes p, which may be any piece of the stream. It always
// consumes all of p. Final lines are collected and handed to the writer in
// large pieces (or at Flush), so that a stream arriving in small pieces is
// written in few calls. An error means the writer failed, and every later
// call returns that error.
func (s *Screen) Write(p []byte) (int, error) {
	if s.err != nil {
		return 0, s.err
	}
	s.feed(p)
	return len(p), s.err
}

// Flush hands the final lines collected so far to the writer.
func (s *Screen) Flush() error {
	s.flushOut()
	return s.err
}

// Note puts a line of qtask's own (a remark that output was lost) on the
// screen at the cursor, on a line of its own, as if the program had
// printed it there. Whatever was pending (binary data, a split rune, an
// unfinished escape sequence) ends first, as at Close: the bytes that would
// have completed it are gone.
func (s *Screen) Note(text string) {
	s.endBinary()
	s.p.Reset()
	if s.alt != nil {
		return // the alternate screen's note will say what was not kept
	}
	s.note(text)
}

// AppendLive appends the live region's text to dst: the pane's rows from
// the top down to the last one holding text, each ended by a newline
// unless it wraps into the next. A full-screen program's screen is not
// shown; the main screen under it is.
//
// It also returns how many of the bytes it appended are settled: the
// whole lines above the cursor and above the row the program last went
// back up to. A program that redraws (a progress bar, a live display)
// works at and below that row; the lines above are, most likely, done. A
// follower may show settled lines before they are final.
func (s *Screen) AppendLive(dst []byte) ([]byte, int) {
	rows, settle := s.rows, s.cy
	if s.alt != nil {
		rows, settle = s.alt.rows, 0
	}
	if up := s.redrawn - s.scrolled; up >= 0 && up < int64(settle) {
		settle = int(up)
	}
	for settle > 0 && rows[settle-1].wrapped {
		settle--
	}
	rows = rows[:textRows(rows)]
	start, settled := len(dst), 0
	for i, r := range rows {
		if i == settle {
			settled = len(dst) - start
		}
		dst = r.appendLine(dst)
	}
	if n := len(rows); n > 0 && rows[n-1].wrapped {
		dst = append(dst, '\n') // it wraps into a row left blank
	}
	if settle >= len(rows) {
		settled = len(dst) - start
	}
	return dst, settled
}

// textRows is how many of rows run down to the last one holding text.
func textRows(rows []*row) int {
	for i := len(rows) - 1; i >= 0; i-- {
		if rows[i].textEnd() > 0 || rows[i].wrapped {
			return i + 1
		}
	}
	return 0
}

// movedUp notes the line the cursor went up to from row y, if it did.
func (s *Screen) movedUp(y int) {
	if s.alt == nil && s.cy < y {
		s.redrawn = s.scrolled + int64(s.cy)
	}
}

// Close ends the stream: the note for binary data or a full-screen
// program still running is added, and the live region is written out as
// final lines. The Screen must not be written to afterwards.
func (s *Screen) Close() error {
	if s.err != nil {
		return s.err
	}
	s.endBinary()
	s.leaveAlt()
	s.out, _ = s.AppendLive(s.out)
	if n := len(s.out); n > 0 && s.out[n-1] != '\n' {
		s.out = append(s.out, '\n')
	}
	for _, r := range s.rows {
		r.clear()
	}
	s.flushOut()
	return s.err
}

// feed runs p through binary detection and the model.
func (s *Screen) feed(p []byte) {
	for len(p) > 0 {
		if s.bin.active {
			p = s.binaryBytes(p)
			continue
		}
		if len(s.carry) > 0 {
			p = s.finishRune(p)
			continue
		}
		p = s.text(p)
	}
}

// text consumes p until it is used up or the stream turns binary, and
// returns the rest.
func (s *Screen) text(p []byte) []byte {
	for len(p) > 0 && !s.bin.active {
		if s.alt != nil {
			// Count what the full-screen program writes, one step at a
			// time, since the step that leaves the alternate screen ends it.
			n := len(p)
			p = s.step(p)
			if s.alt != nil {
				s.alt.bytes += int64(n - len(p))
			}
			continue
		}
		p = s.step(p)
	}
	return p
}

// step consumes one run of text, one rune or one byte of a sequence from
// the start of p and returns the rest.
func (s *Screen) step(p []byte) []byte {
	if st := s.p.State(); st != parser.GroundState {
		return s.sequence(p, st)
	}
	b := p[0]
	switch {
	case b >= 0x20 && b < 0x7f:
		n := 1
		for n < len(p) && p[n] >= 0x20 && p[n] < 0x7f {
			n++
		}
		s.ascii(p[:n])
		return p[n:]
	case b >= utf8.RuneSelf:
		return s.utf8(p)
	case b == 0:
		s.enterBinary(1)
	case b == 0x7f:
	case b == 0x1b:
		s.countText(1)
		if n := s.plainCSI(p); n > 0 {
			return p[n:]
		}
		s.p.Advance(b)
	default:
		// A C0 control outside a sequence: what the parser would do, without
		// it (a \r bar is one control a frame).
		s.countText(1)
		y := s.cy
		s.execute(b)
		s.movedUp(y)
	}
	return p[1:]
}

// Limits of plainCSI, within which it parses exactly as the parser does.
const (
	plainParams = 8
	plainDigits = 5
)

// plainCSI handles a whole control sequence at the start of p without the
// parser, if it is a plain one — ESC [, numbers separated by ';', a final
// byte, all in p — and returns its length; else 0, and the parser takes it.
// Progress bars are mostly these (EL, CUU, SGR), one or two a frame.
func (s *Screen) plainCSI(p []byte) int {
	if len(p) < 3 || p[1] != '[' {
		return 0
	}
	params := s.params[:0]
	cur, digits := parser.MissingParam, 0
	for i := 2; i < len(p); i++ {
		switch b := p[i]; {
		case b >= '0' && b <= '9':
			if digits++; digits > plainDigits {
				return 0
			}
			if cur == parser.MissingParam {
				cur = 0
			}
			cur = cur*10 + int(b-'0')
		case b == ';':
			if len(params) == plainParams-1 {
				return 0
			}
			params = append(params, ansi.Param(cur))
			cur, digits = parser.MissingParam, 0
		case b >= 0x40 && b <= 0x7e:
			if len(params) > 0 || cur != parser.MissingParam {
				params = append(params, ansi.Param(cur))
			}
			y := s.cy
			s.csi(ansi.Cmd(b), params)
			s.movedUp(y)
			return i + 1
		default:
			return 0
		}
	}
	return 0
}

// sequence feeds p to the parser while it is inside an escape sequence.
// String payloads are skipped in bulk and never parsed: only the bytes
// that can end them (BEL, ESC, CAN, SUB) go to the parser.
func (s *Screen) sequence(p []byte, st parser.State) []byte {
	if inString(st) {
		n := 0
		for n < len(p) && p[n] >= 0x20 {
			n++
		}
		if n > 0 {
			return p[n:]
		}
	}
	// The rest of a control sequence, in one go.
	for i, b := range p {
		if b == 0 {
			s.p.Reset()
			s.enterBinary(1)
			return p[i+1:]
		}
		s.p.Advance(b)
		if st := s.p.State(); st == parser.GroundState || inString(st) {
			return p[i+1:]
		}
	}
	return nil
}

// inString reports whether the parser is in a string's payload: an OSC,
// DCS, SOS, PM or APC.
func inString(st parser.State) bool {
	return st == parser.OscStringState || st == parser.DcsStringState || st >= parser.SosStringState && st <= parser.ApcStringState
}

// utf8 decodes the non-ASCII text at the start of p; a rune cut off by the
// end of p is kept for the next Write.
func (s *Screen) utf8(p []byte) []byte {
	if !utf8.FullRune(p) {
		s.carry = append(s.carry[:0], p...)
		return nil
	}
	r, n := utf8.DecodeRune(p)
	s.decoded(r, n)
	return p[n:]
}

// finishRune completes the rune carried over from the last Write.
func (s *Screen) finishRune(p []byte) []byte {
	var buf [utf8.UTFMax]byte
	n := copy(buf[:], s.carry)
	m := copy(buf[n:], p)
	b := buf[:n+m]
	if !utf8.FullRune(b) {
		s.carry = append(s.carry[:0], b...)
		return p[m:]
	}
	r, size := utf8.DecodeRune(b)
	s.carry = s.carry[:0]
	if size < n {
		// The carried bytes were invalid: decode the rest of them again.
		rest := append([]byte(nil), b[size:n]...)
		s.decoded(r, size)
		s.feed(rest)
		return p
	}
	s.decoded(r, size)
	return p[size-n:]
}

// decoded handles one decoded rune of n bytes; RuneError of one byte is an
// invalid byte.
func (s *Screen) decoded(r rune, n int) {
	if r == utf8.RuneError && n == 1 {
		if s.invalidByte() {
			s.print(utf8.RuneError)
		}
		return
	}
	s.countText(n)
	if r < 0xa0 {
		// C1 controls are not acted on (tmux does not either in UTF-8)
		// and never written.
		return
	}
	s.print(r)
}

// ascii prints a run of printable ASCII.
func (s *Screen) ascii(b []byte) {
	s.countText(len(b))
	s.last = rune(b[len(b)-1])
	for len(b) > 0 {
		if s.cx >= s.width {
			s.putChar(rune(b[0]), 1) // wraps, or overwrites the last column
			b = b[1:]
			continue
		}
		n := min(len(b), s.width-s.cx)
		s.rows[s.cy].putASCII(s.cx, b[:n])
		s.cx += n
		b = b[n:]
	}
}

// print prints one non-ASCII rune.
func (s *Screen) print(r rune) {
	w := s.widths.width(r)
	if w == 0 {
		col := s.cx - 1
		s.rows[s.cy].combine(col, r)
		return
	}
	s.putChar(r, w)
	s.last = r
}

// putChar writes a character of width w at the cursor, wrapping first if
// it does not fit (autowrap) or overwriting the last column if autowrap is
// off.
func (s *Screen) putChar(r rune, w int) {
	if w > s.width {
		return // a wide character in a one-column pane: nowhere to go
	}
	if s.cx+w > s.width {
		if s.noWrap {
			s.cx = s.width - w
		} else {
			s.rows[s.cy].wrapped = true
			s.cx = 0
			s.lineFeed()
		}
	}
	s.rows[s.cy].put(s.cx, r, w)
	s.cx += w
}

// lineFeed moves the cursor down a row, scrolling the region at its
// bottom.
func (s *Screen) lineFeed() {
	switch {
	case s.cy == s.bottom:
		s.scrollUp(1)
	case s.cy < s.height-1:
		s.cy++
	}
}

// scrollUp scrolls the scroll region up n rows. As in tmux, the row leaving
// the region's top goes to the history, here: the final lines.
func (s *Screen) scrollUp(n int) {
	n = min(n, s.bottom-s.top+1)
	for range n {
		gone := s.rows[s.top]
		s.final(gone)
		if s.alt == nil {
			s.scrolled++
		}
		copy(s.rows[s.top:], s.rows[s.top+1:s.bottom+1])
		gone.clear()
		s.rows[s.bottom] = gone
	}
}

// scrollDown scrolls the scroll region down n rows; rows pushed off its
// bottom are lost, as on the screen.
func (s *Screen) scrollDown(n int) {
	n = min(n, s.bottom-s.top+1)
	if s.alt == nil {
		s.redrawn = s.scrolled + int64(s.top)
	}
	for range n {
		gone := s.rows[s.bottom]
		copy(s.rows[s.top+1:s.bottom+1], s.rows[s.top:s.bottom])
		gone.clear()
		s.rows[s.top] = gone
	}
}

// final appends a row that left the screen to the output, and keeps its
// text in the history, from which a taller pane pulls it back.
func (s *Screen) final(r *row) {
	if s.alt != nil {
		return // the alternate screen has no history
	}
	start := len(s.out)
	if !r.skipped() {
		s.out = r.appendLineText(s.out)
	}
	s.history.push(s.out[start:], r.skipped(), len(r.cells))
	s.out = r.dropDone(s.out, start)
	if len(s.out) >= outFlush {
		s.flushOut()
	}
}

// clearToHistory empties the screen the way tmux does for a full clear
// (scroll-on-clear): the rows down to the last one holding text scroll
// into the history.
func (s *Screen) clearToHistory() {
	last := -1
	for i, r := range s.rows {
		if r.used() > 0 {
			last = i
		}
	}
	for _, r := range s.rows[:last+1] {
		s.final(r)
	}
	if s.alt == nil {
		s.scrolled += int64(last + 1)
		s.history.forget() // as tmux's grid_view_clear_history
	}
	for _, r := range s.rows {
		r.clear()
	}
}

// note puts a line of qtask's own on the screen at the cursor, on a line
// of its own, as if the program had printed it.
func (s *Screen) note(text string) {
	if s.cx > 0 || s.rows[s.cy].used() > 0 {
		s.cx = 0
		s.lineFeed()
	}
	for _, r := range text {
		if r == '\t' {
			s.tab()
		} else {
			s.print(r)
		}
	}
	s.cx = 0
	s.lineFeed()
}

// flushOut writes the final text collected so far.
func (s *Screen) flushOut() {
	if len(s.out) == 0 {
		return
	}
	if s.err == nil {
		if _, err := s.w.Write(s.out); err != nil {
			s.err = fmt.Errorf("render: write final lines: %w", err)
		}
	}
	s.out = s.out[:0]
}
