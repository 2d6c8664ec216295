package tasks

import (
	"bytes"
	"fmt"
	"io"
	"strconv"
	"unicode/utf8"
)

// Limits and thresholds of the Cleaner. They bound its memory whatever the
// input and define the binary heuristic documented on Cleaner.
const (
	// cleanMaxLine is the most of one unfinished line held back waiting for
	// its newline (or a CR redraw); beyond it the held part is written out.
	cleanMaxLine = 64 << 10
	// cleanOutFlush is the size at which collected output is handed to the
	// destination mid-Write, so writes are large but memory stays bounded.
	cleanOutFlush = 64 << 10
	// cleanInvalidWeight is what one invalid UTF-8 byte adds to the binary
	// score; every valid text byte takes one away again.
	cleanInvalidWeight = 4
	// cleanBinaryScore is the score at which the input is taken for binary:
	// 16 invalid bytes in a row, or more than one byte in five invalid for
	// a sustained stretch. Latin-1 prose stays well below it.
	cleanBinaryScore = 64
	// cleanTextRun is how many consecutive bytes of text (valid UTF-8 with
	// no control bytes but cleanTextControls) end binary mode. Random data
	// practically never has such a run.
	cleanTextRun = 1024
)

// Bytes the Cleaner treats specially.
const (
	cleanBEL = 0x07
	cleanBS  = 0x08
	cleanESC = 0x1b
	cleanCAN = 0x18
	cleanSUB = 0x1a
	cleanDEL = 0x7f
)

// cleanTextControls are the C0 controls terminal text uses (tab, newline,
// CR, backspace, BEL, SO, SI, ESC), as a bit set. Any other control byte,
// NUL above all, keeps binary mode going.
const cleanTextControls uint32 = 1<<'\t' | 1<<'\n' | 1<<'\r' | 1<<cleanBS | 1<<cleanBEL | 1<<0x0e | 1<<0x0f | 1<<cleanESC

var (
	cleanNewline     = []byte{'\n'}
	cleanTab         = []byte{'\t'}
	cleanReplacement = []byte(string(utf8.RuneError))
)

// cleanEscState is where the Cleaner is inside an escape sequence.
type cleanEscState uint8

const (
	cleanGround   cleanEscState = iota // plain text
	cleanEscStart                      // after ESC
	cleanEscInter                      // ESC followed by intermediates 0x20-0x2F
	cleanCSI                           // ESC [ parameters and intermediates
	cleanOSC                           // ESC ] payload, ended by BEL or ST
	cleanStr                           // DCS, SOS, PM or APC payload, ended by ST
	cleanStrESC                        // ESC inside an OSC or string: ST or a new sequence
)

// CleanerOptions configures a Cleaner.
type CleanerOptions struct {
	// EndMarker, when non-empty, is an OSC payload (the text between
	// "ESC ]" and BEL or "ESC \") that signals that everything the command
	// printed has passed through. When the Cleaner sees an OSC whose
	// payload equals EndMarker exactly it calls OnEndMarker, once. The
	// marker is never written to the output. It is matched as the stream
	// arrives, without buffering, so it may be of any length, and it is
	// found even while binary output is being suppressed. A marker holding
	// control bytes (below 0x20, or DEL) can never end an OSC that way and
	// is ignored.
	EndMarker string
	// OnEndMarker is called synchronously from Write, after every complete
	// line before the marker has been written to the destination (a
	// partial line is still pending until FlushPartial or Close). It must
	// not call back into the Cleaner.
	OnEndMarker func()
	// HoldOutput keeps complete lines queued (up to the cleaner's write
	// batch) across Write calls until Flush, FlushPartial, the end marker or
	// Close, so a caller fed many small pieces can write in large ones.
	HoldOutput bool
}

