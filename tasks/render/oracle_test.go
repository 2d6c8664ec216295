package render

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fullScreenNote starts the line that stands for a full-screen program's
// output, which tmux's rendering does not have.
const fullScreenNote = "[qtask: full-screen program output not kept ("

// TestOracle replays each recorded byte stream (testdata/oracle/*.raw,
// made by record.sh from real programs and from imitations of them) and
// compares the text with tmux's own rendering of the same bytes in an 80×24
// pane. A program that used the alternate screen must leave exactly one
// note in its place; everything else must match tmux line for line.
func TestOracle(t *testing.T) {
	raws, err := filepath.Glob("testdata/oracle/*.raw")
	if err != nil || len(raws) < 20 {
		t.Fatalf("oracle corpus missing: %d files, %v", len(raws), err)
	}
	for _, raw := range raws {
		name := strings.TrimSuffix(filepath.Base(raw), ".raw")
		t.Run(name, func(t *testing.T) {
			in, err := os.ReadFile(raw)
			if err != nil {
				t.Fatal(err)
			}
			want, err := os.ReadFile(strings.TrimSuffix(raw, ".raw") + ".want")
			if err != nil {
				t.Fatal(err)
			}
			got := renderAll(t, in, 80, 24)
			notes := strings.Count(got, fullScreenNote)
			fullScreen := bytes.Contains(in, []byte("\x1b[?1049h"))
			if fullScreen != (notes == 1) || notes > 1 {
				t.Errorf("%d full-screen notes, want %d:\n%s", notes, map[bool]int{true: 1}[fullScreen], got)
			}
			if g, w := normalise(dropNotes(got)), normalise(string(want)); g != w {
				t.Errorf("renderer and tmux differ\n--- renderer\n%s\n--- tmux\n%s", g, w)
			}
		})
	}
}

// renderAll renders in, written in pieces of every size from 1 byte up so
// that splits fall everywhere, and checks that the split does not matter.
func renderAll(t *testing.T, in []byte, width, height int) string {
	t.Helper()
	var whole bytes.Buffer
	s := New(&whole, Options{Width: width, Height: height})
	s.Write(in)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	for _, step := range []int{1, 3, 7, 64} {
		var split bytes.Buffer
		s := New(&split, Options{Width: width, Height: height})
		for p := in; len(p) > 0; {
			n := min(step, len(p))
			s.Write(p[:n])
			p = p[n:]
		}
		s.Close()
		if split.String() != whole.String() {
			t.Fatalf("output depends on how the input is split (pieces of %d):\n%s\n--- whole\n%s", step, split.String(), whole.String())
		}
	}
	return whole.String()
}

// dropNotes removes the full-screen note lines.
func dropNotes(s string) string {
	var b strings.Builder
	for _, line := range strings.SplitAfter(s, "\n") {
		if !strings.HasPrefix(line, fullScreenNote) {
			b.WriteString(line)
		}
	}
	return b.String()
}

// normalise expands tabs (tmux 3.3 writes the columns a tab skipped as
// spaces), drops trailing blanks of each line and trailing empty lines.
func normalise(s string) string {
	lines := strings.Split(s, "\n")
	for i, line := range lines {
		lines[i] = strings.TrimRight(expandTabs(line), " ")
	}
	for len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return strings.Join(lines, "\n")
}

func expandTabs(line string) string {
	if !strings.Contains(line, "\t") {
		return line
	}
	var b strings.Builder
	col := 0
	for _, r := range line {
		if r == '\t' {
			n := TabWidth - col%TabWidth
			b.WriteString(strings.Repeat(" ", n))
			col += n
			continue
		}
		b.WriteRune(r)
		col += RuneWidth(r)
	}
	return b.String()
}
