package render

import (
	"strconv"
	"unicode/utf8"
)

// Binary detection, the heuristic qtask's output has always used: a NUL
// byte turns the stream binary at once; so does a score that rises by
// binaryInvalidWeight for each invalid UTF-8 byte and falls by one for each
// byte of text, on reaching binaryScore. Binary data is not drawn; it ends
// after binaryTextRun bytes of text (valid UTF-8 without control bytes that
// text does not use, its escape sequences whole), or at the end of the
// stream, and that text is then drawn after a note that counts the bytes
// left out. Valid UTF-8 without NUL is never taken for binary.
const (
	binaryInvalidWeight = 4
	binaryScore         = 64
	binaryTextRun       = 1024
)

// textControls are the C0 controls terminal text uses (tab, newline, CR,
// backspace, BEL, SO, SI, ESC), as a bit set.
const textControls uint32 = 1<<'\t' | 1<<'\n' | 1<<'\r' | 1<<'\b' | 1<<0x07 | 1<<0x0e | 1<<0x0f | 1<<0x1b

// binaryState is the detector's state.
type binaryState struct {
	active   bool
	score    int
	skipped  int64  // bytes left out so far
	cand     []byte // the current run of bytes that may be text again
	candRune int    // where the unfinished rune of cand starts
	candSeq  seqState
}

// seqState follows the escape sequences in a run of bytes that may be text
// again. Text writes its sequences whole: a control byte inside one (ESC
// then a newline, a control sequence cut by a carriage return) is the tail
// of binary data, and drawn it would eat the real text after it: ESC CR LF
// makes the next letter an escape's final byte, ESC P makes the rest of the
// stream a device control string.
type seqState uint8

const (
	seqNone      seqState = iota
	seqEsc                // after ESC
	seqEscInter           // after ESC and an intermediate byte
	seqCSI                // in a control sequence's parameters
	seqOSC                // in an OSC payload, which BEL or ST ends
	seqString             // in a DCS, SOS, PM or APC payload, which ST ends
	seqStringEsc          // after ESC in a string, where only ST may follow
)

// next moves st past b and reports whether b can be part of text.
func (st *seqState) next(b byte) bool {
	printable := b >= 0x20 && b < 0x7f
	switch *st {
	case seqNone:
		if b == 0x1b {
			*st = seqEsc
		}
		return true
	case seqEsc, seqEscInter:
		switch {
		case !printable:
			return false
		case b < 0x30:
			*st = seqEscInter
		case *st == seqEsc && b == '[':
			*st = seqCSI
		case *st == seqEsc && b == ']':
			*st = seqOSC
		case *st == seqEsc && (b == 'P' || b == 'X' || b == '^' || b == '_'):
			*st = seqString
		default:
			*st = seqNone
		}
	case seqCSI:
		if !printable {
			return false
		}
		if b >= 0x40 {
			*st = seqNone
		}
	case seqOSC, seqString:
		switch {
		case b == 0x07 && *st == seqOSC:
			*st = seqNone
		case b == 0x1b:
			*st = seqStringEsc
		case b < 0x20 || b == 0x7f:
			return false
		}
	case seqStringEsc:
		if b != '\\' {
			return false
		}
		*st = seqNone
	}
	return true
}

// countText lowers the score for n bytes of text.
func (s *Screen) countText(n int) {
	s.bin.score = max(0, s.bin.score-n)
}

// invalidByte counts an invalid UTF-8 byte and reports whether it is still
// drawn (as U+FFFD) rather than the start of binary data.
func (s *Screen) invalidByte() bool {
	s.bin.score += binaryInvalidWeight
	if s.bin.score >= binaryScore {
		s.enterBinary(1)
		return false
	}
	return true
}

// enterBinary stops drawing; extra is the bytes that gave the stream away.
func (s *Screen) enterBinary(extra int64) {
	s.bin = binaryState{active: true, skipped: extra + int64(len(s.carry)), cand: s.bin.cand[:0]}
	s.carry = s.carry[:0]
	s.p.Reset()
}

// binaryBytes consumes p while the stream is binary and returns what is
// left when it turns back to text.
func (s *Screen) binaryBytes(p []byte) []byte {
	for i, b := range p {
		if s.candidate(b) {
			if len(s.bin.cand) >= binaryTextRun {
				s.leaveBinary()
				return p[i+1:]
			}
			continue
		}
		s.bin.skipped += int64(len(s.bin.cand))
		s.bin.cand = s.bin.cand[:0]
		s.bin.candRune, s.bin.candSeq = 0, seqNone
	}
	return nil
}

// candidate appends b to the run of clean bytes and reports whether the
// run is still text.
func (s *Screen) candidate(b byte) bool {
	s.bin.cand = append(s.bin.cand, b)
	if !s.bin.candSeq.next(b) || b < 0x20 && textControls&(1<<b) == 0 {
		return false
	}
	if b < utf8.RuneSelf && s.bin.candRune == len(s.bin.cand)-1 {
		s.bin.candRune++
		return true
	}
	tail := s.bin.cand[s.bin.candRune:]
	if !utf8.FullRune(tail) {
		return true
	}
	if r, size := utf8.DecodeRune(tail); r == utf8.RuneError && size == 1 {
		return false
	}
	s.bin.candRune = len(s.bin.cand)
	return true
}

// leaveBinary draws the note and then the run of text that ended the
// binary data.
func (s *Screen) leaveBinary() {
	run := append([]byte(nil), s.bin.cand...)
	skipped := s.bin.skipped
	s.bin = binaryState{cand: s.bin.cand[:0]}
	if s.alt != nil {
		s.alt.bytes += skipped
	} else {
		s.note("[qtask: binary output suppressed: " + strconv.FormatInt(skipped, 10) + " bytes]")
	}
	s.feed(run)
}

// endBinary ends binary data at the end of the stream.
func (s *Screen) endBinary() {
	if len(s.carry) > 0 {
		// An unfinished rune at the end is invalid.
		carry := append([]byte(nil), s.carry...)
		s.carry = s.carry[:0]
		for range carry {
			if !s.bin.active && s.invalidByte() {
				s.print(utf8.RuneError)
			} else if s.bin.active {
				s.bin.skipped++
			}
		}
	}
	if s.bin.active {
		s.leaveBinary()
		if len(s.carry) > 0 {
			s.endBinary()
		}
	}
}
