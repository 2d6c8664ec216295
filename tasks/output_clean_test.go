package tasks

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"
)

// runCleaner feeds chunks to a fresh Cleaner (with lineMax, if non-zero)
// and returns the output after Close.
func runCleaner(t testing.TB, lineMax int, opts CleanerOptions, chunks ...[]byte) string {
	t.Helper()
	var out bytes.Buffer
	c := NewCleaner(&out, opts)
	if lineMax > 0 {
		c.lineMax = lineMax
	}
	for _, p := range chunks {
		if n, err := c.Write(p); err != nil || n != len(p) {
			t.Fatalf("Write = %d, %v; want %d, nil", n, err, len(p))
		}
	}
	if err := c.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	return out.String()
}

// note is the binary note for n bytes.
func note(n int) string {
	return string(cleanBinaryNote(int64(n)))
}

var cleanerCases = []struct {
	name, in, want string
}{
	{"empty", "", ""},
	{"plain", "hello\nworld\n", "hello\nworld\n"},
	{"final newline added", "abc", "abc\n"},
	{"empty lines kept", "\n\na\n\n", "\n\na\n\n"},
	{"crlf", "a\r\nb\r\n", "a\nb\n"},
	{"onlcr doubled cr", "a\r\r\nb\r\r\n", "a\nb\n"},
	{"progress bar", "\r 10%\r 20%\r100%\n", "100%\n"},
	{"redraw keeps last", "downloading 1/3\rdownloading 2/3\rdone           \n", "done           \n"},
	{"trailing cr at end", "foo\r", "foo\n"},
	{"blank tail dropped at end", "out\n \r \t", "out\n"},
	{"zsh prompt_sp residue", "line 40\r\n\x1b[1m\x1b[7m%\x1b[27m\x1b[1m\x1b[0m         \r \r", "line 40\n"},
	{"redraw after escape", "50%\r\x1b[2K60%\n", "60%\n"},
	{"cr escape lf", "ok\r\x1b[K\n", "ok\n"},
	{"sgr colours", "\x1b[31mred\x1b[0m \x1b[1;38;5;200mbold\x1b[m\n", "red bold\n"},
	{"csi private", "\x1b[?25l\x1b[?1049hx\x1b[?25h\n", "x\n"},
	{"csi intermediate", "a\x1b[1 qb\x1b[!pc\n", "abc\n"},
	{"osc bel", "\x1b]0;my title\x07x\n", "x\n"},
	{"osc st", "\x1b]8;;http://e.com\x1b\\link\x1b]8;;\x1b\\\n", "link\n"},
	{"osc utf8 payload", "\x1b]2;t\xc3\xa9st\x07y\n", "y\n"},
	{"dcs", "\x1bPq#0;2;0;0;0#0~~@@vv\x1b\\ok\n", "ok\n"},
	{"dcs bel does not end", "\x1bPab\x07cd\x1b\\ok\n", "ok\n"},
	{"sos pm apc", "\x1bXa\x1b\\1\x1b^b\x1b\\2\x1b_c\x1b\\3\n", "123\n"},
	{"nf charset", "\x1b(Bx\x1b)0y\x1b%Gz\n", "xyz\n"},
	{"fp fe fs", "\x1b7a\x1b8\x1b=b\x1b>\x1bMc\x1bc\n", "abc\n"},
	{"esc restarts csi", "\x1b[31\x1b[0mx\n", "x\n"},
	{"esc ends osc", "\x1b]0;t\x1b[1mx\n", "x\n"},
	{"can cancels osc", "\x1b]0;ti\x18x\n", "x\n"},
	{"sub cancels csi", "\x1b[3\x1ax\n", "x\n"},
	{"control aborts csi", "\x1b[3\nx\n", "\nx\n"},
	{"high byte aborts esc", "\x1b\xc3\xa9\n", "é\n"},
	{"lone esc at end", "abc\x1b", "abc\n"},
	{"unterminated osc at end", "abc\n\x1b]0;title", "abc\n"},
	{"tmux sgr0", "a\x1b[m\x0fb\n", "ab\n"},
	{"backspace", "abc\b\bd\n", "ad\n"},
	{"backspace rune", "x\xc3\xa9\by\n", "xy\n"},
	{"backspace emoji", "a\xf0\x9f\x98\x80\bb\n", "ab\n"},
	{"backspace empty", "\b\bx\n", "x\n"},
	{"backspace after newline", "a\n\bb\n", "a\nb\n"},
	{"tab kept", "a\tb\n", "a\tb\n"},
	{"controls dropped", "a\x01\x07\x0e\x1cb\x7fc\n", "abc\n"},
	{"form feed vt dropped", "a\x0b\x0cb\n", "ab\n"},
	{"invalid utf8", "a\xffb\n", "a\uFFFDb\n"},
	{"truncated rune", "a\xe2\x82b\n", "a\uFFFD\uFFFDb\n"},
	{"truncated rune at end", "a\xe2\x82", "a\uFFFD\uFFFD\n"},
	{"overlong", "\xc0\xafx\n", "\uFFFD\uFFFDx\n"},
	{"surrogate", "\xed\xa0\x80x\n", "\uFFFD\uFFFD\uFFFDx\n"},
	{"literal replacement char", "\uFFFD\n", "\uFFFD\n"},
	{"cjk emoji", "日本語のテキスト 🎉👍🏽\n", "日本語のテキスト 🎉👍🏽\n"},
	{"c1 csi dropped", "a\u009b2Jb\n", "a2Jb\n"},
	{"c1 nel and st dropped", "a\u0085b\u009cc\u0080d\u009fe\n", "abcde\n"},
	{"c1 in a long utf8 run", "é\u009bé日\u0090\u0090本\n", "éé日本\n"},
	{"c2 lead byte kept", "\u00a0\u00a9\u00c2\n", "\u00a0\u00a9\u00c2\n"},
	{"raw c1 byte is invalid", "a\x9bb\n", "a\uFFFDb\n"},
	{"nul is binary", "text\n\x00\x01\x02", "text\n" + note(3)},
	{"binary ends pending line", "abc\x00\x00", "abc\n" + note(2)},
	{"binary after cr", "abc\r\x00", "abc\n" + note(1)},
	{"nul inside escape", "\x1b[3\x00x", note(1) + "x\n"},
	{"dense invalid is binary", "ok\n" + strings.Repeat("\xff", 100), "ok\n" + note(100)},
	{"suspect bytes taken back", "ab" + strings.Repeat("\xfe\xff", 8) + "\x00", "ab\n" + note(17)},
	{"binary then text", "\x00" + strings.Repeat("text line\n", 103), note(1) + strings.Repeat("text line\n", 103)},
	{"latin1 is text", "Gr\xf6\xdfe f\xfcr \xdcberg\xe4nge\n", "Gr\uFFFD\uFFFDe f\uFFFDr \uFFFDberg\uFFFDnge\n"},
}

