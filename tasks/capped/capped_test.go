package capped

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"
)

// newOutputFile creates an output file holding content and returns its path.
func newOutputFile(t *testing.T, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "task.out")
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func openCapped(t *testing.T, path string, maxBytes int64) *File {
	t.Helper()
	f, err := Open(path, maxBytes)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

func mustWrite(t *testing.T, f *File, p string) {
	t.Helper()
	if n, err := f.Write([]byte(p)); err != nil || n != len(p) {
		t.Fatalf("Write = %d, %v; want %d, nil", n, err, len(p))
	}
}

// checkCapped checks the file at path against the whole stream written to
// it: the header, if any, must say how much of the stream's start is
// missing, the rest must be the stream from there on, within the cap.
// It returns the dropped count.
func checkCapped(t *testing.T, path string, maxBytes int64, stream string) int64 {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	dropped, hlen := ParseHeader(b)
	if hlen == 0 {
		if string(b) != stream {
			t.Fatalf("uncapped file differs from stream:\n got %q\nwant %q", b, stream)
		}
		return 0
	}
	if want := fmt.Sprintf(headerFormat, maxBytes, dropped); string(b[:hlen]) != want {
		t.Fatalf("header %q, want %q", b[:hlen], want)
	}
	content := string(b[hlen:])
	if int64(len(content)) > maxBytes {
		t.Fatalf("content is %d bytes, cap %d", len(content), maxBytes)
	}
	if dropped > int64(len(stream)) || stream[dropped:] != content {
		t.Fatalf("content is not the stream after the %d dropped bytes:\n got %q", dropped, content)
	}
	return dropped
}

func TestRotationKeepsNewest(t *testing.T) {
	const maxBytes = 100
	path := newOutputFile(t, "")
	f := openCapped(t, path, maxBytes)
	var stream strings.Builder
	for i := range 200 {
		line := fmt.Sprintf("line %03d\n", i)
		mustWrite(t, f, line)
		stream.WriteString(line)
		checkCapped(t, path, maxBytes, stream.String())
	}
	b, _ := os.ReadFile(path)
	_, hlen := ParseHeader(b)
	content := string(b[hlen:])
	if !strings.HasSuffix(content, "line 199\n") || !strings.HasPrefix(content, "line ") {
		t.Errorf("content does not hold whole newest lines: %q", content)
	}
	if dropped := checkCapped(t, path, maxBytes, stream.String()); dropped != int64(stream.Len()-len(content)) {
		t.Errorf("dropped %d is not cumulative", dropped)
	}
}

func TestHeaderSurvivesReopen(t *testing.T) {
	const maxBytes = 64
	path := newOutputFile(t, "")
	var stream strings.Builder
	for round := range 5 {
		f := openCapped(t, path, maxBytes)
		for i := range 30 {
			line := fmt.Sprintf("r%d l%02d\n", round, i)
			mustWrite(t, f, line)
			stream.WriteString(line)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
		checkCapped(t, path, maxBytes, stream.String())
	}
}

func TestExistingContent(t *testing.T) {
	// A file that was never capped but is over the cap is capped on the
	// first write.
	old := strings.Repeat("old line\n", 20)
	path := newOutputFile(t, old)
	f := openCapped(t, path, 50)
	mustWrite(t, f, "new\n")
	if checkCapped(t, path, 50, old+"new\n") == 0 {
		t.Error("not capped")
	}
}

func TestBigSingleWrite(t *testing.T) {
	tests := []struct{ name, before, write string }{
		{"lines", "a\nb\n", strings.Repeat("0123456789\n", 100)},
		{"no newline", "a\n", strings.Repeat("x", 1000)},
		{"one long line", "", strings.Repeat("y", 1000) + "\n"},
		{"runes", "", strings.Repeat("é€", 300)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := newOutputFile(t, "")
			f := openCapped(t, path, 100)
			mustWrite(t, f, tc.before)
			mustWrite(t, f, tc.write)
			checkCapped(t, path, 100, tc.before+tc.write)
			b, _ := os.ReadFile(path)
			_, hlen := ParseHeader(b)
			if content := b[hlen:]; len(content) < 25 || !utf8.Valid(content) {
				t.Errorf("kept %q", content)
			}
		})
	}
}

func TestMode(t *testing.T) {
	path := newOutputFile(t, "")
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	f := openCapped(t, path, 10)
	mustWrite(t, f, "0123456789\nabc\n")
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("mode after rotation %v, want 0600", fi.Mode().Perm())
	}
}

