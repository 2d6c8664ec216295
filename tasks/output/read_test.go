package output

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// writeOutputFile writes content to a fresh file and returns its path.
func writeOutputFile(t *testing.T, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "out.log")
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// numberedLines is count lines "line N" padded with spaces to width bytes,
// newline included.
func numberedLines(count, width int) string {
	var b strings.Builder
	for i := range count {
		fmt.Fprintf(&b, "%-*s\n", width-1, "line "+strconv.Itoa(i))
	}
	return b.String()
}

func TestReadTail(t *testing.T) {
	big := strings.Repeat("y", 3*tailBlock) // one line three blocks long
	many := numberedLines(5000, 40)         // ~200 KiB of short lines
	cases := []struct {
		name    string
		content string
		n       int
		want    string
	}{
		{"empty file", "", 3, ""},
		{"n is zero", "a\nb\n", 0, ""},
		{"n is negative", "a\nb\n", -1, ""},
		{"last two lines", "a\nb\nc\n", 2, "b\nc\n"},
		{"last line", "a\nb\nc\n", 1, "c\n"},
		{"no trailing newline", "a\nb\nc", 2, "b\nc"},
		{"no trailing newline, one line", "a\nb\nc", 1, "c"},
		{"single line without newline", "only", 1, "only"},
		{"n equals the line count", "a\nb\nc\n", 3, "a\nb\nc\n"},
		{"n larger than the line count", "a\nb\nc\n", 10, "a\nb\nc\n"},
		{"n larger, no trailing newline", "a\nb", 5, "a\nb"},
		{"blank last lines count", "a\n\n\n", 2, "\n\n"},
		{"only newlines", "\n\n\n", 1, "\n"},
		{"leading blank line kept when all is asked", "\na\n", 5, "\na\n"},
		{"multibyte lines", "日本\n語\n😀\n", 2, "語\n😀\n"},
		{"line longer than several blocks", "head\n" + big + "\n", 1, big + "\n"},
		{"line longer than several blocks, no newline", "head\n" + big, 1, big},
		{"tail spans blocks", "head\n" + big + "\nz\n", 2, big + "\nz\n"},
		{"whole big file", big, 1, big},
		{"many lines, tail in the first block", many, 3, many[len(many)-3*40:]},
		{"many lines, tail spans several blocks", many, 4000, many[len(many)-4000*40:]},
		{"newline just before the last block",
			"head\n" + strings.Repeat("x", tailBlock-1) + "\n", 1, strings.Repeat("x", tailBlock-1) + "\n"},
		{"newline is the first byte of the last block",
			"head\n" + strings.Repeat("x", tailBlock-2) + "\n", 1, strings.Repeat("x", tailBlock-2) + "\n"},
		{"newline is the last byte before the last block",
			"head\n" + strings.Repeat("x", tailBlock) + "\n", 1, strings.Repeat("x", tailBlock) + "\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f, err := os.Open(writeOutputFile(t, c.content))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			got, size, err := readTail(f, c.n)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != c.want {
				t.Errorf("`qtask logs --tail %d` of a %d-byte file printed %s, want %s",
					c.n, len(c.content), abbrev(string(got)), abbrev(c.want))
			}
			if size != int64(len(c.content)) {
				t.Errorf("readTail reported size %d, want %d: a follow after --tail would skip or repeat output", size, len(c.content))
			}
		})
	}
}

// abbrev quotes s, eliding the middle of long strings.
func abbrev(s string) string {
	if len(s) <= 80 {
		return strings.ReplaceAll(strings.ReplaceAll(`"`+s+`"`, "\n", `\n`), "\x00", `\0`)
	}
	return abbrev(s[:30]) + "…(" + strconv.Itoa(len(s)) + " bytes)…" + abbrev(s[len(s)-30:])
}

func TestNthLastIndex(t *testing.T) {
	cases := []struct {
		b    string
		n    int
		want int
	}{
		{"", 1, -1},
		{"abc", 1, -1},
		{"a\nb\n", 1, 3},
		{"a\nb\n", 2, 1},
		{"a\nb\n", 3, -1},
		{"\n", 1, 0},
		{"\n\n", 2, 0},
		{"a\nb\n", 0, -1},
	}
	for _, c := range cases {
		if got := nthLastIndex([]byte(c.b), '\n', c.n); got != c.want {
			t.Errorf("nthLastIndex(%q, '\\n', %d) = %d, want %d", c.b, c.n, got, c.want)
		}
	}
}

