package tmux

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
)

func TestErrorIsClassifiesStderr(t *testing.T) {
	sentinels := []struct {
		name string
		err  error
	}{
		{"ErrNoServer", ErrNoServer},
		{"ErrNotFound", ErrNotFound},
		{"ErrDuplicateSession", ErrDuplicateSession},
		{"ErrNotInstalled", ErrNotInstalled},
	}
	cases := []struct {
		stderr string
		want   string // the one sentinel it must match, "" for none
	}{
		{"no server running on /tmp/x\n", "ErrNoServer"},
		{"no server running on /tmp/tmux-0/qtask", "ErrNoServer"},
		{"error connecting to /tmp/x (No such file or directory)\n", "ErrNoServer"},
		{"error connecting to /tmp/x (Connection refused)\n", "ErrNoServer"},
		{"can't find session: qtask\n", "ErrNotFound"},
		{"can't find pane: %9\n", "ErrNotFound"},
		{"can't find window: @3\n", "ErrNotFound"},
		{"no current target\n", "ErrNotFound"},
		{"server exited unexpectedly\n", "ErrNoServer"},
		{"duplicate session: qtask\n", "ErrDuplicateSession"},
		{"unknown command: frobnicate\n", ""},
		{"invalid option: -Z\n", ""},
		{"create window failed: index 3 in use\n", ""},
		{"", ""},
	}
	for _, c := range cases {
		err := error(&Error{Args: []string{"kill-pane", "-t", "%9"}, Stderr: c.stderr, Err: errors.New("exit status 1")})
		wrapped := fmt.Errorf("stop task: %w", err)
		var matched []string
		for _, s := range sentinels {
			if errors.Is(err, s.err) {
				matched = append(matched, s.name)
			}
			if errors.Is(wrapped, s.err) != errors.Is(err, s.err) {
				t.Errorf("stderr %q: wrapping the error changes whether it is %s", c.stderr, s.name)
			}
		}
		var want []string
		if c.want != "" {
			want = []string{c.want}
		}
		if !slices.Equal(matched, want) {
			t.Errorf("tmux said %q: classified as %q, want %q", c.stderr, matched, want)
		}
	}
}

func TestErrorMessageAndUnwrap(t *testing.T) {
	cause := context.DeadlineExceeded
	cases := []struct {
		e    *Error
		want string
	}{
		{&Error{Args: []string{"kill-pane", "-t", "%9"}, Stderr: "can't find pane: %9\n", Err: cause},
			"tmux kill-pane: can't find pane: %9"},
		{&Error{Args: []string{"list-panes"}, Stderr: "  \n", Err: cause},
			"tmux list-panes: " + cause.Error()},
		{&Error{Args: []string{"new-window", "-n", "a very long user command", "--", "qtask", "_exec", "id"},
			Stderr: "create window failed: index 3 in use\n", Err: cause},
			"tmux new-window: create window failed: index 3 in use"},
	}
	for _, c := range cases {
		if got := c.e.Error(); got != c.want {
			t.Errorf("user sees %q, want %q", got, c.want)
		}
		if !errors.Is(c.e, cause) {
			t.Errorf("%v does not unwrap to its cause %v", c.e, cause)
		}
	}
}

func TestSelectServer(t *testing.T) {
	cases := []struct {
		name             string
		explicit, inside string
		want             string
		wantArgs         []string
	}{
		{"explicit socket wins", "/tmp/explicit.sock", "/tmp/tmux-1000/default", "-S /tmp/explicit.sock", []string{"-S", "/tmp/explicit.sock"}},
		{"explicit socket alone", "/tmp/explicit.sock", "", "-S /tmp/explicit.sock", []string{"-S", "/tmp/explicit.sock"}},
		{"inside tmux", "", "/tmp/tmux-1000/default", "-S /tmp/tmux-1000/default", []string{"-S", "/tmp/tmux-1000/default"}},
		{"outside tmux: private server, named by its socket", "", "", "-S /run/tmux-test/tmux-" + strconv.Itoa(os.Getuid()) + "/qtask", []string{"-L", "qtask"}},
		{"socket path with a space", "/tmp/my dir/s", "", "-S /tmp/my dir/s", []string{"-S", "/tmp/my dir/s"}},
	}
	for _, c := range cases {
		s := SelectServer(c.explicit, c.inside, "/run/tmux-test")
		if got := s.String(); got != c.want {
			t.Errorf("%s: qtask uses tmux server %q, want %q", c.name, got, c.want)
		}
		if got := s.Args(); !slices.Equal(got, c.wantArgs) {
			t.Errorf("%s: tmux args %q, want %q", c.name, got, c.wantArgs)
		}
	}
	if got := NewSocketServer("/tmp/x").String(); got != "-S /tmp/x" {
		t.Errorf("NewSocketServer(/tmp/x) = %q, want -S /tmp/x", got)
	}
	if !strings.HasSuffix(SelectServer("", "", "").String(), "/"+DefaultSocketName) {
		t.Errorf("default server does not use DefaultSocketName %q", DefaultSocketName)
	}
}

// A server started again on the same socket path is another incarnation;
// a path that is no socket, or a server known by -L name alone, has none.
func TestIncarnationChangesWithTheSocket(t *testing.T) {
	path := t.TempDir() + "/sock"
	listen := func() *net.UnixListener {
		l, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	s := NewSocketServer(path)
	if got := s.Incarnation(); got != "" {
		t.Errorf("no socket yet: incarnation %q, want none", got)
	}
	l := listen()
	first := s.Incarnation()
	if first == "" || s.Incarnation() != first {
		t.Fatalf("incarnation %q, then %q: want one, the same", first, s.Incarnation())
	}
	l.Close() // removes the socket, as a server that exits does
	l = listen()
	defer l.Close()
	if again := s.Incarnation(); again == "" || again == first {
		t.Errorf("a new socket on the same path: incarnation %q, first %q; want another", again, first)
	}
	file := t.TempDir() + "/file"
	os.WriteFile(file, nil, 0o600)
	if got := NewSocketServer(file).Incarnation(); got != "" {
		t.Errorf("a path with no socket: incarnation %q, want none", got)
	}
	if got := (Server{socketName: "x"}).Incarnation(); got != "" {
		t.Errorf("-L x alone: incarnation %q, want none", got)
	}
}
