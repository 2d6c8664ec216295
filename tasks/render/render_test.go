package render

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"
	"unicode/utf8"
)

// render runs in through an 80×24 Screen and returns all of its text.
func render(t testing.TB, in string, opts Options) string {
	t.Helper()
	var out bytes.Buffer
	s := New(&out, opts)
	if _, err := s.Write([]byte(in)); err != nil {
		t.Fatal(err)
	}
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	return out.String()
}

func TestScreen(t *testing.T) {
	for _, tc := range []struct {
		name, in, want string
	}{
		{"plain lines", "a\r\nb\r\n", "a\nb\n"},
		{"no final newline", "a\r\nb", "a\nb\n"},
		{"cr redraw", "10%\r20%\r100%\r\n", "100%\n"},
		{"cr redraw shorter keeps the rest", "abcdef\rxy\r\n", "xycdef\n"},
		{"backspace overstrike", "b\bbo\bo\r\n", "bo\n"},
		{"cursor up redraw", "one\r\ntwo\r\n\x1b[2Aun\r\n", "une\ntwo\n"},
		{"column 1 redraw", "⠙\x1b[1G\x1b[0K⠹\x1b[1G\x1b[0Kdone\r\n", "done\n"},
		{"erased before exit", "out\r\n:\r\x1b[K", "out\n"},
		{"save restore status line", "a\r\n\x1b7\x1b[24;1Hstatus\x1b8b\r\n", "a\nb\n" + strings.Repeat("\n", 21) + "status\n"},
		{"tab kept", "a\tb\r\n", "a\tb\n"},
		{"tab to a custom stop", "\x1b[3g\x1b[5G\x1bH\x1b[9G\x1bH\rx\ty\tz\r\n", "x   y\tz\n"},
		{"tab to the last column", "\x1b[3ga\tb\r\n", "a" + strings.Repeat(" ", 78) + "b\n"},
		{"tab overwritten", "a\tb\r\x1b[3Cx\r\n", "a  x    b\n"},
		{"tab moved by insert", "\tx\r\x1b[10@\r\n", strings.Repeat(" ", 18) + "x\n"},
		{"tab moved by delete", "ab\tx\r\x1b[P\r\n", "b      x\n"},
		{"wide and combining", "日本e\u0301\r\n", "日本e\u0301\n"},
		{"autowrap joins", strings.Repeat("x", 85) + "\r\n", strings.Repeat("x", 85) + "\n"},
		{"autowrap off", "\x1b[?7l" + strings.Repeat("x", 85) + "y\r\n", strings.Repeat("x", 79) + "y\n"},
		{"c1 controls dropped", "a\u009b31mb\u0085c\r\n", "a31mbc\n"},
		{"osc title skipped", "\x1b]0;title\x07a\x1b]2;t\x1b\\b\r\n", "ab\n"},
		{"insert and delete chars", "abcdef\x1b[3D\x1b[2@XY\r\n", "abcXYdef\n"},
		{"full-screen note", "x\r\n\x1b[?1049h" + strings.Repeat("~\r\n", 2000) + "\x1b[?1049ly\r\n",
			"x\n[qtask: full-screen program output not kept (vim, 6 KB)]\ny\n"},
		{"full-screen at exit", "x\r\n\x1b[?1049hdrawn", "x\n[qtask: full-screen program output not kept (vim, 1 KB)]\n"},
		{"binary", "a\r\n\x00\x01\x02" + strings.Repeat("z", 1100), "a\n[qtask: binary output suppressed: 3 bytes]\n" + strings.Repeat("z", 1100) + "\n"},
		{"invalid utf-8 replaced", "a\xffb\r\n", "a\uFFFDb\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := render(t, tc.in, Options{Width: 80, Height: 24, Program: "vim"}); got != tc.want {
				t.Errorf("got  %q\nwant %q", got, tc.want)
			}
		})
	}
}

// TestFinalAndLive: rows become final only when they scroll off the pane;
// until then they are the live region, which follows every redraw.
func TestFinalAndLive(t *testing.T) {
	var out bytes.Buffer
	s := New(&out, Options{Width: 20, Height: 3})
	write := func(p string) { s.Write([]byte(p)); s.Flush() }
	write("one\r\ntwo\r\n 10%")
	if out.Len() != 0 {
		t.Fatalf("final lines before anything scrolled: %q", out.String())
	}
	if live, settled := s.AppendLive(nil); string(live) != "one\ntwo\n 10%\n" || settled != len("one\ntwo\n") {
		t.Fatalf("live region %q, %d bytes settled", live, settled)
	}
	write("\r 50%\r\nthree\r\nfour")
	if got := out.String(); got != "one\ntwo\n" {
		t.Fatalf("final lines %q", got)
	}
	if live, _ := s.AppendLive(nil); string(live) != " 50%\nthree\nfour\n" {
		t.Fatalf("live region %q", live)
	}
	s.Close()
	if got := out.String(); got != "one\ntwo\n 50%\nthree\nfour\n" {
		t.Fatalf("after close %q", got)
	}
}

