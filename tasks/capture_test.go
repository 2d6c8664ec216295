package tasks

import (
	"os"
	"strings"
	"testing"
	"time"
)

// An adopted pane's capture acknowledges the end of the output either way,
// so that the prompt hook does not wait for nothing. But an input that
// ended before the end marker (the pane killed, its pipe closed) is no
// proof that everything came through: the task then says its output is
// incomplete, and the file ends by saying so.
func TestCaptureSaysAPipeEndedBeforeTheMarker(t *testing.T) {
	const marker = "qtask-end:x"
	for _, tc := range []struct {
		name, stream, want string
		complete           bool
	}{
		{"marker", "one\r\ntwo\r\n\x1b]" + marker + "\a", "one\ntwo\n", true},
		{"no marker", "one\r\ntwo\r\n", "one\ntwo\n[qtask: the pane's pipe ended before its output was all read; lines may be missing]\n", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := OpenStore(newStateDir(t))
			if err != nil {
				t.Fatal(err)
			}
			id, err := s.reserveID()
			if err != nil {
				t.Fatal(err)
			}
			r := &record{Task: Task{ID: id, Kind: KindShell, Status: StatusRunning, StartedAt: time.Now(),
				OutputPath: s.outputPath(id), OutputComplete: true}, EndMarker: marker}
			if err := s.save(r); err != nil {
				t.Fatal(err)
			}
			pr, pw, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			pw.WriteString(tc.stream)
			pw.Close()
			defer pr.Close()
			if err := s.Capture(id, pr); err != nil {
				t.Fatal(err)
			}
			got, err := s.load(id)
			if err != nil {
				t.Fatal(err)
			}
			out, _ := os.ReadFile(r.OutputPath)
			if string(out) != tc.want {
				t.Errorf("output file %q, want %q", out, tc.want)
			}
			if !got.OutputAcked || got.OutputComplete != tc.complete || tc.complete != (got.OutputLoss == "") ||
				!tc.complete && !strings.Contains(got.OutputLoss, "lines may be missing") {
				t.Errorf("output_acked %v, output_complete %v, output_loss %q; want acked, complete %v",
					got.OutputAcked, got.OutputComplete, got.OutputLoss, tc.complete)
			}
		})
	}
}