// Cleaner turns the raw bytes a terminal program wrote into plain,
// LF-terminated UTF-8 text fit for an output file that people read and
// tools grep: escape sequences and C1 controls are removed, CR redraws collapse to their
// final state, and binary data is replaced by a one-line note.
//
// Its output depends only on the bytes written, never on how they were
// split across Write calls; only FlushPartial, which callers use on a timer,
// can change where a line is cut. Memory stays bounded whatever the input.
//
// Binary heuristic: a NUL byte switches to binary mode at once; so does a
// score that rises by 4 for every invalid UTF-8 byte and falls by 1 for
// every valid text byte when it reaches 64. The suspect bytes since the
// score last left zero are suppressed too. Binary mode ends after 1024
// consecutive bytes of valid UTF-8 without NUL or other control bytes that
// text does not use (tab, newline, CR, backspace, BEL, SO, SI and ESC are
// fine), or at FlushPartial or Close if the bytes since the last bad one
// are such text. Valid UTF-8 without NUL bytes is therefore never taken
// for binary, however it is chunked.
//
// A Cleaner is not safe for concurrent use.
type Cleaner struct {
	w      io.Writer
	onEnd  func()
	hold   bool // HoldOutput
	marker cleanMarkerScan
	err    error

	out  []byte // finished output not yet written to w
	line []byte // the pending line: valid UTF-8, at most lineMax bytes
	// lineMax is cleanMaxLine; a field so tests can reach the limit cheaply.
	// It must be at least utf8.UTFMax, so that any rune fits.
	lineMax int
	// lineFlushed reports that part of the current line already went out,
	// so a redraw must start a new line rather than take it back.
	lineFlushed bool
	crPending   bool // CRs seen, not yet resolved as CRLF or redraw
	esc         cleanEscState
	carry       []byte // start of a rune split across Write calls

	// Binary detection in text mode.
	score   int   // see cleanInvalidWeight
	mark    int   // length of line when the score last left zero
	suspect int64 // input bytes since then (or since the last newline)

	// Binary mode.
	binary   bool
	skipped  int64  // bytes suppressed so far
	cand     []byte // the current run of clean bytes that may be text again
	candRune int    // where the unfinished rune of cand starts
}

// NewCleaner returns a Cleaner writing clean text to w. It never closes w.
func NewCleaner(w io.Writer, opts CleanerOptions) *Cleaner {
	c := &Cleaner{
		w:       w,
		onEnd:   opts.OnEndMarker,
		hold:    opts.HoldOutput,
		out:     make([]byte, 0, cleanOutFlush+cleanMaxLine),
		lineMax: cleanMaxLine,
	}
	if cleanPrintable(opts.EndMarker) {
		c.marker.pat = []byte("\x1b]" + opts.EndMarker)
	}
	return c
}

// cleanPrintable reports whether s is non-empty and free of control bytes.
func cleanPrintable(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] == cleanDEL {
			return false
		}
	}
	return s != ""
}

// Write consumes p, which may be any piece of the stream. It always
// consumes all of p; an error means the destination failed, and every later
// call returns that error.
func (c *Cleaner) Write(p []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	for rest := p; len(rest) > 0; {
		n, found := c.marker.scan(rest)
		c.process(rest[:n])
		rest = rest[n:]
		if found {
			c.flushOut()
			if c.onEnd != nil {
				c.onEnd()
			}
		}
	}
	if !c.hold {
		c.flushOut()
	}
	return len(p), c.err
}

// Flush writes the complete lines queued under HoldOutput.
func (c *Cleaner) Flush() error {
	c.flushOut()
	return c.err
}

// FlushPartial writes the pending partial line without ending it, so that
// a prompt or a progress bar becomes visible. Callers call it when the
// input has been idle for a while. If binary output is being suppressed and
// the input since the last bad byte is text, the note is written and that
// text follows it.
func (c *Cleaner) FlushPartial() error {
	if c.err != nil {
		return c.err
	}
	if c.binary && len(c.cand) > 0 {
		c.leaveBinary()
	}
	c.partialFlush()
	c.flushOut()
	return c.err
}

// Close ends the stream: it writes everything pending, the binary note if
// binary output was being suppressed, and a final newline if the last line
// lacks one. It does not close the destination. The Cleaner must not be
// written to afterwards.
func (c *Cleaner) Close() error {
	if c.err != nil {
		return c.err
	}
	c.breakStream()
	c.flushOut()
	return c.err
}

// Note writes text, one line of qtask's own (a remark that output was
// lost), into the stream: whatever was pending is ended first, as at Close,
// because the bytes that would have completed it are gone; the stream then
// goes on from a clean state.
func (c *Cleaner) Note(text string) error {
	if c.err != nil {
		return c.err
	}
	c.breakStream()
	c.emit([]byte(text))
	c.emit(cleanNewline)
	c.flushOut()
	return c.err
}