// TestSettled: lines above the cursor are settled, except from the row a
// program last went back up to: the rows it is redrawing.
func TestSettled(t *testing.T) {
	for _, tc := range []struct{ name, in, settled string }{
		{"plain lines", "a\r\nb\r\nc", "a\nb\n"},
		{"nested bars", "log\r\nouter 1\n\rinner 1\x1b[A\r", "log\n"},
		{"live block", "log\r\nbar 1\r\nbar 2\r\x1b[2K\x1b[1A\x1b[2Kbar 1\r\n", "log\n"},
		{"status line kept by save/restore", "a\r\n\x1b7\x1b[24;1Hstatus\x1b8b\r\nc", "a\n"},
		{"wrapped line above the cursor", strings.Repeat("x", 90) + "\r\ny", strings.Repeat("x", 90) + "\n"},
		{"full-screen", "a\r\n\x1b[?1049hb\r\n", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := New(discard{}, Options{Width: 80, Height: 24})
			s.Write([]byte(tc.in))
			for i, r := range s.rows {
				for c := r.hi; c < len(r.cells); c++ {
					if r.cells[c].kind != cellBlank {
						t.Fatalf("row %d: column %d written beyond hi %d", i, c, r.hi)
					}
				}
			}
			live, settled := s.AppendLive(nil)
			if got := string(live[:settled]); got != tc.settled {
				t.Errorf("settled %q of %q, want %q", got, live, tc.settled)
			}
		})
	}
}

