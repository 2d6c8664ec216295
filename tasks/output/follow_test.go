package output

import (
	"fmt"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/qtask/qtask/tasks/capped"
)

// TestFollowerMarksWhatTheCapDropped: output a cap rotation removed before
// the Follower read it is announced with its size, never skipped silently,
// and nothing is printed twice.
func TestFollowerMarksWhatTheCapDropped(t *testing.T) {
	const maxBytes = 100
	path, f := cappedOutput(t, maxBytes)
	var stream strings.Builder
	write := func(from, to int) {
		for i := from; i < to; i++ {
			line := fmt.Sprintf("line %03d\n", i)
			writeFinal(t, f, line)
			stream.WriteString(line)
		}
	}
	fl := NewFollower(path, 0)
	defer fl.Close()
	var got strings.Builder
	follow := func() string {
		before := got.Len()
		if err := fl.CopyNew(&got, false); err != nil {
			t.Fatal(err)
		}
		return got.String()[before:]
	}

	write(0, 5)
	if s := follow(); s != stream.String() {
		t.Fatalf("before any rotation the Follower printed %q, want %q", s, stream.String())
	}
	seen := int64(stream.Len())

	// Rotations the Follower did not keep up with.
	write(5, 50)
	s := follow()
	b, _ := os.ReadFile(path)
	dropped, hlen := capped.ParseHeader(b)
	want := fmt.Sprintf(capDroppedFormat, dropped-seen) + string(b[hlen:])
	if dropped <= seen || s != want {
		t.Fatalf("after rotations dropped %d unread bytes, the Follower printed\n%q\nwant\n%q", dropped-seen, s, want)
	}

	// A rotation of bytes already printed: nothing to announce.
	write(50, 60)
	follow()
	write(60, 61)
	s = follow()
	b, _ = os.ReadFile(path)
	if again, _ := capped.ParseHeader(b); again == dropped {
		t.Fatalf("line 060 did not rotate the file (%d bytes dropped before and after): the test misses its case", dropped)
	}
	if s != "line 060\n" {
		t.Fatalf("after a rotation of already printed bytes the Follower printed %q, want only the new line", s)
	}
}

// TestFollowerWaitsForFinalText: while a task runs, a Follower prints only
// the final text, never the live tail that is still being redrawn (a
// progress bar), so nothing it prints is later taken back; the tail comes
// when the caller asks for everything.
func TestFollowerWaitsForFinalText(t *testing.T) {
	path, f, follow, _ := followed(t)
	writeFinal(t, f, "first\n")
	for _, frame := range []string{" 10%\n", " 50%\n", "100%\n"} {
		if err := f.SetTail([]byte("first bar"+frame), 0); err != nil {
			t.Fatal(err)
		}
		if s := follow(false); s != "first\n" && s != "" {
			t.Fatalf("Follower printed %q while the bar was live", s)
		}
	}
	writeFinal(t, f, "first bar100%\n")
	if err := f.SetTail([]byte("prompt> "), 0); err != nil {
		t.Fatal(err)
	}
	if s := follow(false); s != "first bar100%\n" {
		t.Fatalf("Follower printed %q once the bar was final", s)
	}
	if s := follow(true); s != "prompt> " {
		t.Fatalf("Follower printed %q for the tail at the end", s)
	}
	if b, _ := os.ReadFile(path); string(b) != "first\nfirst bar100%\nprompt> " {
		t.Fatalf("file holds %q", b)
	}
}

// TestFollowerPrintsSettledLinesOnce: settled lines of the tail (whole lines
// above the rows being redrawn) are printed before they are final, and
// not again when they become final; one that changes after all is printed
// again, whole, never cut.
func TestFollowerPrintsSettledLinesOnce(t *testing.T) {
	_, f, follow, got := followed(t)
	step := func(final, tail string, settled int, want string) {
		t.Helper()
		if final != "" {
			writeFinal(t, f, final)
		}
		if err := f.SetTail([]byte(tail), settled); err != nil {
			t.Fatal(err)
		}
		if s := follow(false); s != want {
			t.Fatalf("Follower printed %q, want %q", s, want)
		}
	}
	step("", "one\ntwo\n 10%\n", 8, "one\ntwo\n")
	step("", "one\ntwo\n 50%\n", 8, "")
	step("", "one\ntwo\n 50%\n", 4, "") // fewer settled: nothing taken back
	step("one\n", "two\n 90%\n", 4, "") // final now, printed already
	step("", "twice\n 95%\n", 6, "twice\n")
	step("twice\n 99%\n", "", 0, " 99%\n")
	if got.String() != "one\ntwo\ntwice\n 99%\n" {
		t.Fatalf("Follower printed %q in all", got.String())
	}
}

// cappedOutput makes an empty output file, capped at maxBytes.
func cappedOutput(t *testing.T, maxBytes int64) (string, *capped.File) {
	t.Helper()
	path := writeOutputFile(t, "")
	f, err := capped.Open(path, maxBytes)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return path, f
}

