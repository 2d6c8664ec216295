package menuui

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// fakeSource lists rows and records what the menu asked of it.
type fakeSource struct {
	rows  []Row
	calls []string
}

func (f *fakeSource) Rows(context.Context) ([]Row, error) { return slices.Clone(f.rows), nil }

func (f *fakeSource) Row(_ context.Context, id string) (Row, error) {
	for _, r := range f.rows {
		if r.ID == id {
			return r, nil
		}
	}
	return Row{}, errors.New("no task " + id)
}

func (f *fakeSource) Viewable(_ context.Context, id string) error {
	if strings.HasPrefix(id, "far") {
		return errors.New("task " + id + " runs on another tmux server")
	}
	return nil
}

func (f *fakeSource) Stop(_ context.Context, id string) string {
	f.calls = append(f.calls, "stop "+id)
	return "Stopped task " + id
}

func (f *fakeSource) Remove(_ context.Context, id string, force bool) string {
	f.calls = append(f.calls, fmt.Sprintf("rm %s force=%v", id, force))
	f.rows = slices.DeleteFunc(f.rows, func(r Row) bool { return r.ID == id })
	return "Removed task " + id
}

func (f *fakeSource) View(id string) *exec.Cmd   { return exec.Command("view", id) }
func (f *fakeSource) Log(id string) *exec.Cmd    { return exec.Command("log", id) }
func (f *fakeSource) Follow(id string) *exec.Cmd { return exec.Command("follow", id) }

// fakeTerminal records the programs given the terminal and the pauses.
type fakeTerminal struct{ calls []string }

func (f *fakeTerminal) give(cmd *exec.Cmd) error {
	f.calls = append(f.calls, strings.Join(cmd.Args, " "))
	return nil
}

func (f *fakeTerminal) pause(line string) { f.calls = append(f.calls, "pause") }

func threeRows() []Row {
	return []Row{
		{ID: "run1", Status: "running", Runtime: "5s", Label: "sleep 60", Running: true},
		{ID: "far2", Status: "running", Runtime: "4s", Label: "elsewhere", Running: true},
		{ID: "done3", Status: "completed (exit 0)", Runtime: "1s", Label: "true"},
	}
}

// TestKeys plays keys on a menu of three tasks and checks what the menu
// asked of the source and the terminal, what it noted, and whether it
// went on.
func TestKeys(t *testing.T) {
	tests := []struct {
		name     string
		keys     []string
		calls    []string // of the source, then of the terminal
		note     string
		quit     bool
		selected string
	}{
		{name: "q quits", keys: []string{"q"}, quit: true, selected: "run1"},
		{name: "Esc quits", keys: []string{"\x1b"}, quit: true, selected: "run1"},
		{name: "Ctrl+C quits", keys: []string{"\x03"}, quit: true, selected: "run1"},
		{name: "down and up", keys: []string{"j", "\x1b[B", "k"}, selected: "far2"},
		{name: "down stops at the end", keys: []string{"j", "j", "j", "\x1bOB"}, selected: "done3"},
		{name: "up stops at the top", keys: []string{"k", "\x1bOA"}, selected: "run1"},
		{name: "Enter views and quits", keys: []string{"\r"}, calls: []string{"view run1"}, quit: true, selected: "run1"},
		{name: "Enter on another server's task says why", keys: []string{"j", "\r"},
			note: "task far2 runs on another tmux server", selected: "far2"},
		{name: "Enter on an ended task says so", keys: []string{"j", "j", "\r"},
			note: "task done3 is not running (completed (exit 0)): l reads its log", selected: "done3"},
		{name: "l reads the log", keys: []string{"l"}, calls: []string{"log run1"}, selected: "run1"},
		{name: "f follows, no pause while it runs", keys: []string{"f"}, calls: []string{"follow run1"}, selected: "run1"},
		{name: "f follows an ended task, then pauses", keys: []string{"j", "j", "f"}, calls: []string{"follow done3", "pause"}, selected: "done3"},
		{name: "s stops", keys: []string{"s"}, calls: []string{"stop run1"}, note: "Stopped task run1", selected: "run1"},
		{name: "x removes an ended task at once", keys: []string{"j", "j", "x"},
			calls: []string{"rm done3 force=false"}, note: "Removed task done3", selected: "done3"},
		{name: "x asks for a running task", keys: []string{"x"},
			note: "task run1 is running: y stops it and removes it with its output, any other key keeps it", selected: "run1"},
		{name: "x then n keeps it", keys: []string{"x", "n"}, note: "task run1 kept", selected: "run1"},
		{name: "x then q keeps it, and stays", keys: []string{"x", "q"}, note: "task run1 kept", selected: "run1"},
		{name: "x then y removes it by force", keys: []string{"x", "y"},
			calls: []string{"rm run1 force=true"}, note: "Removed task run1", selected: "run1"},
		{name: "other keys do nothing", keys: []string{"z", "\x1b[1;5A"}, selected: "run1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			src, term := &fakeSource{rows: threeRows()}, &fakeTerminal{}
			m := &menu{src: src, term: term}
			m.load(context.Background())
			quit := false
			for _, k := range tc.keys {
				if !m.key(context.Background(), k) {
					quit = true
					break
				}
			}
			if calls := append(src.calls, term.calls...); !slices.Equal(calls, tc.calls) {
				t.Errorf("keys %q asked %q, want %q", tc.keys, calls, tc.calls)
			}
			if m.note != tc.note {
				t.Errorf("keys %q noted %q, want %q", tc.keys, m.note, tc.note)
			}
			if quit != tc.quit {
				t.Errorf("keys %q: quit %v, want %v", tc.keys, quit, tc.quit)
			}
			if m.selected != tc.selected {
				t.Errorf("keys %q: cursor on %q, want %q", tc.keys, m.selected, tc.selected)
			}
		})
	}
}

