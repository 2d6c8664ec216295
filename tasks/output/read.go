package output

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strings"
	"unicode/utf8"

	"github.com/qtask/qtask/tasks/capped"
)

// tailBlock is how much of a file's end is read at a time when looking for
// its last lines: output files can be large, tails are small.
const tailBlock = 64 << 10

// readTail returns the smallest suffix of the file holding its last n lines
// (a final line without a newline counts), reading backwards in blocks so the
// cost follows the tail, not the file.
// It also returns the file size it read up to.
func readTail(f *os.File, n int) ([]byte, int64, error) {
	size, err := f.Seek(0, io.SeekEnd)
	if err != nil {
		return nil, 0, err
	}
	tail, err := ReadTailTo(f, n, size)
	return tail, size, err
}

// ReadTailTo is readTail of the file's first end bytes.
func ReadTailTo(f *os.File, n int, end int64) ([]byte, error) {
	if n <= 0 || end == 0 {
		return nil, nil
	}
	var buf []byte
	pos := end
	for pos > 0 {
		step := min(int64(tailBlock), pos)
		pos -= step
		block := make([]byte, step)
		if _, err := f.ReadAt(block, pos); err != nil && err != io.EOF {
			return nil, err
		}
		buf = append(block, buf...)
		// Count newlines, ignoring the file's final one.
		body := bytes.TrimSuffix(buf, []byte("\n"))
		if idx := nthLastIndex(body, '\n', n); idx >= 0 {
			return buf[idx+1:], nil
		}
	}
	return buf, nil
}

// nthLastIndex is the index of the n-th last occurrence of c in b, or -1.
func nthLastIndex(b []byte, c byte, n int) int {
	for i := len(b) - 1; i >= 0; i-- {
		if b[i] == c {
			n--
			if n == 0 {
				return i
			}
		}
	}
	return -1
}

// lastLineWindow is how many trailing lines LastLine looks through for one
// that is not blank.
const lastLineWindow = 32

// LastLine is the last non-blank line among the file's last lines, cut to
// at most max bytes, or "" when there is none or it cannot be read.
func LastLine(path string, max int) string {
	f, err := capped.OpenRead(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	tail, _, err := readTail(f, lastLineWindow)
	if err != nil {
		return ""
	}
	lines := strings.Split(string(tail), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if line := strings.TrimSpace(lines[i]); line != "" {
			return CutUTF8(line, max)
		}
	}
	return ""
}

// CutUTF8 shortens s to at most max bytes without splitting a rune.
func CutUTF8(s string, max int) string {
	if len(s) <= max {
		return s
	}
	for max > 0 && !utf8.RuneStart(s[max]) {
		max--
	}
	return s[:max]
}

// LastChars returns up to n characters from the end of the file and
// whether anything before them was left out.
func LastChars(path string, n int) (string, bool, error) {
	f, err := capped.OpenRead(path)
	if err != nil {
		return "", false, fmt.Errorf("open output: %w", err)
	}
	defer f.Close()
	size, err := f.Seek(0, io.SeekEnd)
	if err != nil {
		return "", false, fmt.Errorf("read output: %w", err)
	}
	buf, cut, err := lastBytes(f, size, int64(n)*utf8.UTFMax)
	if err != nil {
		return "", false, fmt.Errorf("read output: %w", err)
	}
	if runes := utf8.RuneCount(buf); runes > n {
		for ; runes > n; runes-- {
			_, w := utf8.DecodeRune(buf)
			buf = buf[w:]
		}
		cut = true
	}
	return string(buf), cut, nil
}

// lastBytes reads up to the last n of the first size bytes of f, and
// whether f held more before them.
func lastBytes(f io.ReaderAt, size, n int64) ([]byte, bool, error) {
	start := max(size-n, 0)
	buf := make([]byte, size-start)
	if _, err := f.ReadAt(buf, start); err != nil && err != io.EOF {
		return nil, false, err
	}
	return buf, start > 0, nil
}