func TestCleanerRules(t *testing.T) {
	for _, tc := range cleanerCases {
		t.Run(tc.name, func(t *testing.T) {
			if got := runCleaner(t, 0, CleanerOptions{}, []byte(tc.in)); got != tc.want {
				t.Errorf("clean(%q)\n got %q\nwant %q", tc.in, got, tc.want)
			}
		})
	}
}

// TestCleanerChunking checks that every case gives the same output whether
// written whole, split in two at every position, or byte by byte.
func TestCleanerChunking(t *testing.T) {
	for _, tc := range cleanerCases {
		in := []byte(tc.in)
		for i := 0; i <= len(in); i++ {
			if got := runCleaner(t, 0, CleanerOptions{}, in[:i], in[i:]); got != tc.want {
				t.Errorf("%s split at %d: got %q, want %q", tc.name, i, got, tc.want)
			}
		}
		if got := runCleaner(t, 0, CleanerOptions{}, bytesOneByOne(in)...); got != tc.want {
			t.Errorf("%s byte by byte: got %q, want %q", tc.name, got, tc.want)
		}
	}
}

func bytesOneByOne(p []byte) [][]byte {
	chunks := make([][]byte, len(p))
	for i := range p {
		chunks[i] = p[i : i+1]
	}
	return chunks
}

// randomChunks splits p at random positions.
func randomChunks(r *rand.Rand, p []byte) [][]byte {
	var chunks [][]byte
	for len(p) > 0 {
		n := 1 + r.IntN(min(len(p), 1+r.IntN(300)))
		chunks = append(chunks, p[:n])
		p = p[n:]
	}
	return chunks
}

// mixedStream is terminal output of every kind the Cleaner handles.
func mixedStream(r *rand.Rand, size int) []byte {
	pieces := []string{
		"plain words ", "\x1b[1;31m", "\x1b[0m", "日本語 ", "🎉", "\r\n", "\n", "\r 42%",
		"\x1b]0;title\x07", "\x1b]8;;url\x1b\\", "\t", "\b", "\x1b(B", "\x1b[?25l", "é",
		"\xff", "\xe2\x82", "\x0f", "\x1bPdata\x1b\\", "\r\r\n",
	}
	var b []byte
	for len(b) < size {
		if r.IntN(500) == 0 {
			b = append(b, 0)
		}
		b = append(b, pieces[r.IntN(len(pieces))]...)
	}
	return b
}

