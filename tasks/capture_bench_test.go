package tasks

import (
	"bytes"
	"io"
	"os"
	"testing"
	"time"
)

// BenchmarkCapture pushes pane-like output (CRLF lines, written in the small
// pieces tmux's pipe delivers) through Store.Capture into a capped file.
func BenchmarkCapture(b *testing.B) {
	line := []byte("the quick brown fox jumps over the lazy dog 0123456789\r\n")
	piece := bytes.Repeat(line, 4096/len(line))
	const total = 16 << 20
	b.SetBytes(total)
	for range b.N {
		b.StopTimer()
		s, err := OpenStore(b.TempDir())
		if err != nil {
			b.Fatal(err)
		}
		id, err := s.reserveID()
		if err != nil {
			b.Fatal(err)
		}
		r := &record{Task: Task{ID: id, Status: StatusRunning, StartedAt: time.Now(), OutputPath: s.outputPath(id)},
			OutputMaxBytes: 4 << 20}
		if err := s.save(r); err != nil {
			b.Fatal(err)
		}
		pr := feedPipe(b, piece, total)
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
	line := []byte("the quick brown fox jumps over the lazy dog 0123456789\r\n")
	piece := bytes.Repeat(line, 4096/len(line))
	const total = 16 << 20
	b.SetBytes(total)
	for range b.N {
		b.StopTimer()
		f, err := os.Create(b.TempDir() + "/out")
		if err != nil {
			b.Fatal(err)
		}
		pr := feedPipe(b, piece, total)
		b.StartTimer()
		if _, err := io.Copy(f, pr); err != nil {
			b.Fatal(err)
		}
		f.Close()
		pr.Close()
	}
}

// feedPipe returns the read end of a pipe that is fed total bytes of piece,
// one write per piece, as tmux feeds a pipe-pane.
func feedPipe(b *testing.B, piece []byte, total int) *os.File {
	pr, pw, err := os.Pipe()
	if err != nil {
		b.Fatal(err)
	}
	go func() {
		for n := 0; n < total; n += len(piece) {
			pw.Write(piece)
		}
		pw.Close()
	}()
	return pr
}
