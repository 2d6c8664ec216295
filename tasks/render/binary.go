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
// text does not use), which are then drawn after a note that counts the
// bytes left out. Valid UTF-8 without NUL is never taken for binary.
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
		s.bin.candRune = 0
	}
	return nil
}

// candidate appends b to the run of clean bytes and reports whether the
// run is still text.
func (s *Screen) candidate(b byte) bool {
	s.bin.cand = append(s.bin.cand, b)
	if b == 0 || b < 0x20 && textControls&(1<<b) == 0 {
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
