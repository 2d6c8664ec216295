package main

import (
	"runtime/debug"
	"testing"
)

func TestFormatVersion(t *testing.T) {
	vcs := func(rev, modified string) []debug.BuildSetting {
		return []debug.BuildSetting{{Key: "vcs.revision", Value: rev}, {Key: "vcs.modified", Value: modified}}
	}
	tests := []struct {
		name    string
		release string
		info    *debug.BuildInfo
		want    string
	}{
		{"no build info", "dev", nil, "qtask dev (go1.26.8, linux/amd64)"},
		{"local build without vcs", "dev", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}},
			"qtask dev (go1.26.8, linux/amd64)"},
		{"go install @version", "dev", &debug.BuildInfo{Main: debug.Module{Version: "v0.3.1"}},
			"qtask v0.3.1 (go1.26.8, linux/amd64)"},
		{"checkout", "dev", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: vcs("3f9a1c02d4e5f60718293a4b5c6d7e8f90a1b2c3", "false")},
			"qtask dev (rev 3f9a1c02d4e5, go1.26.8, linux/amd64)"},
		{"dirty checkout", "dev", &debug.BuildInfo{Settings: vcs("3f9a1c02d4e5f60718293a4b5c6d7e8f90a1b2c3", "true")},
			"qtask dev (rev 3f9a1c02d4e5+dirty, go1.26.8, linux/amd64)"},
		{"pseudo-version of the checkout", "dev", &debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-20261123180327-f8973516bd45+dirty"}, Settings: vcs("f8973516bd45ea98ae942742215799b5102b3997", "true")},
			"qtask v0.0.0-20261123180327-f8973516bd45+dirty (go1.26.8, linux/amd64)"},
		{"release wins", "v1.0.0", &debug.BuildInfo{Main: debug.Module{Version: "v0.9.0"}, Settings: vcs("abc", "false")},
			"qtask v1.0.0 (rev abc, go1.26.8, linux/amd64)"},
	}
	for _, tt := range tests {
		if got := formatVersion(tt.release, tt.info, "go1.26.8", "linux/amd64"); got != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
}