// TestNote: a line of qtask's own (a gap in the output) stands on a line
// of its own where the stream has got to, never over the program's text.
func TestNote(t *testing.T) {
	const gap = "[qtask: output lost]"
	for _, tc := range []struct{ name, before, after, want string }{
		{"between lines", "a\r\n", "b\r\n", "a\n" + gap + "\nb\n"},
		{"ends a partial line", "half", "next\r\n", "half\n" + gap + "\nnext\n"},
		{"after a pending CR", "50%\r", "60%\r\n", "50%\n" + gap + "\n60%\n"},
		{"at the start", "", "a\r\n", gap + "\na\n"},
		{"a split rune is invalid", "a\xe2\x82", "b\r\n", "a\ufffd\ufffd\n" + gap + "\nb\n"},
		{"forgets an open escape", "x\x1b[3", "1mred\r\n", "x\n" + gap + "\n1mred\n"},
		{"binary noted first", "\x00\x00\x00", "text\r\n", "[qtask: binary output suppressed: 3 bytes]\n" + gap + "\ntext\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			s := New(&out, Options{Width: 80, Height: 24})
			s.Write([]byte(tc.before))
			s.Note(gap)
			s.Write([]byte(tc.after))
			s.Close()
			if got := out.String(); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestWriterErrorSticks(t *testing.T) {
	s := New(failWriter{}, Options{Width: 10, Height: 2})
	s.Write([]byte(strings.Repeat("line\r\n", 10)))
	err := s.Flush()
	if err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Fatalf("error %v", err)
	}
	if _, err2 := s.Write([]byte("x")); err2 == nil {
		t.Fatal("later write succeeded after a failure")
	}
}

// TestMemoryBounded: a long stream through a 500×200 pane keeps the heap
// small whatever the content.
func TestMemoryBounded(t *testing.T) {
	s := New(discard{}, Options{Width: 500, Height: 200})
	r := rand.New(rand.NewPCG(1, 2))
	chunk := make([]byte, 64<<10)
	var before runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for range 200 {
		fillStream(r, chunk)
		s.Write(chunk)
	}
	var after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&after)
	if grew := int64(after.HeapAlloc) - int64(before.HeapAlloc); grew > 4<<20 {
		t.Fatalf("heap grew by %d bytes over 12 MB of input", grew)
	}
	runtime.KeepAlive(s)
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

// fillStream fills b with a terminal-ish stream: text, controls, escape
// sequences with large parameters, combining marks.
func fillStream(r *rand.Rand, b []byte) {
	pieces := []string{"text ", "日本", "e\u0301\u0301\u0301", "\r", "\n", "\t", "\b", "\x1b[", "999", ";", "A", "B", "H", "J", "K", "L", "M", "@", "P", "r", "\x1b7", "\x1b8", "\x1bM", "\x1b[?1049h", "\x1b[?1049l", "\x1b]0;", "\x07", "\xff", "🎉"}
	for i := 0; i < len(b); {
		i += copy(b[i:], pieces[r.IntN(len(pieces))])
	}
}

func FuzzScreen(f *testing.F) {
	f.Add([]byte("a\r\nb\x1b[Ac\x1b[2J\x1b[?1049hx\x1b[?1049l"), uint16(80), uint16(24), uint64(1))
	f.Add([]byte("\x1b[?7l日本x"), uint16(1), uint16(1), uint64(4))
	f.Add([]byte("\x00binary\xff\xfe"), uint16(1), uint16(1), uint64(2))
	f.Add([]byte("日本\t\x1b[5;10r\x1b[S\x1b[T\x1b[3L\x1b[2M\x1b[10b"), uint16(3), uint16(2), uint64(3))
	f.Fuzz(func(t *testing.T, in []byte, w, h uint16, seed uint64) {
		opts := Options{Width: int(w % 600), Height: int(h % 300)}
		// Halfway, the pane turns to the other size.
		half, w2, h2 := len(in)/2, int(h%600), int(w%300)
		var whole bytes.Buffer
		s := New(&whole, opts)
		s.Write(in[:half])
		s.Resize(w2, h2)
		s.Write(in[half:])
		live, settled := s.AppendLive(nil)
		if settled < 0 || settled > len(live) || settled > 0 && live[settled-1] != '\n' {
			t.Fatalf("%d bytes of %q settled: not whole lines", settled, live)
		}
		s.Close()
		checkText(t, whole.Bytes())
		checkText(t, live)
		r := rand.New(rand.NewPCG(seed, seed))
		var split bytes.Buffer
		s = New(&split, opts)
		for _, part := range [][]byte{in[:half], in[half:]} {
			for p := part; len(p) > 0; {
				n := min(len(p), 1+r.IntN(16))
				s.Write(p[:n])
				p = p[n:]
			}
			s.Resize(w2, h2)
		}
		s.Close()
		if split.String() != whole.String() {
			t.Fatalf("split input renders differently:\n%q\n%q", split.String(), whole.String())
		}
	})
}

// checkText fails unless b is valid UTF-8 without controls but tab and
// newline.
func checkText(t *testing.T, b []byte) {
	t.Helper()
	if !utf8.Valid(b) {
		t.Fatalf("invalid UTF-8: %q", b)
	}
	for _, r := range string(b) {
		if (r < 0x20 && r != '\t' && r != '\n') || (r >= 0x7f && r < 0xa0) {
			t.Fatalf("control %U in output %q", r, b)
		}
	}
}

func BenchmarkScreen(b *testing.B) {
	for _, c := range []struct {
		name string
		line func(i int) string
	}{
		{"lines", func(i int) string {
			return fmt.Sprintf("2024-05-01 12:00:00 \x1b[32mINFO\x1b[0m request %d handled in 12ms path=/api/v1/items status=200 user=日本\r\n", i)
		}},
		{"cr-redraw", func(i int) string {
			return fmt.Sprintf("\r%3d%%|%s| %d/1000 [00:01<00:02]", i%100, strings.Repeat("#", i%40), i)
		}},
		{"cursor-up-bars", func(i int) string {
			return fmt.Sprintf("\r\x1b[2Kouter %d%%\n\r\x1b[2Kinner %d%%\x1b[A", i%100, i%37)
		}},
	} {
		var in []byte
		for i := 0; len(in) < 8<<20; i++ {
			in = append(in, c.line(i)...)
		}
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(in)))
			for range b.N {
				s := New(discard{}, Options{Width: 80, Height: 24})
				for p := in; len(p) > 0; {
					n := min(len(p), 32<<10)
					s.Write(p[:n])
					p = p[n:]
				}
				s.Close()
			}
		})
	}
}

// TestKeepLastScreen: with KeepLastScreen, a full-screen program's last
// screen follows its note, down to its last row holding text; without it,
// only the note is kept.
func TestKeepLastScreen(t *testing.T) {
	in := "x\r\n\x1b[?1049h\x1b[2J\x1b[Hfirst frame\x1b[2J\x1b[Htop\tline\r\n\r\n\x1b[5;3Hlast\x1b[?1049ly\r\n"
	note := "[qtask: full-screen program output not kept (less, 1 KB)]\n"
	if got, want := render(t, in, Options{Width: 80, Height: 24, Program: "less", KeepLastScreen: true}),
		"x\n"+note+"top\tline\n\n\n\n  last\ny\n"; got != want {
		t.Errorf("kept:\ngot  %q\nwant %q", got, want)
	}
	if got, want := render(t, in, Options{Width: 80, Height: 24, Program: "less"}), "x\n"+note+"y\n"; got != want {
		t.Errorf("not kept:\ngot  %q\nwant %q", got, want)
	}
}