// writeFinal appends final text to f.
func writeFinal(t *testing.T, f *capped.File, p string) {
	t.Helper()
	if _, err := f.Write([]byte(p)); err != nil {
		t.Fatal(err)
	}
}

// followed makes an output file and a Follower of it: follow copies what
// is new (everything, with all) and returns it; got holds all it copied.
func followed(t *testing.T) (path string, f *capped.File, follow func(all bool) string, got *strings.Builder) {
	path, f = cappedOutput(t, 1<<20)
	fl := NewFollower(path, 0)
	t.Cleanup(fl.Close)
	got = new(strings.Builder)
	follow = func(all bool) string {
		t.Helper()
		before := got.Len()
		if err := fl.CopyNew(got, all); err != nil {
			t.Fatal(err)
		}
		return got.String()[before:]
	}
	return path, f, follow, got
}

// TestLiveLineFitsAndReplaces: the live line is cut to fit in fewer
// columns than the terminal has (tabs expanded, wide characters counted
// twice), made harmless, written once while unchanged, and erased before
// anything replaces it.
func TestLiveLineFitsAndReplaces(t *testing.T) {
	var got strings.Builder
	l := &liveLine{w: &got, width: 10}
	steps := []struct {
		show, want string
	}{
		{"a\tb\x1b[2J", "a       b"}, // tab to column 8; ESC left out
		{"a\tb\x1b[2J", ""},          // unchanged: nothing written
		{"界界界界界", "\r\x1b[K界界界界"},    // 8 columns; the fifth would reach the edge
		{"", "\r\x1b[K"},             // nothing live: erased
		{"", ""},
	}
	for _, st := range steps {
		got.Reset()
		if err := l.show([]byte(st.show)); err != nil {
			t.Fatal(err)
		}
		if got.String() != st.want {
			t.Errorf("show(%q) wrote %q, want %q", st.show, got.String(), st.want)
		}
	}
	l.show([]byte("50%"))
	got.Reset()
	io.WriteString(l, "done\n")
	if got.String() != "\r\x1b[Kdone\n" {
		t.Errorf("a write over the live line wrote %q, want it erased first", got.String())
	}
}

// TestFollowerNeverTakesAFirstTailForFinal: the capture's first tail is
// written a moment before the file's final mark is updated; in that moment
// a Follower must not take it for final text, so the file is marked when
// the capture opens it.
func TestFollowerNeverTakesAFirstTailForFinal(t *testing.T) {
	path, _, follow, _ := followed(t)
	// What SetTail writes before it marks the file.
	if err := os.WriteFile(path, []byte("progress 1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if s := follow(false); s != "" {
		t.Fatalf("Follower printed %q, a tail not yet marked, as final", s)
	}
}

// TestLineWriterCutsLines: FollowLines' readers (readiness gates, monitors)
// get each line once, blank ones too, however the writes cut them, and an
// endless line in bounded pieces that never split a character.
func TestLineWriterCutsLines(t *testing.T) {
	long := strings.Repeat("x", MaxLineBytes-1) + "é" + "tail"
	tests := []struct {
		name   string
		writes []string
		want   []string
	}{
		{"whole lines", []string{"a\nb\n"}, []string{"a", "b"}},
		{"blank lines", []string{"a\n\n\nb\n"}, []string{"a", "", "", "b"}},
		{"split mid-line", []string{"rea", "dy on ", "port 8\n"}, []string{"ready on port 8"}},
		{"partial at the end", []string{"a\nno newline"}, []string{"a", "no newline"}},
		{"long line cut at a rune start", []string{long + "\n"},
			[]string{strings.Repeat("x", MaxLineBytes-1), "étail"}},
		{"long line in small writes", strings.Split(strings.Repeat("y", MaxLineBytes+2)+"\n", ""),
			[]string{strings.Repeat("y", MaxLineBytes), "yy"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			lw := &LineWriter{line: func(b []byte) error { got = append(got, string(b)); return nil }}
			for _, w := range tt.writes {
				if n, err := lw.Write([]byte(w)); n != len(w) || err != nil {
					t.Fatalf("Write(%q) = %d, %v", w, n, err)
				}
			}
			if err := lw.Flush(); err != nil {
				t.Fatal(err)
			}
			if strings.Join(got, "|") != strings.Join(tt.want, "|") || len(got) != len(tt.want) {
				t.Fatalf("lines %q, want %q", got, tt.want)
			}
		})
	}
}

// TestLineWriterStopsOnError: a reader that has what it wanted stops the
// follow at once; the error comes back with what was consumed.
func TestLineWriterStopsOnError(t *testing.T) {
	stop := fmt.Errorf("found")
	var got []string
	lw := &LineWriter{line: func(b []byte) error {
		got = append(got, string(b))
		if string(b) == "ready" {
			return stop
		}
		return nil
	}}
	n, err := lw.Write([]byte("boot\nready\nlater\n"))
	if err != stop || n != len("boot\nready\n") || len(got) != 2 {
		t.Fatalf("Write = %d, %v after lines %q; want it to stop at ready with its error", n, err, got)
	}
}
