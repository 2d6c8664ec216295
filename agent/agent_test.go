package agent

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

func TestLongRunningHint(t *testing.T) {
	const out = "/home/me/.local/state/qtask/out/ab12cd34 with space.log"
	cases := []struct {
		ran, timeout time.Duration
		secs         int // -1: no hint
	}{
		{0, 0, -1},
		{999 * time.Millisecond, 0, -1},
		{time.Second, 0, 1},
		{1499 * time.Millisecond, 0, 1},
		{1500 * time.Millisecond, 0, 2},
		{2 * time.Hour, 0, 7200},
		{900 * time.Millisecond, time.Second, -1},
		{time.Second, time.Second, 1},
		{999 * time.Millisecond, 1500 * time.Millisecond, -1},
		{time.Second, 1500 * time.Millisecond, 1},
		{1499 * time.Millisecond, 3 * time.Second, -1},
		{1500 * time.Millisecond, 3 * time.Second, 2},
		{4999 * time.Millisecond, 10 * time.Second, -1},
		{5 * time.Second, 10 * time.Second, 5},
		{59900 * time.Millisecond, 2 * time.Minute, -1},
		{90 * time.Second, 2 * time.Minute, 90},
		{3 * time.Second, -time.Minute, 3},
	}
	// Each wording, and what it must say: a person gets one short line.
	hints := map[string]struct {
		hint func(ran, timeout time.Duration) string
		want func(secs int) []string
	}{
		"LongRunningHint": {LongRunningHint, func(secs int) []string {
			return []string{fmt.Sprintf("ran %ds;", secs), "`qtask run --bg`", "prefix B"}
		}},
		"AgentLongRunningHint": {func(ran, timeout time.Duration) string {
			return AgentLongRunningHint("qtask", ran, timeout, out)
		}, func(secs int) []string {
			return []string{fmt.Sprintf("ran for %ds.", secs), "`qtask run --bg", "do not re-run", out}
		}},
	}
	for fn, h := range hints {
		for _, tc := range cases {
			hint := h.hint(tc.ran, tc.timeout)
			name := fmt.Sprintf("%s: a command that ran %v with timeout %v", fn, tc.ran, tc.timeout)
			if tc.secs < 0 {
				if hint != "" {
					t.Errorf("%s got a long-running note it is not due: %q", name, hint)
				}
				continue
			}
			if hint == "" {
				t.Errorf("%s got no long-running note", name)
				continue
			}
			for _, want := range h.want(tc.secs) {
				if !strings.Contains(hint, want) {
					t.Errorf("%s: the note lacks %q: %q", name, want, hint)
				}
			}
		}
	}
	if hint := LongRunningHint(75*time.Second, 0); strings.Contains(hint, "\n") || len(hint) > 80 {
		t.Errorf("a person's note is one short line, got %d bytes: %q", len(hint), hint)
	}
}
