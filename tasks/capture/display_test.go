package capture

import (
	"bytes"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// testDisplay is a displayOut on a fresh non-blocking pipe, and the pipe's
// reading end.
func testDisplay(t *testing.T, marker string) (*displayOut, int) {
	t.Helper()
	var fds [2]int
	if err := unix.Pipe2(fds[:], unix.O_NONBLOCK|unix.O_CLOEXEC); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(fds[0]); unix.Close(fds[1]) })
	size, err := unix.FcntlInt(uintptr(fds[1]), unix.F_GETPIPE_SZ, 0)
	if err != nil {
		t.Fatal(err)
	}
	return &displayOut{fd: fds[1], size: size, note: displaySkipped("abc"), raw: newRawFilter(marker)}, fds[0]
}

// drain reads what the pipe holds.
func drain(fd int) string {
	var got bytes.Buffer
	buf := make([]byte, 64<<10)
	for {
		n, _ := unix.Read(fd, buf)
		if n <= 0 {
			return got.String()
		}
		got.Write(buf[:n])
	}
}

// The end marker never reaches the caller's terminal, however the pane's
// bytes are cut into chunks; an OSC that only starts like it does.
func TestDisplayHidesEndMarker(t *testing.T) {
	const stream = "a\x1b]qtask-end:x:nope\x07b\x1b]qtask-end:x:y\x1b\\"
	const want = "a\x1b]qtask-end:x:nope\x07b"
	for i := 0; i <= len(stream); i++ {
		for j := i; j <= len(stream); j++ {
			d, r := testDisplay(t, "qtask-end:x:y")
			d.write([]byte(stream[:i]))
			d.write([]byte(stream[i:j]))
			d.write([]byte(stream[j:]))
			if got := drain(r); got != want {
				t.Fatalf("cut at %d and %d: the display got %q, want %q", i, j, got, want)
			}
		}
	}
}

// A full pipe never blocks the capture: what does not fit is dropped, and
// one line says so, once, where it happened; the display goes on once
// there is room.
func TestDisplaySkipsWhatDoesNotFit(t *testing.T) {
	d, r := testDisplay(t, "qtask-end:x:y")
	chunk := []byte(strings.Repeat("x", 4000) + "\n")
	for range 4 * d.size / len(chunk) {
		d.write(chunk)
	}
	got := drain(r)
	if n := strings.Count(got, string(d.note)); n != 1 || !strings.HasSuffix(got, string(d.note)) {
		t.Fatalf("a full display got the note %d times (want once, at its end): ...%q", n, got[max(0, len(got)-200):])
	}
	d.write([]byte("after\n"))
	if got := drain(r); got != "after\n" {
		t.Fatalf("with room again the display got %q", got)
	}
}