// breakStream ends whatever is pending: a split rune, binary mode, an escape
// sequence, the current line.
func (c *Cleaner) breakStream() {
	// An unfinished rune at the end is invalid, which may tip the stream
	// into binary mode. Leaving binary mode can leave another unfinished
	// rune behind, but the text it replays is valid and resets the score,
	// so this loop ends after at most two rounds.
	for {
		c.dropCarry()
		if !c.binary {
			break
		}
		c.leaveBinary()
	}
	c.crPending = false
	c.esc = cleanGround
	if !c.lineFlushed && len(bytes.TrimSpace(c.line)) == 0 {
		// Blanks left at the very end carry nothing: typically a shell's
		// prompt redraw (zsh's PROMPT_SP) after an adopted command.
		c.line = c.line[:0]
	}
	c.endLine()
}

// process consumes p in whichever mode the stream is in.
func (c *Cleaner) process(p []byte) {
	for len(p) > 0 {
		if c.binary {
			p = c.binaryBytes(p)
		} else {
			p = c.text(p)
		}
	}
}

// text consumes p in text mode and returns what is left when the stream
// turns binary.
func (c *Cleaner) text(p []byte) []byte {
	for len(p) > 0 && !c.binary {
		switch {
		case len(c.carry) > 0:
			p = c.finishRune(p)
		case p[0] == 0:
			c.enterBinary(1)
			p = p[1:]
		case c.esc == cleanGround:
			p = c.ground(p)
		default:
			p = c.escape(p)
		}
	}
	return p
}

// ground handles the text at the start of p: a run of printable bytes, or
// one control byte.
func (c *Cleaner) ground(p []byte) []byte {
	n, high := cleanPrintableRun(p)
	if n == 0 {
		c.control(p[0])
		return p[1:]
	}
	return p[c.printable(p[:n], high, n == len(p)):]
}

// cleanPrintableRun returns the length of the leading run of p free of C0
// controls and DEL, and whether it has bytes above ASCII.
func cleanPrintableRun(p []byte) (int, bool) {
	var or byte
	n := 0
	for n < len(p) {
		b := p[n]
		if b < 0x20 || b == cleanDEL {
			break
		}
		or |= b
		n++
	}
	return n, or >= utf8.RuneSelf
}

// printable adds a run of printable bytes to the line, replacing invalid
// UTF-8. atEnd says the run reaches the end of the Write, where a rune may
// be cut short: its start is kept for the next Write. It returns how much
// of run was consumed, which is less than all only if the stream turned
// binary.
func (c *Cleaner) printable(run []byte, high, atEnd bool) int {
	if !high {
		c.validText(run)
		return len(run)
	}
	body := run
	if atEnd {
		body = run[:cleanIncompleteTail(run)]
	}
	switch {
	case len(body) == 0:
		// Only an unfinished rune: nothing to add yet.
	case utf8.Valid(body):
		c.validText(body)
	default:
		if n := c.decodeRunes(body); c.binary {
			return n
		}
	}
	c.carry = append(c.carry[:0], run[len(body):]...)
	return len(run)
}

// cleanIncompleteTail returns where an unfinished rune at the end of b
// starts, or len(b) if b does not end in one.
func cleanIncompleteTail(b []byte) int {
	for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax; i-- {
		if utf8.RuneStart(b[i]) {
			if utf8.FullRune(b[i:]) {
				return len(b)
			}
			return i
		}
	}
	return len(b)
}

// decodeRunes adds b rune by rune, replacing invalid bytes, and returns
// how much it consumed before the stream turned binary (all of b if not).
func (c *Cleaner) decodeRunes(b []byte) int {
	for i := 0; i < len(b); {
		r, size := utf8.DecodeRune(b[i:])
		c.addRune(b[i:i+size], r == utf8.RuneError && size == 1)
		i += size
		if c.binary {
			return i
		}
	}
	return len(b)
}

// finishRune completes the rune carried over from the previous Write with
// the first bytes of p and returns the rest of p.
func (c *Cleaner) finishRune(p []byte) []byte {
	var buf [utf8.UTFMax]byte
	n := copy(buf[:], c.carry)
	m := copy(buf[n:], p)
	b := buf[:n+m]
	if !utf8.FullRune(b) {
		c.carry = append(c.carry[:0], b...)
		return p[m:]
	}
	r, size := utf8.DecodeRune(b)
	if size >= n {
		c.carry = c.carry[:0]
		p = p[size-n:]
	} else {
		c.carry = c.carry[:copy(c.carry, c.carry[size:])]
	}
	c.addRune(b[:size], r == utf8.RuneError && size == 1)
	return p
}

