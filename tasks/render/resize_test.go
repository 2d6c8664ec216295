package render

import (
	"bytes"
	"os"
	"strconv"
	"strings"
	"testing"
)

// TestResizeOracle replays the resize cases (testdata/resize/cases.txt:
// bytes written to a pane, the pane resized, more bytes) and compares the
// text with tmux's rendering of the same steps, recorded by record.sh.
// Lines written after a resize wrap at the new width, and the lines on
// the screen are reflowed as tmux reflows them.
func TestResizeOracle(t *testing.T) {
	cases, err := os.ReadFile("testdata/resize/cases.txt")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, line := range strings.Split(string(cases), "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		n++
		fields := strings.Split(line, "|")
		name := fields[0]
		t.Run(name, func(t *testing.T) {
			want, err := os.ReadFile("testdata/resize/" + name + ".want")
			if err != nil {
				t.Fatal(err)
			}
			w, h := parseSize(t, fields[1])
			var out bytes.Buffer
			s := New(&out, Options{Width: w, Height: h})
			for _, step := range fields[2:] {
				switch kind, arg, _ := strings.Cut(step, ":"); kind {
				case "p":
					text, err := strconv.Unquote(`"` + arg + `"`)
					if err != nil {
						t.Fatalf("step %q: %v", step, err)
					}
					s.Write([]byte(text))
				case "r":
					s.Resize(parseSize(t, arg))
				default:
					t.Fatalf("unknown step %q", step)
				}
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			if g, w := normalise(dropNotes(out.String())), normalise(string(want)); g != w {
				t.Errorf("renderer and tmux differ\n--- renderer\n%s\n--- tmux\n%s", g, w)
			}
		})
	}
	if n < 10 {
		t.Fatalf("only %d resize cases", n)
	}
}

func parseSize(t *testing.T, s string) (int, int) {
	t.Helper()
	ws, hs, _ := strings.Cut(s, "x")
	w, err1 := strconv.Atoi(ws)
	h, err2 := strconv.Atoi(hs)
	if err1 != nil || err2 != nil {
		t.Fatalf("bad size %q", s)
	}
	return w, h
}

// TestTallerPaneWhereTheFileKeepsMore: where the file deliberately keeps
// what tmux's pane no longer has. A clear with clear-history (`clear`'s
// ESC[2J ESC[3J) drops tmux's history; the file keeps those lines, and a
// pane that grows taller afterwards pulls nothing back, as in tmux. A row
// pulled back onto a taller pane and then rewritten is in the file as it
// was and again as rewritten (the first is final already), where tmux
// shows only the new text; rows pulled back and left alone are not
// written twice.
func TestTallerPaneWhereTheFileKeepsMore(t *testing.T) {
	for _, tc := range []struct {
		name, before, after string
		want                string
	}{
		{"clear-history keeps the lines", "h1\r\nh2\r\nh3\r\nh4\r\nh5\r\n\x1b[2J\x1b[3J", "\x1b[Hnew\r\n", "h1\nh2\nh3\nh4\nh5\nnew\n"},
		{"nothing pulled back after clear-history", "h1\r\nh2\r\nh3\r\nh4\r\nh5\x1b[3J", "\x1b[2;1HTWO\x1b[5;1Hend", "h1\nh2\nh3\nTWO\nh5\n\nend\n"},
		{"a pulled-back row rewritten", "one\r\ntwo\r\nthree\r\nfour", "\x1b[HONE", "one\nONE\ntwo\nthree\nfour\n"},
		{"pulled-back rows left alone", "one\r\ntwo\r\nthree\r\nfour", "\x1b[3;1HTHREE\x1b[5;1Hmore", "one\ntwo\nTHREE\nfour\nmore\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			s := New(&out, Options{Width: 20, Height: 3})
			s.Write([]byte(tc.before))
			s.Resize(20, 5)
			s.Write([]byte(tc.after))
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			if got := out.String(); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}