// After a remove the cursor stays on its row, now the next task's.
func TestCursorStaysOnItsRowAfterRemove(t *testing.T) {
	src := &fakeSource{rows: threeRows()}
	m := &menu{src: src, term: &fakeTerminal{}}
	m.load(context.Background())
	m.key(context.Background(), "j")
	m.key(context.Background(), "x")
	m.key(context.Background(), "y")
	m.load(context.Background())
	if m.selected != "done3" {
		t.Fatalf("after removing far2 the cursor is on %q, want the next row's done3", m.selected)
	}
}

// screenLines is a frame as the lines a terminal shows, escapes gone.
func screenLines(frame string) []string {
	var lines []string
	for _, l := range strings.Split(frame, "\r\n") {
		for _, esc := range []string{"\x1b[H", "\x1b[2J", "\x1b[K", "\x1b[7m", "\x1b[0m"} {
			l = strings.ReplaceAll(l, esc, "")
		}
		lines = append(lines, l)
	}
	return lines
}

// The labels start in one column whatever the mix of statuses, and a
// status wider than the column is cut, not let to push its row's label.
func TestFrameColumnsLineUp(t *testing.T) {
	rows := append(threeRows(), Row{ID: "mon4", Status: "completed (max events reached, 1000 events)", Runtime: "2m", Label: "monitor"})
	m := &menu{src: &fakeSource{rows: rows}, term: &fakeTerminal{}}
	m.load(context.Background())
	lines := screenLines(m.frame(24, 80))
	column := map[string]int{}
	for _, l := range lines {
		for _, r := range rows {
			if i := strings.Index(l, r.Label); i >= 0 && strings.Contains(l, r.ID) {
				column[r.ID] = len([]rune(l[:i]))
			}
		}
	}
	if len(column) != len(rows) {
		t.Fatalf("not every row is drawn:\n%s", strings.Join(lines, "\n"))
	}
	for id, c := range column {
		if c != column["run1"] {
			t.Errorf("%s's label starts at column %d, run1's at %d:\n%s", id, c, column["run1"], strings.Join(lines, "\n"))
		}
	}
	if !strings.Contains(strings.Join(lines, "\n"), "completed (max events re…  ") {
		t.Errorf("the long status is not cut to the column:\n%s", strings.Join(lines, "\n"))
	}
}

// A list taller than the screen says how many rows are below, and above
// once the cursor has gone down past the first screen.
func TestFrameSaysHowManyMore(t *testing.T) {
	var rows []Row
	for i := range 30 {
		rows = append(rows, Row{ID: fmt.Sprintf("t%02d", i), Status: "completed", Runtime: "1s", Label: fmt.Sprintf("many-%02d", i)})
	}
	m := &menu{src: &fakeSource{rows: rows}, term: &fakeTerminal{}}
	m.load(context.Background())
	const height = 12
	shownRows := func(lines []string) int {
		n := 0
		for _, l := range lines {
			if strings.Contains(l, "many-") {
				n++
			}
		}
		return n
	}
	lines := screenLines(m.frame(height, 80))
	shown := shownRows(lines)
	// the title, the rows, the more line, a blank line and the keys
	if want := height - 4; shown != want {
		t.Fatalf("%d rows shown on a screen of %d lines, want %d:\n%s", shown, height, want, strings.Join(lines, "\n"))
	}
	if more := fmt.Sprintf("  ↓ %d more", len(rows)-shown); !slices.Contains(lines, more) {
		t.Fatalf("no line %q:\n%s", more, strings.Join(lines, "\n"))
	}
	for range shown {
		m.key(context.Background(), "j")
	}
	lines = screenLines(m.frame(height, 80))
	if more := fmt.Sprintf("  ↑ 1 more  ↓ %d more", len(rows)-shown-1); !slices.Contains(lines, more) {
		t.Fatalf("after %d downs, no line %q:\n%s", shown, more, strings.Join(lines, "\n"))
	}
	if !slices.ContainsFunc(lines, func(l string) bool {
		return strings.HasPrefix(l, "> ") && strings.Contains(l, fmt.Sprintf("many-%02d", shown))
	}) {
		t.Fatalf("the cursor is not on many-%02d:\n%s", shown, strings.Join(lines, "\n"))
	}
}

func TestMoreRows(t *testing.T) {
	tests := []struct {
		above, below int
		want         string
	}{
		{0, 0, ""},
		{0, 4, "  ↓ 4 more"},
		{2, 0, "  ↑ 2 more"},
		{1, 3, "  ↑ 1 more  ↓ 3 more"},
	}
	for _, tc := range tests {
		if got := moreRows(tc.above, tc.below); got != tc.want {
			t.Errorf("moreRows(%d, %d) = %q, want %q", tc.above, tc.below, got, tc.want)
		}
	}
}

func TestSplitKeys(t *testing.T) {
	tests := map[string][]string{
		"q":          {"q"},
		"\x1b":       {"\x1b"},
		"\x1b[A":     {"\x1b[A"},
		"jj\x1b[Bs":  {"j", "j", "\x1b[B", "s"},
		"\x1bOB\r":   {"\x1bOB", "\r"},
		"\x1b[1;5Aq": {"\x1b[1;5A", "q"},
		"\x1b[":      {"\x1b", "["},
	}
	for in, want := range tests {
		if got := SplitKeys(in); !slices.Equal(got, want) {
			t.Errorf("SplitKeys(%q) = %q, want %q", in, got, want)
		}
	}
}
