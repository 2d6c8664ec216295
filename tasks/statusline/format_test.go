package statusline

import "testing"

func TestFormat(t *testing.T) {
	const def = "⏵{running} ✗{failed}"
	tests := []struct {
		format string
		c      Counts
		want   string
	}{
		{def, Counts{}, ""},
		{def, Counts{Running: 2}, "⏵2"},
		{def, Counts{Failed: 1}, "✗1"},
		{def, Counts{Running: 2, Failed: 1}, "⏵2 ✗1"},
		{"#[fg=red]{failed}! {running}/run", Counts{Running: 3}, "3/run"},
		{"qtask {running}", Counts{Running: 1}, "qtask 1"},
		{"qtask {running}", Counts{Failed: 1}, "qtask"},
		{"[{running}|{failed}]", Counts{Failed: 4}, "[0|4]"},
		{"{running}  {failed}", Counts{Running: 1, Failed: 1}, "1 1"},
	}
	for _, tt := range tests {
		if got := Format(tt.format, tt.c); got != tt.want {
			t.Errorf("Format(%q, %+v) = %q, want %q", tt.format, tt.c, got, tt.want)
		}
	}
}
