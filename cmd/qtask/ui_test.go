package main

import (
	"slices"
	"testing"
)

func TestSplitKeys(t *testing.T) {
	tests := map[string][]string{
		"q":          {"q"},
		"\x1b":       {"\x1b"},
		"\x1b[A":     {"\x1b[A"},
		"jj\x1b[Bs":  {"j", "j", "\x1b[B", "s"},
		"\x1bOB\r":   {"\x1bOB", "\r"},
		"\x1b[1;5Aq": {"\x1b[1;5A", "q"},
		"qecho hi":   {"q", "e", "c", "h", "o", " ", "h", "i"},
		"\x1b[":      {"\x1b", "["},
	}
	for in, want := range tests {
		if got := splitKeys(in); !slices.Equal(got, want) {
			t.Errorf("splitKeys(%q) = %q, want %q", in, got, want)
		}
	}
}