func TestRefusesSymlink(t *testing.T) {
	target := newOutputFile(t, "secret\n")
	link := filepath.Join(t.TempDir(), "task.out")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	_, err := Open(link, 100)
	if !errors.Is(err, syscall.ELOOP) || !strings.Contains(err.Error(), link) {
		t.Errorf("Open(symlink) error = %v, want ELOOP naming the path", err)
	}
}

func TestOpenErrors(t *testing.T) {
	dir := t.TempDir()
	if _, err := Open(filepath.Join(dir, "missing"), 100); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: error = %v", err)
	}
	if _, err := Open(newOutputFile(t, ""), 1); err == nil {
		t.Error("cap of 1 byte accepted")
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err == nil {
		if _, err := Open(fifo, 100); err == nil {
			t.Error("FIFO accepted")
		}
	}
}

func TestHeaderParse(t *testing.T) {
	tests := []struct {
		in            string
		dropped, hlen int64
	}{
		{"[qtask: output capped at 100 bytes; 42 earlier bytes dropped]\nrest", 42, int64(len("[qtask: output capped at 100 bytes; 42 earlier bytes dropped]\n"))},
		{"[qtask: output capped at 100 bytes; 42 earlier bytes dropped]", 0, 0},
		{"[qtask: output capped at 100 bytes; -4 earlier bytes dropped]\n", 0, 0},
		{"[qtask: output capped at 100 bytes; +4 earlier bytes dropped]\n", 0, 0},
		{"[qtask: output capped at 100 bytes; 4 earlier bytes dropped] \n", 0, 0},
		{"hello\n", 0, 0},
		{"", 0, 0},
	}
	for _, tc := range tests {
		if d, h := ParseHeader([]byte(tc.in)); d != tc.dropped || h != tc.hlen {
			t.Errorf("ParseHeader(%q) = %d, %d; want %d, %d", tc.in, d, h, tc.dropped, tc.hlen)
		}
	}
}

