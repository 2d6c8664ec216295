package tasks

import (
	"bytes"
	"io"
	"os"
	"testing"
	"time"
)

// The benchmarks' stream: pane-like CRLF lines, 16 MiB in all, written in
// the small pieces tmux's pipe delivers.
const benchStreamBytes = 16 << 20

var benchPiece = bytes.Repeat([]byte("the quick brown fox jumps over the lazy dog 0123456789\r\n"), 4096/56)

// BenchmarkCapture pushes pane-like output (CRLF lines, written in the small
// pieces tmux's pipe delivers) through Store.Capture into a capped file.
func BenchmarkCapture(b *testing.B) {
	b.SetBytes(benchStreamBytes)
	for range b.N {
		b.StopTimer()
		s, err := OpenStore(newStateDir(b))
		if err != nil {
			b.Fatal(err)
		}
		id, err := s.reserveID()
		if err != nil {
			b.Fatal(err)
		}
		r := &record{Task: Task{ID: id, Kind: KindShell, Status: StatusRunning, StartedAt: time.Now(), OutputPath: s.outputPath(id)},
			OutputMaxBytes: 4 << 20}
		if err := s.save(r); err != nil {
			b.Fatal(err)
		}
		pr := feedPipe(b)
		b.StartTimer()
		if err := s.Capture(id, pr); err != nil {
			b.Fatal(err)
		}
		pr.Close()
	}
}

// BenchmarkCaptureBaseline is the same stream copied to a file unchanged,
// what `pipe-pane 'cat > file'` does.
func BenchmarkCaptureBaseline(b *testing.B) {
	b.SetBytes(benchStreamBytes)
	for range b.N {
		b.StopTimer()
		f, err := os.Create(b.TempDir() + "/out")
		if err != nil {
			b.Fatal(err)
		}
		pr := feedPipe(b)
		b.StartTimer()
		if _, err := io.Copy(f, pr); err != nil {
			b.Fatal(err)
		}
		f.Close()
		pr.Close()
	}
}

// feedPipe returns the read end of a pipe fed the benchmark stream, one
// write per piece, as tmux feeds a pipe-pane.
func feedPipe(b *testing.B) *os.File {
	pr, pw, err := os.Pipe()
	if err != nil {
		b.Fatal(err)
	}
	go func() {
		for n := 0; n < benchStreamBytes; n += len(benchPiece) {
			pw.Write(benchPiece)
		}
		pw.Close()
	}()
	return pr
}
