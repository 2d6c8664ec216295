package agenttest_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/qtask/qtask/internal/agenttest"
	"github.com/qtask/qtask/internal/mockmodel"
)

// TestRealAgentClaudeStreamJSONSessionStaysOpen proves the harness for Claude's
// streaming-input mode, the one where async hooks run: the session reads
// prompts as JSON lines on stdin, answers each with a "result" event, and
// stays open between them until stdin closes.
func TestRealAgentClaudeStreamJSONSessionStaysOpen(t *testing.T) {
	t.Parallel()
	mock := mockmodel.StartForTest(t, mockmodel.Text("first answer"), mockmodel.Text("second answer"))
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	run := &agenttest.Run{Agent: agenttest.Claude, Model: mock.URL(), Args: []string{"--input-format", "stream-json"}}
	cmd := agenttest.Command(ctx, t, run)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	results := make(chan string, 8) // never blocks the reader, even after a failed test stops reading
	go readResults(stdout, results)

	for i, prompt := range []string{"first prompt", "second prompt"} {
		line, _ := json.Marshal(map[string]any{"type": "user", "message": map[string]any{"role": "user", "content": prompt}})
		if _, err := fmt.Fprintf(stdin, "%s\n", line); err != nil {
			t.Fatal(err)
		}
		select {
		case got, ok := <-results:
			want := []string{"first answer", "second answer"}[i]
			if !ok || got != want {
				t.Fatalf("result after %q = %q (stream open: %v), want %q\nrequests:\n%s", prompt, got, ok, want, mock.Summary())
			}
		case <-ctx.Done():
			t.Fatalf("no result for %q: %v\nrequests:\n%s", prompt, ctx.Err(), mock.Summary())
		}
		last, _ := mock.LastMain()
		if last.Count(prompt) != 1 {
			t.Fatalf("the last request carries %q %d times, want 1\nrequests:\n%s", prompt, last.Count(prompt), mock.Summary())
		}
	}
	if err := stdin.Close(); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("claude after stdin closed: %v", err)
	}
}

// readResults sends the text of each "result" event Claude prints, and
// closes results when the output ends.
func readResults(stdout io.Reader, results chan<- string) {
	defer close(results)
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var ev struct {
			Type   string `json:"type"`
			Result string `json:"result"`
		}
		if json.Unmarshal(sc.Bytes(), &ev) == nil && ev.Type == "result" {
			results <- ev.Result
		}
	}
}
