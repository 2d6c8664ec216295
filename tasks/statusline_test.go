package tasks

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

func TestFormatStatus(t *testing.T) {
	const def = "⏵{running} ✗{failed}"
	tests := []struct {
		format string
		c      StatusCounts
		want   string
	}{
		{def, StatusCounts{}, ""},
		{def, StatusCounts{Running: 2}, "⏵2"},
		{def, StatusCounts{Failed: 1}, "✗1"},
		{def, StatusCounts{Running: 2, Failed: 1}, "⏵2 ✗1"},
		{"#[fg=red]{failed}! {running}/run", StatusCounts{Running: 3}, "3/run"},
		{"qtask {running}", StatusCounts{Running: 1}, "qtask 1"},
		{"qtask {running}", StatusCounts{Failed: 1}, "qtask"},
		{"[{running}|{failed}]", StatusCounts{Failed: 4}, "[0|4]"},
		{"{running}  {failed}", StatusCounts{Running: 1, Failed: 1}, "1 1"},
	}
	for _, tt := range tests {
		if got := FormatStatus(tt.format, tt.c); got != tt.want {
			t.Errorf("FormatStatus(%q, %+v) = %q, want %q", tt.format, tt.c, got, tt.want)
		}
	}
}

func TestShortLabel(t *testing.T) {
	if got := shortLabel("make\x1b[31m\u202e all", 40); got != "make [31m  all" {
		t.Errorf("controls not blanked: %q", got)
	}
	if got := shortLabel("abcdefghij", 5); got != "abcd…" {
		t.Errorf("cut: %q", got)
	}
}

// Count markers are links to one file: starting and ending tasks moves
// the counts without allocating an inode per task.
func TestCountMarkersShareOneInode(t *testing.T) {
	s := newTestStore(t)
	for _, id := range []string{"aaaa0001", "aaaa0002", "aaaa0003"} {
		s.countStart(id)
	}
	s.setCount(countUnseen, "aaaa0004", true)
	s.setCount(countRunning, "aaaa0002", false)
	c, err := s.Counts()
	if err != nil {
		t.Fatal(err)
	}
	if c.Running != 2 || c.Failed != 1 {
		t.Fatalf("counts %+v, want 2 running and 1 failed", c)
	}
	inodes := map[uint64]bool{}
	for _, path := range []string{
		filepath.Join(s.countsDir(countRunning), "aaaa0001"),
		filepath.Join(s.countsDir(countRunning), "aaaa0003"),
		filepath.Join(s.countsDir(countUnseen), "aaaa0004"),
	} {
		fi, err := os.Lstat(path)
		if err != nil {
			t.Fatal(err)
		}
		if !fi.Mode().IsRegular() || fi.Mode().Perm() != fileMode {
			t.Errorf("%s: mode %v, want a regular file %v", path, fi.Mode(), os.FileMode(fileMode))
		}
		inodes[fi.Sys().(*syscall.Stat_t).Ino] = true
	}
	if len(inodes) != 1 {
		t.Errorf("the markers are %d files, want links to one", len(inodes))
	}
}

// @qtask-notify-time is milliseconds; anything else is the default, never
// tmux's 750 ms display-time.
func TestEndNotifyTime(t *testing.T) {
	for value, want := range map[string]time.Duration{
		"":      DefaultEndNotifyTime,
		"2500":  2500 * time.Millisecond,
		" 800 ": 800 * time.Millisecond,
		"0":     0, // until a key is pressed
		"-1":    DefaultEndNotifyTime,
		"3s":    DefaultEndNotifyTime,
		"lots":  DefaultEndNotifyTime,
	} {
		if got := endNotifyTime(value); got != want {
			t.Errorf("@qtask-notify-time %q: %v, want %v", value, got, want)
		}
	}
}