func TestCleanerRandomChunking(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for round := range 20 {
		in := mixedStream(r, 20000)
		for _, lineMax := range []int{0, 7, 100} {
			want := runCleaner(t, lineMax, CleanerOptions{}, in)
			for range 5 {
				if got := runCleaner(t, lineMax, CleanerOptions{}, randomChunks(r, in)...); got != want {
					t.Fatalf("round %d, lineMax %d: chunked output differs", round, lineMax)
				}
			}
			checkClean(t, in, want)
		}
	}
}

// checkClean fails unless out is valid UTF-8, free of control bytes other
// than tab and newline, and newline-terminated.
func checkClean(t testing.TB, in []byte, out string) {
	t.Helper()
	if !utf8.ValidString(out) {
		t.Fatalf("output of %q is not valid UTF-8: %q", in, out)
	}
	for i, r := range out {
		if (r < 0x20 && r != '\t' && r != '\n') || r == cleanDEL || 0x80 <= r && r <= 0x9f {
			t.Fatalf("output of %q has control %U at %d: %q", in, r, i, out)
		}
	}
	if out != "" && !strings.HasSuffix(out, "\n") {
		t.Fatalf("output of %q does not end in a newline: %q", in, out)
	}
}

// recorder is a destination that records each write.
type recorder struct {
	bytes.Buffer
	writes  int
	largest int
	fail    error
}

func (r *recorder) Write(p []byte) (int, error) {
	if r.fail != nil {
		return 0, r.fail
	}
	r.writes++
	r.largest = max(r.largest, len(p))
	return r.Buffer.Write(p)
}