// TestCappedRotationsAmortized checks that rotations happen only every
// maxBytes/2 bytes or so, and leave no temporary files.
func TestRotationsAmortized(t *testing.T) {
	const maxBytes = 1000
	path := newOutputFile(t, "")
	f := openCapped(t, path, maxBytes)
	rotations := 0
	ino := capInode(t, path)
	line := "a line of output\n"
	total := 0
	for total < 20*maxBytes {
		mustWrite(t, f, line)
		total += len(line)
		if n := capInode(t, path); n != ino {
			rotations++
			ino = n
		}
	}
	if limit := total/(maxBytes/2) + 1; rotations > limit {
		t.Errorf("%d rotations for %d bytes, want at most %d", rotations, total, limit)
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 1 {
		t.Errorf("directory holds %d entries, want only the output file", len(entries))
	}
}

func capInode(t *testing.T, path string) uint64 {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Sys().(*syscall.Stat_t).Ino
}

// TestCappedMemoryBounded rotates a 16 MiB file and checks the rotation
// allocated far less than the data it moved.
func TestMemoryBounded(t *testing.T) {
	const maxBytes = 16 << 20
	path := newOutputFile(t, "")
	f := openCapped(t, path, maxBytes)
	block := bytes.Repeat([]byte("0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcde\n"), 1<<14)
	for range maxBytes / len(block) {
		if _, err := f.Write(block); err != nil {
			t.Fatal(err)
		}
	}
	ino := capInode(t, path)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	if _, err := f.Write([]byte("overflow\n")); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	if capInode(t, path) == ino {
		t.Fatal("no rotation happened")
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 1<<20 {
		t.Errorf("rotating %d bytes allocated %d bytes", maxBytes/2, alloc)
	}
	if fi, _ := os.Stat(path); fi.Size() > maxBytes/2+100 {
		t.Errorf("file is %d bytes after rotation", fi.Size())
	}
}

// FuzzCappedFile writes data in pieces of fuzzed sizes under a fuzzed cap
// and checks the file against the stream after every write.
func FuzzFile(f *testing.F) {
	f.Add([]byte("line one\nline two\nthree\n"), uint16(10), uint64(7))
	f.Add(bytes.Repeat([]byte("é\n€"), 50), uint16(9), uint64(3))
	f.Add([]byte(strings.Repeat("x", 300)), uint16(2), uint64(1))
	f.Fuzz(func(t *testing.T, data []byte, maxBytes uint16, sizes uint64) {
		limit := int64(maxBytes%512) + 2
		path := newOutputFile(t, "")
		c := openCapped(t, path, limit)
		for written := 0; written < len(data); {
			n := min(len(data)-written, int(sizes%97))
			sizes = sizes/3 + uint64(n)*31 + 1
			mustWrite(t, c, string(data[written:written+n]))
			written += n
			checkCapped(t, path, limit, string(data[:written]))
		}
	})
}

// TestCappedFileTail: the tail is rewritten in place, shorter or longer,
// final text written later goes over it, and a rotation keeps the tail at
// the end and the final text's end marked.
func TestFileTail(t *testing.T) {
	path := newOutputFile(t, "")
	f := openCapped(t, path, 60)
	check := func(want string) {
		t.Helper()
		if b, _ := os.ReadFile(path); string(b) != want {
			t.Fatalf("file holds %q, want %q", b, want)
		}
	}
	mustWrite(t, f, "line 1\n")
	f.SetTail([]byte("a long live tail\n"), 0)
	check("line 1\na long live tail\n")
	f.SetTail([]byte("short\n"), 0)
	check("line 1\nshort\n")
	mustWrite(t, f, "line 2\n")
	f.SetTail(nil, 0)
	check("line 1\nline 2\n")
	for i := 3; i <= 9; i++ {
		mustWrite(t, f, fmt.Sprintf("line %d\n", i))
		f.SetTail([]byte("tail\n"), 0)
	}
	b, _ := os.ReadFile(path)
	dropped, hlen := ParseHeader(b)
	if dropped == 0 || !strings.HasSuffix(string(b), "line 9\ntail\n") {
		t.Fatalf("after rotations: %q", b)
	}
	r, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if final, settled := FinalEnds(r, int64(len(b))); final != int64(len(b))-5 || settled != final {
		t.Fatalf("final text marked to end at %d, settled at %d, of %d (header %d)", final, settled, len(b), hlen)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if b2, _ := os.ReadFile(path); string(b2) != string(b) {
		t.Fatalf("Close changed the file: %q", b2)
	}
}

func TestOpenReadRefusesWhatIsNotAFile(t *testing.T) {
	dir := t.TempDir()
	secret := newOutputFile(t, "secret")
	link := filepath.Join(dir, "link.log")
	if err := os.Symlink(secret, link); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo.log")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{link, fifo, dir} {
		done := make(chan error, 1)
		go func() {
			f, err := OpenRead(path)
			if err == nil {
				f.Close()
			}
			done <- err
		}()
		select {
		case err := <-done:
			if err == nil {
				t.Errorf("OpenRead(%s) opened it; want a refusal: a planted file must not be read", path)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("OpenRead(%s) hangs", path)
		}
	}
}

// TestHeaderOfTheOpenedFile: a reader that opened the output before a
// rotation reads that file's header, not the newer file's now at the
// path, whose dropped count would be applied to the wrong bytes.
func TestHeaderOfTheOpenedFile(t *testing.T) {
	const maxBytes = 100
	path := newOutputFile(t, "")
	f := openCapped(t, path, maxBytes)
	for i := range 20 {
		mustWrite(t, f, fmt.Sprintf("line %03d\n", i))
	}
	r, err := OpenRead(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	before, beforeLen, _ := ReadHeader(path)
	for i := range 20 {
		mustWrite(t, f, fmt.Sprintf("more %03d\n", i)) // rotates: a new file at path
	}
	if now, _, _ := ReadHeader(path); now == before {
		t.Fatalf("no rotation: the path's header still says %d dropped", now)
	}
	if dropped, length, err := HeaderOf(r); err != nil || dropped != before || length != beforeLen {
		t.Errorf("HeaderOf the file opened before the rotation = %d, %d, %v; want its own %d, %d", dropped, length, err, before, beforeLen)
	}
}
