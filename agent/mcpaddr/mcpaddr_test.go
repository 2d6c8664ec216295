package mcpaddr

import (
	"strings"
	"testing"
)

func TestCheckNoAuth(t *testing.T) {
	for _, c := range []struct {
		addr    string
		anyHost bool
		want    string // "" for accepted
	}{
		{"127.0.0.1:8765", false, ""},
		{"127.1.2.3:0", false, ""},
		{"[::1]:8765", false, ""},
		{"localhost:8765", false, "loopback IP address"},
		{"0.0.0.0:8765", false, "loopback IP address"},
		{"192.168.1.2:8765", false, "loopback IP address"},
		{"127.0.0.1:8765", true, "cannot go with --listen-any"},
		{"8765", false, "loopback IP address"},
	} {
		err := CheckNoAuth(c.addr, c.anyHost)
		if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
			t.Errorf("CheckNoAuth(%q, %v) = %v, want %q", c.addr, c.anyHost, err, c.want)
		}
	}
}