func TestCleanerFlushPartial(t *testing.T) {
	tests := []struct {
		name   string
		before string // written before FlushPartial
		after  string // written after it, then Close
		flush  string // output right after FlushPartial
		want   string // output after Close
	}{
		{"prompt", "Continue? ", "y\n", "Continue? ", "Continue? y\n"},
		{"newline ends flushed line", "prompt", "\n", "prompt", "prompt\n"},
		{"redraw after flush starts new line", "\r 50%", "\r 60%\r 70%\n", " 50%", " 50%\n 70%\n"},
		{"cr pending at flush", "50%\r", "60%\n", "50%", "50%\n60%\n"},
		{"crlf pending at flush", "done\r", "\n", "done", "done\n"},
		{"close ends flushed line", "half", "", "half", "half\n"},
		{"nothing pending", "a\n", "b\n", "a\n", "a\nb\n"},
		{"split rune stays pending", "a\xe2\x82", "\xac\n", "a", "a€\n"},
		{"binary then prompt", "\x00\x00\x00> ", "x\n", note(3) + "> ", note(3) + "> x\n"},
		{"binary without text stays binary", "\x00\x00", "\x00", "", note(3)},
		{"backspace cannot take back", "ab", "\b\bc\n", "ab", "abc\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out recorder
			c := NewCleaner(&out, CleanerOptions{})
			c.Write([]byte(tc.before))
			if err := c.FlushPartial(); err != nil {
				t.Fatal(err)
			}
			if got := out.String(); got != tc.flush {
				t.Errorf("after FlushPartial: got %q, want %q", got, tc.flush)
			}
			c.Write([]byte(tc.after))
			if err := c.Close(); err != nil {
				t.Fatal(err)
			}
			if got := out.String(); got != tc.want {
				t.Errorf("after Close: got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestCleanerNote(t *testing.T) {
	const gap = "[qtask: output lost]"
	tests := []struct {
		name          string
		before, after string // written around the Note, then Close
		want          string
	}{
		{"between lines", "a\n", "b\n", "a\n" + gap + "\nb\n"},
		{"ends a partial line", "half", "next\n", "half\n" + gap + "\nnext\n"},
		{"ends a flushed partial line", "prompt", "", "prompt\n" + gap + "\n"},
		{"a split rune is invalid, as at Close", "a\xe2\x82", "b\n", "a\ufffd\ufffd\n" + gap + "\nb\n"},
		{"forgets an open escape", "x\x1b[3", "1mred\n", "x\n" + gap + "\n1mred\n"},
		{"forgets a pending CR", "50%\r", "60%\n", "50%\n" + gap + "\n60%\n"},
		{"notes binary first", "\x00\x00\x00", "text\n", note(3) + gap + "\ntext\n"},
		{"at the start", "", "a\n", gap + "\na\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out recorder
			c := NewCleaner(&out, CleanerOptions{})
			c.Write([]byte(tc.before))
			if tc.name == "ends a flushed partial line" {
				c.FlushPartial()
			}
			if err := c.Note(gap); err != nil {
				t.Fatal(err)
			}
			c.Write([]byte(tc.after))
			if err := c.Close(); err != nil {
				t.Fatal(err)
			}
			if got := out.String(); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestCleanerLongLine(t *testing.T) {
	line := bytes.Repeat([]byte("0123456789abcdé"), 1<<20/16)
	var out recorder
	c := NewCleaner(&out, CleanerOptions{})
	r := rand.New(rand.NewPCG(3, 4))
	for _, chunk := range randomChunks(r, line) {
		c.Write(chunk)
		if len(c.line) > cleanMaxLine || cap(c.out) > cleanOutFlush+cleanMaxLine {
			t.Fatalf("buffers grew: line %d, out cap %d", len(c.line), cap(c.out))
		}
	}
	c.Close()
	if want := string(line) + "\n"; out.String() != want {
		t.Fatalf("long line not passed through in full: got %d bytes, want %d", out.Len(), len(want))
	}
	if out.largest > cleanOutFlush+cleanMaxLine {
		t.Errorf("largest write %d", out.largest)
	}
}

func TestCleanerLongLineRedraw(t *testing.T) {
	// A redraw after the size limit flushed part of the line starts anew.
	got := runCleaner(t, 8, CleanerOptions{}, []byte("0123456789\rab\n"))
	if want := "01234567\nab\n"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	// The limit never splits a rune.
	got = runCleaner(t, 8, CleanerOptions{}, []byte("abcdefg€xyz\n"))
	if want := "abcdefg€xyz\n"; got != want || !utf8.ValidString(got) {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestCleanerLargeWrites(t *testing.T) {
	in := bytes.Repeat([]byte("a line of \x1b[32mgreen\x1b[0m text\n"), 40000)
	var out recorder
	c := NewCleaner(&out, CleanerOptions{})
	c.Write(in)
	c.Close()
	if least := out.Len() / (cleanOutFlush + cleanMaxLine); out.writes > 2*least+2 {
		t.Errorf("%d writes for %d bytes: too many small writes", out.writes, out.Len())
	}
}

func TestCleanerEndMarker(t *testing.T) {
	const marker = "qtask-end:abc:123"
	tests := []struct {
		name, in, want string
		calls          int
	}{
		{"bel", "out\n\x1b]" + marker + "\x07", "out\n", 1},
		{"st", "out\n\x1b]" + marker + "\x1b\\", "out\n", 1},
		{"once", "\x1b]" + marker + "\x07a\n\x1b]" + marker + "\x07", "a\n", 1},
		{"prefix only", "\x1b]" + marker + "x\x07a\n", "a\n", 0},
		{"other osc", "\x1b]0;" + marker + "\x07a\n", "a\n", 0},
		{"after aborted osc", "\x1b]0;t\x1b]" + marker + "\x07a\n", "a\n", 1},
		{"restart after esc", "\x1b]" + marker + "\x1b\x1b]" + marker + "\x07", "", 1},
		{"in binary", "\x00\x00\x1b]" + marker + "\x07", note(2) + "", 1},
		{"unterminated", "\x1b]" + marker, "", 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in := []byte(tc.in)
			for i := 0; i <= len(in); i++ {
				calls := 0
				opts := CleanerOptions{EndMarker: marker, OnEndMarker: func() { calls++ }}
				got := runCleaner(t, 0, opts, in[:i], in[i:])
				if got != tc.want || calls != tc.calls {
					t.Fatalf("split at %d: got %q with %d calls, want %q with %d", i, got, calls, tc.want, tc.calls)
				}
			}
		})
	}
}

func TestCleanerEndMarkerFlushesFirst(t *testing.T) {
	var out recorder
	var seen string
	c := NewCleaner(&out, CleanerOptions{EndMarker: "end", OnEndMarker: func() { seen = out.String() }})
	c.Write([]byte("line one\nline two\npartial\x1b]end\x07trailing\n"))
	if want := "line one\nline two\n"; seen != want {
		t.Errorf("at the marker the destination had %q, want %q", seen, want)
	}
	c.Close()
	if want := "line one\nline two\npartialtrailing\n"; out.String() != want {
		t.Errorf("got %q, want %q", out.String(), want)
	}
}

func TestCleanerEndMarkerWithControlsIgnored(t *testing.T) {
	called := false
	opts := CleanerOptions{EndMarker: "a\x07b", OnEndMarker: func() { called = true }}
	if got := runCleaner(t, 0, opts, []byte("\x1b]a\x07b\x07x\n")); called || got != "bx\n" {
		t.Errorf("got %q, called %v", got, called)
	}
}

func TestCleanerWriteError(t *testing.T) {
	boom := errors.New("disk full")
	out := &recorder{fail: boom}
	c := NewCleaner(out, CleanerOptions{})
	if _, err := c.Write([]byte("a\n")); !errors.Is(err, boom) {
		t.Fatalf("Write error = %v, want %v", err, boom)
	}
	if _, err := c.Write([]byte("b\n")); !errors.Is(err, boom) {
		t.Errorf("later Write error = %v", err)
	}
	if err := c.FlushPartial(); !errors.Is(err, boom) {
		t.Errorf("FlushPartial error = %v", err)
	}
	if err := c.Close(); !errors.Is(err, boom) {
		t.Errorf("Close error = %v", err)
	}
}

func TestCleanerBinaryResumes(t *testing.T) {
	bin := make([]byte, 5000)
	r := rand.New(rand.NewPCG(5, 6))
	for i := range bin {
		bin[i] = byte(r.UintN(256))
	}
	text := strings.Repeat("back to normal text\n", 60)
	in := append(append([]byte("before\n"), bin...), text...)
	got := runCleaner(t, 0, CleanerOptions{}, in)
	if !strings.HasPrefix(got, "before\n[qtask: binary output suppressed: ") {
		t.Fatalf("got %q", got)
	}
	if !strings.HasSuffix(got, " bytes]\n"+text) {
		t.Fatalf("text after binary lost: %q", got)
	}
	if strings.Count(got, "[qtask: binary") != 1 {
		t.Errorf("more than one note: %q", got)
	}
}

// TestCleanerTextNeverBinary feeds valid UTF-8 of all kinds, in tiny
// chunks, and expects no note.
func TestCleanerTextNeverBinary(t *testing.T) {
	var b strings.Builder
	for r := rune(1); r < 0x20000; r += 7 {
		if r < 0x20 || (r >= 0xd800 && r < 0xe000) {
			continue
		}
		b.WriteRune(r)
		if r%97 == 0 {
			b.WriteString("\x1b[3" + string(rune('0'+r%8)) + "m\r\n")
		}
	}
	in := []byte(b.String())
	got := runCleaner(t, 0, CleanerOptions{}, randomChunks(rand.New(rand.NewPCG(7, 8)), in)...)
	if strings.Contains(got, "[qtask: binary") {
		t.Fatal("valid UTF-8 taken for binary")
	}
	checkClean(t, in, got)
}

func FuzzCleaner(f *testing.F) {
	for _, tc := range cleanerCases {
		f.Add([]byte(tc.in), uint64(len(tc.in)))
	}
	f.Add(mixedStream(rand.New(rand.NewPCG(9, 10)), 3000), uint64(42))
	f.Fuzz(func(t *testing.T, in []byte, seed uint64) {
		opts := CleanerOptions{EndMarker: "end"}
		want := runCleaner(t, 16, opts, in)
		checkClean(t, in, want)
		r := rand.New(rand.NewPCG(seed, seed))
		if got := runCleaner(t, 16, opts, randomChunks(r, in)...); got != want {
			t.Fatalf("chunked output differs for %q:\n got %q\nwant %q", in, got, want)
		}
		if got := runCleaner(t, 16, opts, bytesOneByOne(in)...); got != want {
			t.Fatalf("byte-by-byte output differs for %q:\n got %q\nwant %q", in, got, want)
		}
		checkClean(t, in, runCleaner(t, 0, CleanerOptions{}, in))
	})
}

func BenchmarkCleaner(b *testing.B) {
	var in []byte
	for i := 0; len(in) < 8<<20; i++ {
		in = append(in, "2024-05-01 12:00:00 \x1b[32mINFO\x1b[0m request "...)
		in = append(in, "handled in 12ms path=/api/v1/items status=200 user=日本\r\n"...)
		if i%10 == 0 {
			in = append(in, "\r\x1b[2K progress 42% [#####     ]\r"...)
		}
	}
	var out recorder
	b.SetBytes(int64(len(in)))
	b.ResetTimer()
	for range b.N {
		out.Reset()
		c := NewCleaner(&out, CleanerOptions{EndMarker: "qtask-end:x"})
		for p := in; len(p) > 0; {
			n := min(len(p), 32<<10)
			c.Write(p[:n])
			p = p[n:]
		}
		c.Close()
	}
}
