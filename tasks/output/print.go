package output

import (
	"io"
	"strings"
	"unicode/utf8"
)

// PrintContext is how many bytes before a requested range a reader feeds
// to a PrintFilter, so a rune cut by the range start is judged whole: the
// most a rune can have before its last byte.
const PrintContext = utf8.UTFMax - 1

// PrintFilter passes an output file's bytes to a terminal, leaving out what
// the capture never writes and a terminal could act on: C0 controls other
// than tab and newline, DEL, C1 controls (U+0080–U+009F, such as U+009B,
// CSI) and stray bytes 0x80–0x9F, which an 8-bit terminal takes for C1.
// Files the capture wrote pass unchanged; a planted or damaged file is
// printed harmlessly.
//
// Each rune is judged whole, with the bytes around the range the caller
// asked for (see skip and limit), so reading a file in pieces prints
// exactly what reading it whole does. A rune still unfinished when the
// input ends is left out: the capture writes whole runes, so it is not yet
// text.
type PrintFilter struct {
	w     io.Writer
	skip  int64 // leading bytes that are context only: judged, not written
	limit int64 // how many bytes after skip may be written; < 0: no limit
	seen  int64 // bytes judged so far
	held  []byte
	out   []byte
}

// NewPrintFilter returns a filter writing to w; see PrintFilter for skip
// and limit.
func NewPrintFilter(w io.Writer, skip, limit int64) *PrintFilter {
	return &PrintFilter{w: w, skip: skip, limit: limit}
}

// Write judges p, after any rune the previous Write left unfinished, and
// writes what passes. It always consumes all of p.
func (f *PrintFilter) Write(p []byte) (int, error) {
	buf := p
	if len(f.held) > 0 {
		buf = append(f.held, p...)
	}
	i := 0
	for i < len(buf) {
		n, keep := printableASCII(buf[i:]), true
		if n == 0 {
			n, keep = printRune(buf[i:])
		}
		if n == 0 {
			break // an unfinished rune: wait for the rest
		}
		if keep {
			f.emit(buf[i : i+n])
		}
		f.seen += int64(n)
		i += n
	}
	f.held = append([]byte(nil), buf[i:]...)
	if len(f.out) == 0 {
		return len(p), nil
	}
	_, err := f.w.Write(f.out)
	f.out = f.out[:0]
	return len(p), err
}

// emit queues the part of b, which starts at f.seen, that lies inside the
// range.
func (f *PrintFilter) emit(b []byte) {
	lo := max(f.skip-f.seen, 0)
	hi := int64(len(b))
	if f.limit >= 0 {
		hi = min(hi, f.skip+f.limit-f.seen)
	}
	if lo < hi {
		f.out = append(f.out, b[lo:hi]...)
	}
}

// printableASCII is the length of the run of printable ASCII, tab and
// newline at the start of b: the common case, passed on in bulk.
func printableASCII(b []byte) int {
	for i, c := range b {
		if c >= utf8.RuneSelf || c < 0x20 && c != '\n' && c != '\t' || c == 0x7f {
			return i
		}
	}
	return len(b)
}

// printRune judges the rune at the start of b: its length (0 if b holds
// only part of it) and whether it may be printed.
func printRune(b []byte) (int, bool) {
	c := b[0]
	if c < utf8.RuneSelf {
		return 1, c >= 0x20 && c != 0x7f || c == '\n' || c == '\t'
	}
	if !utf8.FullRune(b) {
		return 0, false
	}
	r, n := utf8.DecodeRune(b)
	if r == utf8.RuneError && n == 1 {
		return 1, c > 0x9f // a stray byte
	}
	return n, r > 0x9f
}

// PrintText is s as a PrintFilter prints it whole.
func PrintText(s string) string {
	var b strings.Builder
	NewPrintFilter(&b, 0, -1).Write([]byte(s))
	return b.String()
}
