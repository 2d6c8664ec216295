package tasks

import "testing"

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