// dropCarry replaces an unfinished rune left at the end of the stream.
func (c *Cleaner) dropCarry() {
	for len(c.carry) > 0 && !c.binary {
		c.carry = c.carry[:copy(c.carry, c.carry[1:])]
		c.invalid()
	}
}

// addRune adds one decoded rune, or U+FFFD for an invalid byte.
func (c *Cleaner) addRune(r []byte, invalid bool) {
	if invalid {
		c.invalid()
	} else {
		c.validText(r)
	}
}

// validText adds valid UTF-8 text to the line, leaving out C1 controls
// (U+0080–U+009F), counted like other control bytes: a terminal may act on
// U+009B as CSI, and the file must be safe to print.
func (c *Cleaner) validText(b []byte) {
	for {
		i := cleanC1Index(b)
		if i < 0 {
			break
		}
		if i > 0 {
			c.addText(b[:i])
		}
		c.track(2)
		b = b[i+2:]
	}
	if len(b) > 0 {
		c.addText(b)
	}
}

// cleanC1Index is where the first C1 control in valid UTF-8 b starts, or
// -1. C1 controls are the two-byte sequences 0xC2 0x80–0x9F; in valid UTF-8
// 0xC2 is always a lead byte, so a byte search finds them all.
func cleanC1Index(b []byte) int {
	for i := 0; ; i++ {
		j := bytes.IndexByte(b[i:], 0xc2)
		if j < 0 {
			return -1
		}
		i += j
		if i+1 < len(b) && b[i+1] <= 0x9f {
			return i
		}
	}
}

// addText adds valid UTF-8 text without controls to the line.
func (c *Cleaner) addText(b []byte) {
	if c.score > 0 {
		c.suspect += int64(len(b))
		c.score = max(0, c.score-len(b))
	}
	c.resolveCR()
	c.appendLine(b)
}

// invalid adds U+FFFD for an invalid byte, or turns binary if there have
// been too many.
func (c *Cleaner) invalid() {
	c.resolveCR()
	if c.score == 0 {
		c.mark = len(c.line)
		c.suspect = 0
	}
	c.score += cleanInvalidWeight
	c.suspect++
	if c.score >= cleanBinaryScore {
		c.enterBinary(0)
		return
	}
	c.appendLine(cleanReplacement)
}

// track counts a byte that is neither text nor invalid (a control or part
// of an escape sequence) towards the suspect bytes.
func (c *Cleaner) track(n int) {
	if c.score > 0 {
		c.suspect += int64(n)
	}
}

// control handles a C0 control byte or DEL in plain text.
func (c *Cleaner) control(b byte) {
	if b == '\t' {
		c.validText(cleanTab)
		return
	}
	c.track(1)
	switch b {
	case '\n':
		c.crPending = false
		c.newline()
	case '\r':
		// Several CRs before an LF are still a line end: a program's CRLF
		// reaches the pty as CR CR LF.
		c.crPending = true
	case cleanBS:
		c.resolveCR()
		c.backspace()
	case cleanESC:
		c.esc = cleanEscStart
	}
}

// escape consumes bytes of an escape sequence from the start of p.
func (c *Cleaner) escape(p []byte) []byte {
	if c.esc == cleanOSC || c.esc == cleanStr {
		// Skip payload in bulk: OSC 52 or image payloads can be megabytes.
		n := 0
		for n < len(p) && p[n] >= 0x20 {
			n++
		}
		if n > 0 {
			c.track(n)
			return p[n:]
		}
	}
	if c.escByte(p[0]) {
		c.track(1)
		return p[1:]
	}
	return p
}

