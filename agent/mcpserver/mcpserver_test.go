package mcpserver

import (
	"bytes"
	"encoding/json"
	"math"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestTailBufferKeepsTheEnd(t *testing.T) {
	b := &tailBuffer{max: 100}
	for i := range 50 {
		b.Write([]byte(strings.Repeat("é", 5) + " line " + string(rune('a'+i%26)) + "\n"))
	}
	b.Write([]byte("last, no newline"))
	text := b.text("/out.log")
	lead, body, _ := strings.Cut(text, "\n")
	if !strings.HasPrefix(lead, "[") || !strings.Contains(lead, "earlier bytes of output left out; the whole output is in /out.log") {
		t.Errorf("lead line = %q", lead)
	}
	if len(body) > 101 || !strings.HasSuffix(body, "last, no newline\n") || !utf8.ValidString(body) || !strings.HasPrefix(body, "éé") {
		t.Errorf("kept %d bytes: %q; want at most 100, from a line start, ending with the last line", len(body), body)
	}
	if got := b.lastLine(); got != "last, no newline" {
		t.Errorf("lastLine = %q", got)
	}
	small := &tailBuffer{max: 100}
	small.Write([]byte("one\ntwo\n\n"))
	if got, line := small.text("/x"), small.lastLine(); got != "one\ntwo\n\n" || line != "two" {
		t.Errorf("short output: text %q, lastLine %q", got, line)
	}
}

func TestRefusal(t *testing.T) {
	for _, c := range []struct {
		line    string
		tooLong bool
		code    float64
		id      any
	}{
		{`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, false, 0, nil},
		{`{"jsonrpc":"2.0","method":"notifications/initialized"}`, false, 0, nil},
		{`{"jsonrpc":"2.0","id":7,"method":`, false, -32700, nil},
		{`not json`, false, -32700, nil},
		{`{"jsonrpc":"2.0","id":"a","method":"x"}`, true, -32700, "a"},
		{`{"jsonrpc":"1.0","id":"a","method":"x"}`, false, -32600, "a"},
		{`{"jsonrpc":"2.0","id":true,"method":"x"}`, false, -32600, nil},
		{`{"id":{"x":1},"method":"x"}`, false, -32600, nil},
		{`[{"jsonrpc":"2.0","id":1,"method":"a"},{"jsonrpc":"2.0","method":"b"}]`, false, 0, nil},
		{`[1,2]`, false, -32600, nil},
		{`[]`, false, -32600, nil},
		{`3`, false, -32600, nil},
	} {
		got := refusal([]byte(c.line), c.tooLong, true)
		if c.code == 0 {
			if got != nil {
				t.Errorf("%s refused: %s", c.line, got)
			}
			continue
		}
		var msg struct {
			ID    any
			Error struct{ Code float64 }
		}
		if !bytes.HasSuffix(got, []byte("\n")) || json.Unmarshal(got, &msg) != nil || msg.Error.Code != c.code || msg.ID != c.id {
			t.Errorf("%s (too long %v) got %s, want code %v id %v", c.line, c.tooLong, got, c.code, c.id)
		}
	}
}

func TestFilterLinesPassesMessagesAndAnswersTheRest(t *testing.T) {
	in := "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a\"}\r\n\n garbage\n{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"b\"}"
	var valid, reply bytes.Buffer
	if err := filterLines(strings.NewReader(in), &valid, &reply); err != nil {
		t.Fatal(err)
	}
	if want := "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a\"}\n{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"b\"}\n"; valid.String() != want {
		t.Errorf("passed on %q, want %q", valid.String(), want)
	}
	if n := strings.Count(reply.String(), "\n"); n != 1 || !strings.Contains(reply.String(), "-32700") {
		t.Errorf("replies: %q, want one parse error", reply.String())
	}
}

// TestMillisecondArgumentsDoNotOverflow: a timeout_ms whose nanoseconds
// overflow an int64 (18446744073709 ms wraps to -551µs) is bounded like
// any other long timeout, never turned into a negative wait that returns
// at once.
func TestMillisecondArgumentsDoNotOverflow(t *testing.T) {
	for _, ms := range []int64{18446744073709, 9223372036855, math.MaxInt64} {
		got, err := waitFor("timeout_ms", &ms, 0)
		if err != nil || got != maxWait {
			t.Errorf("waitFor(%d ms) = %v, %v; want %v", ms, got, err, maxWait)
		}
	}
	for _, ms := range []int64{18446744073709, math.MaxInt64} {
		_, err := idleTimeout(&ms)
		if err == nil || !strings.Contains(err.Error(), "over the cap") {
			t.Errorf("idleTimeout(%d ms) = %v; want over the cap", ms, err)
		}
	}
}

// TestFilterLinesRefusesBatchesTheSessionForbids: the SDK ends the whole
// session on a batch once 2025-06-18 or later was negotiated (or an
// unknown version, which negotiates the latest), so such a batch is
// answered with an invalid-request error; a client of 2025-03-26 may
// still batch.
func TestFilterLinesRefusesBatchesTheSessionForbids(t *testing.T) {
	batch := `[{"jsonrpc":"2.0","id":2,"method":"tools/list"}]`
	for version, passes := range map[string]bool{"2025-06-18": false, "2099-01-01": false, "2025-03-26": true, "2024-11-05": true} {
		init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"` + version + `"}}`
		var valid, reply bytes.Buffer
		if err := filterLines(strings.NewReader(init+"\n"+batch+"\n"), &valid, &reply); err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(valid.String(), batch); got != passes || !strings.HasPrefix(valid.String(), init+"\n") {
			t.Errorf("%s: passed on %q, want the batch passed %v", version, valid.String(), passes)
		}
		if refused := strings.Contains(reply.String(), "-32600"); refused == passes {
			t.Errorf("%s: replies %q, want the batch refused %v", version, reply.String(), !passes)
		}
	}
}

// TestFilterLinesLearnsTheVersionOnce: an initialize inside a batch is
// refused (the protocol forbids it, and the SDK would negotiate a version
// in which the next batch ends the session), and a second initialize,
// which the SDK refuses, does not change what the filter lets through.
func TestFilterLinesLearnsTheVersionOnce(t *testing.T) {
	initWith := func(v string) string {
		return `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"` + v + `"}}`
	}
	batch := `[{"jsonrpc":"2.0","id":2,"method":"ping"}]`
	for name, c := range map[string]struct {
		lines   []string
		refused []string // lines answered with -32600, not passed on
	}{
		"initialize in a batch": {[]string{"[" + initWith("2025-06-18") + "]"}, []string{"[" + initWith("2025-06-18") + "]"}},
		"second initialize":     {[]string{initWith("2025-06-18"), initWith("2024-11-05"), batch}, []string{batch}},
	} {
		var valid, reply bytes.Buffer
		if err := filterLines(strings.NewReader(strings.Join(c.lines, "\n")+"\n"), &valid, &reply); err != nil {
			t.Fatal(err)
		}
		for _, l := range c.lines {
			refused := slices.Contains(c.refused, l)
			if passed := strings.Contains(valid.String(), l+"\n"); passed == refused {
				t.Errorf("%s: %s passed on %v, want %v (passed: %q)", name, l, passed, !refused, valid.String())
			}
		}
		if got := strings.Count(reply.String(), "-32600"); got != len(c.refused) {
			t.Errorf("%s: %d refusals, want %d: %q", name, got, len(c.refused), reply.String())
		}
	}
}
