package main

import (
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/qtask/qtask/tasks"
)

func TestDisplayCommand(t *testing.T) {
	cases := []struct {
		name  string
		in    string
		width int
		want  string
	}{
		{"plain", "npm run dev", 72, "npm run dev"},
		{"empty", "", 72, ""},
		{"unicode passes", "héllo 日本語 😀", 72, "héllo 日本語 😀"},
		{"newline", "make &&\nmake install", 72, "make &&⏎make install"},
		{"trailing newline", "echo hi\n", 72, "echo hi⏎"},
		{"tab becomes a space", "a\tb", 72, "a b"},
		{"escape sequence", "\x1b[31mred\x1b[0m", 72, `\u001b[31mred\u001b[0m`},
		{"clear screen", "\x1b[2J\x1b[H", 72, `\u001b[2J\u001b[H`},
		{"OSC title", "\x1b]0;pwned\a", 72, `\u001b]0;pwned\u0007`},
		{"carriage return", "safe\rEVIL", 72, `safe\u000dEVIL`},
		{"backspace", "ab\bc", 72, `ab\u0008c`},
		{"NUL", "a\x00b", 72, `a\u0000b`},
		{"DEL", "a\x7fb", 72, `a\u007fb`},
		{"C1 CSI", "a\u009b31mb", 72, `a\u009b31mb`},
		{"bidi override", "ls \u202egnp.exe", 72, `ls \u202egnp.exe`},
		{"bidi isolate", "a\u2066b\u2069", 72, `a\u2066b\u2069`},
		{"right-to-left mark", "a\u200fb", 72, `a\u200fb`},
		{"invalid UTF-8", "a\xffb", 72, `a\ufffdb`},
		{"exactly width", "abcde", 5, "abcde"},
		{"one over width", "abcdef", 5, "abcde…"},
		{"long", strings.Repeat("x", 100), 10, strings.Repeat("x", 10) + "…"},
		{"width counts runes, not bytes", "日本語テキスト", 3, "日本語…"},
		{"escape counts as one character", "\x1b\x1b\x1b\x1b", 2, `\u001b\u001b…`},
		{"newline counts as one character", "a\nb\nc", 3, "a⏎b…"},
		{"zero width", "abc", 0, "…"},
		{"zero width, empty", "", 0, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := displayCommand(c.in, c.width)
			if got != c.want {
				t.Errorf("qtask ls shows %q as %q, want %q", c.in, got, c.want)
			}
			checkTerminalSafe(t, c.in, got)
		})
	}
}

// checkTerminalSafe fails if out could move the cursor, recolour the terminal
// or reorder the text around it.
func checkTerminalSafe(t *testing.T, in, out string) {
	t.Helper()
	if !utf8.ValidString(out) {
		t.Errorf("displayCommand(%q) = %q is not valid UTF-8", in, out)
	}
	for _, r := range out {
		if unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r) {
			t.Errorf("displayCommand(%q) = %q lets %U through to the terminal", in, out, r)
		}
	}
}

func FuzzDisplayCommand(f *testing.F) {
	f.Add("\x1b[31mred\n\u202e", 10)
	f.Add("plain", 72)
	f.Fuzz(func(t *testing.T, in string, width int) {
		if width < 0 || width > 1000 {
			return
		}
		out := displayCommand(in, width)
		checkTerminalSafe(t, in, out)
		truncated := utf8.RuneCountInString(in) > width
		if truncated != strings.HasSuffix(out, "…") && !strings.HasSuffix(in, "…") {
			t.Errorf("displayCommand(%q, %d) = %q: ellipsis does not match truncation", in, width, out)
		}
	})
}