// escByte advances the escape parser by b and reports whether b was
// consumed; if not, the state has changed and b must be handled again.
func (c *Cleaner) escByte(b byte) bool {
	switch c.esc {
	case cleanEscStart:
		switch {
		case b == '[':
			c.esc = cleanCSI
		case b == ']':
			c.esc = cleanOSC
		case b == 'P' || b == 'X' || b == '^' || b == '_':
			c.esc = cleanStr
		case b >= 0x20 && b <= 0x2f:
			c.esc = cleanEscInter
		case b >= 0x30 && b <= 0x7e:
			c.esc = cleanGround
		default:
			return c.escAbort(b)
		}
	case cleanEscInter:
		return c.escFinal(b, 0x20, 0x2f, 0x30)
	case cleanCSI:
		return c.escFinal(b, 0x20, 0x3f, 0x40)
	case cleanOSC, cleanStr:
		switch b {
		case cleanBEL:
			if c.esc == cleanOSC {
				c.esc = cleanGround
			}
		case cleanESC:
			c.esc = cleanStrESC
		case cleanCAN, cleanSUB:
			c.esc = cleanGround
		}
	case cleanStrESC:
		if b == '\\' {
			c.esc = cleanGround
			return true
		}
		// Not ST: the ESC ended the string and starts a new sequence.
		c.esc = cleanEscStart
		return false
	}
	return true
}

// escFinal handles b in a sequence that continues with bytes lo..hi and
// ends with a final byte from final to 0x7E.
func (c *Cleaner) escFinal(b, lo, hi, final byte) bool {
	switch {
	case b >= lo && b <= hi:
		return true
	case b >= final && b <= 0x7e:
		c.esc = cleanGround
		return true
	}
	return c.escAbort(b)
}

// escAbort handles a byte that cannot continue the current sequence: ESC
// starts a new one, CAN and SUB cancel it, anything else cancels it and is
// then handled as ordinary input (reported as not consumed).
func (c *Cleaner) escAbort(b byte) bool {
	switch b {
	case cleanESC:
		c.esc = cleanEscStart
		return true
	case cleanCAN, cleanSUB:
		c.esc = cleanGround
		return true
	}
	c.esc = cleanGround
	return false
}

// resolveCR applies pending CRs before visible text: CRs not followed by LF
// mean the program is redrawing the line.
func (c *Cleaner) resolveCR() {
	if !c.crPending {
		return
	}
	c.crPending = false
	c.line = c.line[:0]
	c.mark = 0
	if c.lineFlushed {
		// Part of the line is already out; start the redraw on a new line
		// rather than mixing it into the old one.
		c.emit(cleanNewline)
		c.lineFlushed = false
	}
}

// backspace removes the last rune of the pending line, if any.
func (c *Cleaner) backspace() {
	_, size := utf8.DecodeLastRune(c.line)
	c.line = c.line[:len(c.line)-size]
	// Keep mark on a rune boundary within the line.
	c.mark = min(c.mark, len(c.line))
}

// appendLine adds valid UTF-8 to the pending line, writing the held part
// out whenever the line would grow beyond lineMax. Cuts fall on rune
// boundaries so the pending line always stays valid UTF-8.
func (c *Cleaner) appendLine(b []byte) {
	for len(c.line)+len(b) > c.lineMax {
		n := c.lineMax - len(c.line)
		for n > 0 && !utf8.RuneStart(b[n]) {
			n--
		}
		c.line = append(c.line, b[:n]...)
		b = b[n:]
		c.partialFlush()
	}
	c.line = append(c.line, b...)
}

// newline ends the pending line.
func (c *Cleaner) newline() {
	c.emit(c.line)
	c.emit(cleanNewline)
	c.line = c.line[:0]
	c.lineFlushed = false
	// What is out cannot be suppressed any more: restart the bookkeeping.
	c.mark = 0
	c.suspect = 0
}

// endLine ends the current line if anything of it exists.
func (c *Cleaner) endLine() {
	if len(c.line) > 0 || c.lineFlushed {
		c.newline()
	}
}

// partialFlush writes the pending line without ending it.
func (c *Cleaner) partialFlush() {
	if len(c.line) == 0 {
		return
	}
	c.emit(c.line)
	c.line = c.line[:0]
	c.lineFlushed = true
	// Nothing written can be taken back. (The suspect count goes on: this
	// can happen in the middle of a piece of text, and the count must not
	// depend on how the input was split.)
	c.mark = 0
}

// enterBinary switches to binary mode; extra counts the triggering bytes
// not yet counted as suspect. Suspect text is taken back from the pending
// line, and what remains of the line is ended so the note will stand on
// its own line.
func (c *Cleaner) enterBinary(extra int64) {
	c.binary = true
	c.skipped = extra + int64(len(c.carry))
	if c.score > 0 {
		c.skipped += c.suspect
		c.line = c.line[:c.mark]
	}
	c.carry = c.carry[:0]
	c.crPending = false
	c.esc = cleanGround
	c.score = 0
	c.endLine()
}

