package output

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

var printCases = []struct {
	name, in, want string
}{
	{"clean text passes", "hello\tworld\n日本 é €\n", "hello\tworld\n日本 é €\n"},
	{"c0 controls dropped", "a\x1b[2Jb\x07c\x00d\re\x7ff\n", "a[2Jbcdef\n"},
	{"c1 csi dropped", "a\u009b2Jb\n", "a2Jb\n"},
	{"every c1 dropped", "\u0080\u0085\u008d\u0090\u009c\u009fx", "x"},
	{"raw c1 bytes dropped", "a\x9b2J\x90b\x85\n", "a2Jb\n"},
	{"other stray bytes kept", "a\xffb\xc3(\n", "a\xffb\xc3(\n"},
	{"no-break space kept", "a\u00a0b\n", "a\u00a0b\n"},
	{"unfinished rune at the end dropped", "ab\xe2\x82", "ab"},
}

func TestPrintText(t *testing.T) {
	for _, c := range printCases {
		t.Run(c.name, func(t *testing.T) {
			if got := PrintText(c.in); got != c.want {
				t.Errorf("PrintText(%q) = %q, want %q", c.in, got, c.want)
			}
		})
	}
}

// outputFile is a task's output file holding data.
func outputFile(t testing.TB, data []byte) File {
	t.Helper()
	path := filepath.Join(t.TempDir(), "out.log")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return File{Task: "0000000a", Path: path}
}

// readRange is `qtask logs --offset --limit` on the task's output.
func readRange(t testing.TB, task File, offset, limit int64) string {
	t.Helper()
	var out bytes.Buffer
	if err := task.Read(&out, offset, limit); err != nil {
		t.Fatal(err)
	}
	return out.String()
}

// checkPrintable fails if out holds anything a terminal could act on.
func checkPrintable(t testing.TB, in []byte, out string) {
	t.Helper()
	for i := 0; i < len(out); {
		r, n := utf8.DecodeRuneInString(out[i:])
		bad := r < 0x20 && r != '\t' && r != '\n' || r == 0x7f || 0x80 <= r && r <= 0x9f ||
			r == utf8.RuneError && n == 1 && out[i] <= 0x9f
		if bad {
			t.Fatalf("printing %q gave %q, which holds %q at %d", in, out, out[i:i+n], i)
		}
		i += n
	}
}

// checkPieces reads data whole and cut at every position and fails if the
// pieces do not add up to the whole.
func checkPieces(t testing.TB, data []byte) {
	t.Helper()
	task := outputFile(t, data)
	whole := readRange(t, task, 0, 0)
	checkPrintable(t, data, whole)
	for k := int64(1); k < int64(len(data)); k++ {
		if got := readRange(t, task, 0, k) + readRange(t, task, k, 0); got != whole {
			t.Fatalf("reading %q in two pieces cut at %d gives %q, whole %q", data, k, got, whole)
		}
	}
}

func TestReadOutputPiecesAddUp(t *testing.T) {
	for _, c := range printCases {
		checkPieces(t, []byte(c.in))
	}
	checkPieces(t, []byte("€\u009b€é\u0085日"))
}

func TestReadOutputLimitCutsRunesAsWritten(t *testing.T) {
	// The range ends inside "€" (3 bytes): the bytes of it inside the range
	// are printed, so an agent reading in pieces gets the rune back whole.
	data := []byte("ab€cd")
	task := outputFile(t, data)
	if got := readRange(t, task, 0, 3); got != "ab\xe2" {
		t.Errorf("first 3 bytes of %q: %q, want %q", data, got, "ab\xe2")
	}
	if got := readRange(t, task, 3, 0); got != "\x82\xaccd" {
		t.Errorf("bytes 3.. of %q: %q, want %q", data, got, "\x82\xaccd")
	}
	// Cut inside a C1 control, neither piece prints either half of it.
	data = []byte("a\u009bb")
	task = outputFile(t, data)
	if got := readRange(t, task, 0, 2) + "|" + readRange(t, task, 2, 0); got != "a|b" {
		t.Errorf("reading %q cut inside U+009B: %q, want %q", data, got, "a|b")
	}
}

func TestOutputTailIsPrintable(t *testing.T) {
	task := outputFile(t, []byte("one\n\x1b]0;x\x07two\u009b31m\n"))
	tail, _, err := task.Tail(100)
	if err != nil || tail != "one\n]0;xtwo31m\n" {
		t.Errorf("Tail = %q, %v; want the text without controls", tail, err)
	}
	var out strings.Builder
	if _, err := task.WriteTail(&out, 1); err != nil || out.String() != "]0;xtwo31m\n" {
		t.Errorf("WriteTail = %q, %v; want the last line without controls", out.String(), err)
	}
}

func FuzzPrintFilter(f *testing.F) {
	for _, c := range printCases {
		f.Add([]byte(c.in), uint16(1))
	}
	f.Fuzz(func(t *testing.T, data []byte, cut uint16) {
		task := outputFile(t, data)
		whole := readRange(t, task, 0, 0)
		checkPrintable(t, data, whole)
		k := int64(cut) % (int64(len(data)) + 1)
		if got := readRange(t, task, 0, k) + readRange(t, task, k, 0); k > 0 && got != whole {
			t.Fatalf("reading %q in two pieces cut at %d gives %q, whole %q", data, k, got, whole)
		}
		// Written in pieces (as a follow sees a growing file), the same.
		var out bytes.Buffer
		pf := NewPrintFilter(&out, 0, -1)
		pf.Write(data[:k])
		pf.Write(data[k:])
		if out.String() != whole {
			t.Fatalf("filtering %q written in two pieces at %d gives %q, whole %q", data, k, out.String(), whole)
		}
	})
}