func TestFormatRuntime(t *testing.T) {
	cases := []struct {
		d    time.Duration
		want string
	}{
		{0, "0ms"},
		{time.Millisecond, "1ms"},
		{850 * time.Millisecond, "850ms"},
		{999 * time.Millisecond, "999ms"},
		{time.Second - time.Microsecond, "999ms"},
		{time.Second, "1.0s"},
		{4200 * time.Millisecond, "4.2s"},
		{59900 * time.Millisecond, "59.9s"},
		{59970 * time.Millisecond, "59.9s"},
		{time.Minute, "1m00s"},
		{time.Minute + 500*time.Millisecond, "1m00s"},
		{3*time.Minute + 7*time.Second, "3m07s"},
		{59*time.Minute + 59*time.Second, "59m59s"},
		{time.Hour - time.Millisecond, "59m59s"},
		{time.Hour, "1h00m"},
		{2*time.Hour + 5*time.Minute + 59*time.Second, "2h05m"},
		{25 * time.Hour, "25h00m"},
		{100*time.Hour + 30*time.Minute, "100h30m"},
	}
	for _, c := range cases {
		if got := formatRuntime(c.d); got != c.want {
			t.Errorf("a task that ran %v shows runtime %q, want %q", c.d, got, c.want)
		}
	}
}

func TestWaitExitCode(t *testing.T) {
	code := func(n int) *int { return &n }
	task := func(st tasks.Status, c *int) *tasks.Task { return &tasks.Task{ID: "abcd0001", Status: st, ExitCode: c} }
	completed := task(tasks.StatusCompleted, code(0))
	cases := []struct {
		name string
		list []*tasks.Task
		want int
	}{
		{"one completed", []*tasks.Task{completed}, 0},
		{"one failed with exit 3", []*tasks.Task{task(tasks.StatusFailed, code(3))}, 3},
		{"one killed by SIGKILL", []*tasks.Task{task(tasks.StatusFailed, code(137))}, 137},
		{"one cancelled", []*tasks.Task{task(tasks.StatusCancelled, code(143))}, 143},
		{"one lost, no exit code", []*tasks.Task{task(tasks.StatusFailed, nil)}, 1},
		{"one cancelled before it had a pid", []*tasks.Task{task(tasks.StatusCancelled, nil)}, 1},
		{"several, all completed", []*tasks.Task{completed, completed, completed}, 0},
		{"several, one failed", []*tasks.Task{completed, task(tasks.StatusFailed, code(3))}, 1},
		{"several, one cancelled", []*tasks.Task{task(tasks.StatusCancelled, code(143)), completed}, 1},
		{"several, one lost", []*tasks.Task{completed, task(tasks.StatusFailed, nil)}, 1},
		{"several failed with the same code", []*tasks.Task{task(tasks.StatusFailed, code(3)), task(tasks.StatusFailed, code(3))}, 1},
	}
	for _, c := range cases {
		if got := waitExitCode(c.list); got != c.want {
			t.Errorf("%s: qtask wait exits %d, want %d", c.name, got, c.want)
		}
	}
}

func TestWriteJSONEscapesTerminalControls(t *testing.T) {
	in := map[string]string{"name": "a\x1b[2Jb\u009b31mc\u202ed\u0085e <&> 日本"}
	var out strings.Builder
	if err := writeJSON(&out, in); err != nil {
		t.Fatal(err)
	}
	for _, r := range out.String() {
		if r != '\n' && terminalControl(r) {
			t.Errorf("JSON output %q holds the raw control %U, which the terminal would act on", out.String(), r)
		}
	}
	var back map[string]string
	if err := json.Unmarshal([]byte(out.String()), &back); err != nil || back["name"] != in["name"] {
		t.Errorf("JSON output %q decodes to %q (%v), want the value unchanged %q", out.String(), back["name"], err, in["name"])
	}
}