func TestLastLine(t *testing.T) {
	cases := []struct {
		name    string
		content string
		max     int
		want    string
	}{
		{"empty", "", 200, ""},
		{"one line", "sh: 1: nosuch: not found\n", 200, "sh: 1: nosuch: not found"},
		{"last of several", "a\nb\nsh: nosuch: command not found\n", 200, "sh: nosuch: command not found"},
		{"no trailing newline", "a\nlast", 200, "last"},
		{"one blank line after", "a\nlast\n\n", 200, "last"},
		{"several blank lines after", "a\nlast\n\n\n", 200, "last"},
		{"only blank lines before the end", "last\n\n\n\n", 200, "last"},
		{"whitespace-only last line", "a\nlast\n   \n", 200, "last"},
		{"surrounding spaces trimmed", "a\n   last words  \n", 200, "last words"},
		{"cut to max bytes", "0123456789\n", 4, "0123"},
		{"cut never splits a rune", "é日本語\n", 6, "é日"},
		{"cut before a 4-byte rune", "ab😀\n", 5, "ab"},
		{"last line larger than a block", "a\n" + strings.Repeat("z", tailBlock+10) + "\n", 10, "zzzzzzzzzz"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := LastLine(writeOutputFile(t, c.content), c.max)
			if got != c.want {
				t.Errorf("a task failing with output %s reports last line %q, want %q", abbrev(c.content), got, c.want)
			}
			if len(got) > c.max || !utf8.ValidString(got) {
				t.Errorf("last line %q is longer than %d bytes or not valid UTF-8", got, c.max)
			}
		})
	}
	if got := LastLine(filepath.Join(t.TempDir(), "missing.log"), 200); got != "" {
		t.Errorf("LastLine of a missing file = %q, want \"\"", got)
	}
}

func TestCutUTF8(t *testing.T) {
	cases := []struct {
		s    string
		max  int
		want string
	}{
		{"", 0, ""},
		{"", 5, ""},
		{"abc", 5, "abc"},
		{"abc", 3, "abc"},
		{"abc", 2, "ab"},
		{"abc", 0, ""},
		{"é", 1, ""},
		{"aé", 2, "a"},
		{"aé", 3, "aé"},
		{"日本", 5, "日"},
		{"日本", 4, "日"},
		{"日本", 3, "日"},
		{"日本", 2, ""},
		{"😀x", 3, ""},
		{"😀x", 4, "😀"},
		{"x😀", 4, "x"},
	}
	for _, c := range cases {
		got := CutUTF8(c.s, c.max)
		if got != c.want {
			t.Errorf("CutUTF8(%q, %d) = %q, want %q", c.s, c.max, got, c.want)
		}
		if len(got) > c.max || !utf8.ValidString(got) {
			t.Errorf("CutUTF8(%q, %d) = %q: too long or a split rune", c.s, c.max, got)
		}
	}
}

func TestLastChars(t *testing.T) {
	big := numberedLines(3000, 30) // > 64 KiB
	cases := []struct {
		name    string
		content string
		n       int
		want    string
		cut     bool
	}{
		{"empty", "", 10, "", false},
		{"shorter than n", "hello", 10, "hello", false},
		{"exactly n", "hello", 5, "hello", false},
		{"one more than n", "hello", 4, "ello", true},
		{"last char", "hello", 1, "o", true},
		{"n zero", "hello", 0, "", true},
		{"multibyte exactly n", "日本語", 3, "日本語", false},
		{"multibyte, cut", "日本語テキスト", 3, "キスト", true},
		{"window starts mid-rune", "a日本", 1, "本", true},
		{"window starts mid-rune, ascii before", "abcdefgh日", 2, "h日", true},
		{"4-byte runes", "x😀😀", 2, "😀😀", true},
		{"4-byte runes, whole", "😀😀", 2, "😀😀", false},
		{"mixed widths, whole file", "a\né\n日\n😀\n", 8, "a\né\n日\n😀\n", false},
		{"mixed widths, cut", "a\né\n日\n😀\n", 5, "\n日\n😀\n", true},
		{"big file", big, 45, big[len(big)-45:], true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, cut, err := LastChars(writeOutputFile(t, c.content), c.n)
			if err != nil {
				t.Fatal(err)
			}
			if got != c.want || cut != c.cut {
				t.Errorf("`qtask status` recent output of %s (last %d chars) shows %s (cut=%v), want %s (cut=%v)",
					abbrev(c.content), c.n, abbrev(got), cut, abbrev(c.want), c.cut)
			}
			if !bytes.HasSuffix([]byte(c.content), []byte(got)) {
				t.Errorf("recent output %s is not the end of the file", abbrev(got))
			}
		})
	}
	if _, _, err := LastChars(filepath.Join(t.TempDir(), "missing.log"), 10); err == nil {
		t.Error("LastChars of a missing output file reported no error")
	}
}

// A notification carries the end of its task's output as bytes: the last
// n of them, whether more came before, and a missing file an error that
// says so (the notification is still told, its tail empty and not cut).
func TestLastBytes(t *testing.T) {
	cases := []struct {
		content string
		n       int
		want    string
		cut     bool
	}{
		{"", 10, "", false},
		{"hello", 10, "hello", false},
		{"hello", 5, "hello", false},
		{"hello", 4, "ello", true},
		{"hello", 0, "", true},
		{"日本", 4, "\xa5本", true}, // bytes, not characters: it may begin inside one
	}
	for _, c := range cases {
		got, cut, err := File{Task: "0123abcd", Path: writeOutputFile(t, c.content)}.LastBytes(c.n)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != c.want || cut != c.cut {
			t.Errorf("last %d bytes of %q = %q (cut=%v), want %q (cut=%v)", c.n, c.content, got, cut, c.want, c.cut)
		}
	}
	_, _, err := File{Task: "0123abcd", Path: filepath.Join(t.TempDir(), "missing.log")}.LastBytes(10)
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("last bytes of a missing output file: %v, want an error that is fs.ErrNotExist", err)
	}
}