// binaryBytes consumes p in binary mode and returns what is left when the
// stream turns back to text.
func (c *Cleaner) binaryBytes(p []byte) []byte {
	for i, b := range p {
		if c.candidate(b) {
			if len(c.cand) >= cleanTextRun {
				c.leaveBinary()
				return p[i+1:]
			}
			continue
		}
		c.skipped += int64(len(c.cand))
		c.cand = c.cand[:0]
		c.candRune = 0
	}
	return nil
}

// candidate appends b to the run of clean bytes and reports whether the
// run is still text: valid UTF-8 (perhaps ending in an unfinished rune)
// without control bytes other than cleanTextControls.
func (c *Cleaner) candidate(b byte) bool {
	c.cand = append(c.cand, b)
	if b < 0x20 && cleanTextControls&(1<<b) == 0 {
		return false
	}
	if b < utf8.RuneSelf && c.candRune == len(c.cand)-1 {
		c.candRune++
		return true
	}
	tail := c.cand[c.candRune:]
	if !utf8.FullRune(tail) {
		return true
	}
	if r, size := utf8.DecodeRune(tail); r == utf8.RuneError && size == 1 {
		return false
	}
	c.candRune = len(c.cand)
	return true
}

// leaveBinary writes the note and replays the clean run as text.
func (c *Cleaner) leaveBinary() {
	c.binary = false
	c.emit(cleanBinaryNote(c.skipped))
	c.skipped = 0
	run := c.cand
	c.cand = c.cand[:0]
	c.candRune = 0
	// run is NUL-free valid UTF-8 and the score is zero, so this cannot
	// re-enter binary mode and touch c.cand, which shares run's memory.
	c.text(run)
}

// cleanBinaryNote is the line standing in for n suppressed bytes.
func cleanBinaryNote(n int64) []byte {
	b := append([]byte("[qtask: binary output suppressed: "), strconv.FormatInt(n, 10)...)
	return append(b, " bytes]\n"...)
}

// emit queues finished output, handing it to w once enough has collected.
func (c *Cleaner) emit(b []byte) {
	c.out = append(c.out, b...)
	if len(c.out) >= cleanOutFlush {
		c.flushOut()
	}
}

// flushOut writes the queued output to w. After a failure output is
// discarded, keeping memory bounded, and the error is kept for the caller.
func (c *Cleaner) flushOut() {
	if len(c.out) == 0 {
		return
	}
	if c.err == nil {
		if _, err := c.w.Write(c.out); err != nil {
			c.err = fmt.Errorf("tasks: write cleaned output: %w", err)
		}
	}
	c.out = c.out[:0]
}

// cleanMarkerScan finds "ESC ] marker" followed by BEL or "ESC \" in a
// stream, independently of the escape parser, so the end marker is seen in
// text and binary mode alike. pat is "ESC ]" + marker; nil disables it.
// The marker has no control bytes, so ESC occurs in pat only at the start,
// which lets a mismatch simply restart.
type cleanMarkerScan struct {
	pat  []byte
	i    int // bytes matched: of pat, then the terminator's ESC
	done bool
}

// scan returns how much of p comes up to and including the end of the
// marker, and whether the marker ended there; it reports the marker once.
func (m *cleanMarkerScan) scan(p []byte) (int, bool) {
	if m.pat == nil || m.done {
		return len(p), false
	}
	for k := 0; k < len(p); k++ {
		if m.i == 0 {
			j := bytes.IndexByte(p[k:], cleanESC)
			if j < 0 {
				return len(p), false
			}
			k += j
		}
		if m.step(p[k]) {
			m.done = true
			return k + 1, true
		}
	}
	return len(p), false
}

// step advances the match by b and reports whether the marker just ended.
func (m *cleanMarkerScan) step(b byte) bool {
	switch {
	case m.i < len(m.pat):
		if b == m.pat[m.i] {
			m.i++
			return false
		}
	case m.i == len(m.pat):
		switch b {
		case cleanBEL:
			return true
		case cleanESC:
			m.i++
			return false
		}
	default:
		if b == '\\' {
			return true
		}
		// That ESC was not ST; it may start the marker again.
		m.i = 1
		return m.step(b)
	}
	m.i = 0
	if b == cleanESC {
		m.i = 1
	}
	return false
}
