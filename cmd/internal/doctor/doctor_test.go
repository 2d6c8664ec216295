package doctor

import "testing"

func TestCgroupFinding(t *testing.T) {
	tests := []struct {
		cgroup string
		ok     bool
	}{
		{"0::/user.slice/user-1000.slice/session-3.scope\n", true},
		{"0::/user.slice/user-1000.slice/user@1000.service/app.slice/tmux-spawn-1.scope\n", true},
		{"0::/user.slice/user-1000.slice/user@1000.service\n", true},
		{"0::/user.slice/user-1000.slice/user@1000.service/app.slice/app-gnome-terminal.service\n", false},
		{"0::/system.slice/ssh-agent-ci.service\n", false},
		{"12:pids:/\n0::/\n", true},
	}
	for _, tt := range tests {
		f := cgroupFinding(tt.cgroup)
		if f.OK != tt.ok || !tt.ok && f.Fix == "" {
			t.Errorf("cgroup %q: ok=%v fix=%q, want ok=%v", tt.cgroup, f.OK, f.Fix, tt.ok)
		}
	}
}

func TestLocaleFinding(t *testing.T) {
	for locale, ok := range map[string]bool{"C.UTF-8": true, "en_US.utf8": true, "": false, "C": false, "POSIX": false} {
		if f := checkLocale(locale); f.OK != ok {
			t.Errorf("locale %q: ok=%v, want %v", locale, f.OK, ok)
		}
	}
}