// checkWriteJSON holds writeJSON to json.MarshalIndent(v, "", "  ") with
// terminal controls escaped, byte for byte: scripts may compare `ls
// --json` output as text.
func checkWriteJSON(t *testing.T, v any) {
	t.Helper()
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	want := string(appendTerminalSafe(nil, data)) + "\n"
	var got strings.Builder
	if err := writeJSON(&got, v); err != nil {
		t.Fatal(err)
	}
	if got.String() != want {
		t.Errorf("writeJSON(%#v) prints\n%s\nwant, as json.MarshalIndent lays it out,\n%s", v, got.String(), want)
	}
	var list func(io.Writer) error
	switch v := v.(type) {
	case []*tasks.Task:
		list = func(w io.Writer) error { return writeJSONList(w, v, appendTaskJSON) }
	case []any:
		list = func(w io.Writer) error { return writeJSONList(w, v, appendMarshaled) }
	}
	if list != nil {
		got.Reset()
		if err := list(&got); err != nil {
			t.Fatal(err)
		}
		if got.String() != want {
			t.Errorf("writeJSONList(%#v) prints\n%s\nwant, as json.MarshalIndent lays it out,\n%s", v, got.String(), want)
		}
	}
}

// TestWriteJSONIndentsAsMarshalIndent: task lists (empty, nil, a task with
// every kind of field) and nested values print as json.MarshalIndent
// prints them.
func TestWriteJSONIndentsAsMarshalIndent(t *testing.T) {
	code := 3
	ended := time.Date(2026, 11, 23, 19, 10, 14, 227483973, time.UTC)
	task := &tasks.Task{ID: "0004e2f7", Name: "a\x1b[2Jb\u009b31mc\u202ed\u0085e <&> 日本 \"q\\\"", Kind: tasks.KindShell,
		Command: "printf '%s\\n' \"x\" {a:[b]}, ", Status: tasks.StatusFailed, ExitCode: &code, StartedAt: ended.Add(-time.Second),
		EndedAt: &ended, OutputLoss: "lost\ttabs\\", Error: `code 5" , {x}: [y]`}
	for _, v := range []any{
		[]*tasks.Task(nil), []*tasks.Task{}, []*tasks.Task{task}, []*tasks.Task{task, {ID: "00000001"}, nil}, []*tasks.Task{nil}, task,
		map[string]any{"a": []any{1, map[string]any{}, []int{}, "\u2028", "\\", "\"", -1.5e300, nil, true}, "b": map[string][]int{"c": {1}}},
		"", 0, nil, []any{[]any{[]any{}}},
	} {
		checkWriteJSON(t, v)
	}
}

// appendMarshaled is an appendElem for writeJSONList that encodes with
// json.Marshal, for lists of anything.
func appendMarshaled[T any](buf []byte, v T) ([]byte, error) {
	data, err := json.Marshal(v)
	return append(buf, data...), err
}

// FuzzWriteJSON: whatever JSON value decodes, writeJSON (and, for an
// array, writeJSONList) lays it out as json.MarshalIndent does.
func FuzzWriteJSON(f *testing.F) {
	for _, seed := range []string{`[]`, `{}`, `[{"a":{},"b":[[],[1,"x\"y\\"]]}]`, `"\u0085\u202e<&>"`, `{"k":null,"t":true}`} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var v any
		if json.Unmarshal(data, &v) != nil {
			return
		}
		checkWriteJSON(t, v)
	})
}

// TestShortStatusLost: a lost task is "failed (lost)" in ls whether or not
// its command left an exit code (a killed pane's dies of SIGHUP, 129).
func TestShortStatusLost(t *testing.T) {
	code := func(n int) *int { return &n }
	cases := []struct {
		task tasks.Task
		want string
	}{
		{tasks.Task{Status: tasks.StatusFailed, ExitCode: code(3), Error: "exited with code 3"}, "failed (3)"},
		{tasks.Task{Status: tasks.StatusFailed, Error: "lost: the wrapper died"}, "failed (lost)"},
		{tasks.Task{Status: tasks.StatusFailed, ExitCode: code(129), Error: "lost: the task's tmux pane was closed while it ran"}, "failed (lost)"},
		{tasks.Task{Status: tasks.StatusFailed, Error: "spawn error: x"}, "failed"},
	}
	for _, c := range cases {
		if got := shortStatus(&c.task); got != c.want {
			t.Errorf("shortStatus(%+v) = %q, want %q", c.task, got, c.want)
		}
	}
}