// A capture that starts on a pane already showing its program's output
// (an adopted pane) goes on from that screen: a bar redrawn in place stays
// one line, and the rows that are not the task's are never output.
func TestSeed(t *testing.T) {
	screen := []string{"$ make", "building", "step 1 of 3", "", ""}
	for _, tc := range []struct {
		name      string
		hidden    int
		alternate bool
		resize    bool
		in        string
		want      string
	}{
		{"the bar goes on in place", 1, false, false, "\rstep 3 of 3\r\ndone\r\n", "building\nstep 3 of 3\ndone\n"},
		{"cursor up reaches the seeded rows", 1, false, false, "\x1b[A\rbuilt   \x1b[B\rstep 2 of 3", "built\nstep 2 of 3\n"},
		{"hidden rows scroll off unseen", 1, false, false, "\r\n1\r\n2\r\n3\r\n4\r\n5\r\n", "building\nstep 1 of 3\n1\n2\n3\n4\n5\n"},
		{"a hidden row written to is output", 1, false, false, "\x1b[H$ make # edited", "$ make # edited\nbuilding\nstep 1 of 3\n"},
		{"all hidden", 3, false, false, "\r\ndone\r\n", "done\n"},
		{"hidden rows stay hidden through a resize", 1, false, true, "\rstep 3 of 3\r\ndone\r\n", "building\nstep 3 of 3\ndone\n"},
		{"full-screen program", 0, true, false, "\x1b[2J\x1b[Hmenu\x1b[?1049lbye\r\n", "[qtask: full-screen program output not kept (vim, 1 KB)]\nbye\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			s := New(&out, Options{Width: 20, Height: 5, Program: "vim"})
			s.Seed(screen, tc.hidden, 11, 2, tc.alternate)
			if tc.resize {
				// The adopted pane moves to a window of another size.
				s.Resize(30, 6)
			}
			s.Write([]byte(tc.in))
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			if got := out.String(); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

// TestPiecesDoNotMatter: a stream written in one piece leaves the same
// screen and final text as the same stream written a byte at a time. The
// capture gets a pane's output in whatever pieces tmux writes, and the
// fast paths (runs of ASCII, whole control sequences) only see what one
// piece holds. The streams mix \r frames with what changes how they land:
// text longer than the row, a cursor not at column 0, wide and combining
// characters under them, erases, cursor moves, REP, autowrap off and on.
func TestPiecesDoNotMatter(t *testing.T) {
	tokens := []string{"\r", "\r", "\r", "\r\n", "\n", "日本", "e\u0301", "\x1b[2K", "\x1b[A", "\x1b[5G", "\b", "\t", "\x1b[3b", "\x1b[?7l", "\x1b[?7h"}
	rng := rand.New(rand.NewPCG(7, 11))
	ascii := func() string {
		b := make([]byte, rng.IntN(90))
		for i := range b {
			b[i] = byte(0x20 + rng.IntN(0x7f-0x20))
		}
		return string(b)
	}
	for n := range 400 {
		var in strings.Builder
		for range 1 + rng.IntN(60) {
			if rng.IntN(2) == 0 {
				in.WriteString(ascii())
			} else {
				in.WriteString(tokens[rng.IntN(len(tokens))])
			}
		}
		whole, bytewise := screens(t, in.String())
		if whole != bytewise {
			t.Fatalf("stream %d %q:\nin one piece:\n%s\nbyte by byte:\n%s", n, in.String(), whole, bytewise)
		}
	}
}

// screens writes in to one Screen in one piece and to another a byte at a
// time, and returns what each shows (live rows, then all final text).
func screens(t *testing.T, in string) (whole, bytewise string) {
	t.Helper()
	show := func(pieces [][]byte) string {
		var out bytes.Buffer
		s := New(&out, Options{Width: 40, Height: 6})
		for _, p := range pieces {
			if _, err := s.Write(p); err != nil {
				t.Fatal(err)
			}
		}
		live, _ := s.AppendLive(nil)
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		return fmt.Sprintf("cursor %d,%d last %q\nlive:\n%s\nfinal:\n%s", s.cx, s.cy, s.last, live, out.String())
	}
	var bytesIn [][]byte
	for i := range len(in) {
		bytesIn = append(bytesIn, []byte{in[i]})
	}
	return show([][]byte{[]byte(in)}), show(bytesIn)
}
