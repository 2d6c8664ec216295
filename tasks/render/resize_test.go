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
