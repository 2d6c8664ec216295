package tmux

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/qtask/qtask/internal/testenv"
)

func TestParsePaneInfo(t *testing.T) {
	ok := PaneInfo{Pane: "%1", Window: "@2", Session: "$3", PID: 4567, Width: 80, Height: 24,
		WindowPanes: 2, Active: true, Path: "/tmp/a|b c_ü"}
	cases := []struct {
		name, line string
		want       *PaneInfo // nil: an error
	}{
		{"all fields", "%1|@2|$3|4567|80|24|2|10|/tmp/a|b c_ü", &ok},
		{"dead, inactive, empty path", "%1|@2|$3|4567|80|24|2|01|",
			&PaneInfo{Pane: "%1", Window: "@2", Session: "$3", PID: 4567, Width: 80, Height: 24, WindowPanes: 2, Dead: true}},
		// What tmux 3.3a printed for the old \x1f separator without a UTF-8 locale.
		{"separator rewritten by tmux", "%1_@2_$3_4567_80_24_2_10_/tmp", nil},
		{"too few fields", "%1|@2|$3|4567", nil},
		{"bad pane id", "1|@2|$3|4567|80|24|2|10|/", nil},
		{"bad number", "%1|@2|$3|x|80|24|2|10|/", nil},
		{"empty", "", nil},
	}
	for _, c := range cases {
		got, err := parsePaneInfo(c.line)
		switch {
		case c.want == nil && err == nil:
			t.Errorf("%s: %q parsed as %+v, want an error", c.name, c.line, got)
		case c.want != nil && err != nil:
			t.Errorf("%s: %q: %v", c.name, c.line, err)
		case c.want != nil && got != *c.want:
			t.Errorf("%s: %q parsed as %+v, want %+v", c.name, c.line, got, *c.want)
		}
	}
}

func FuzzParsePaneInfo(f *testing.F) {
	f.Add("%1|@2|$3|4567|80|24|2|10|/tmp")
	f.Add("%1_@2_$3_4567_80_24_2_10_/tmp")
	f.Fuzz(func(t *testing.T, line string) {
		info, err := parsePaneInfo(line)
		if err == nil && (info.Pane == "" || info.Window == "" || info.Session == "") {
			t.Errorf("%q parsed without ids: %+v", line, info)
		}
	})
}

// TestPaneInfoInAnyLocale asks a real tmux server about a pane from a
// client with and without a UTF-8 locale: in a bare container (env -i, no
// LANG) tmux rewrites non-printable and non-ASCII output bytes, which once
// broke promote and the foreground timeout there.
func TestPaneInfoInAnyLocale(t *testing.T) {
	server, _, root := privateServer(t, "qtl")
	dir := filepath.Join(root, "dïr|x")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	pane, pid, err := server.StartWindow(context.Background(), WindowSpec{Session: "t", Name: "ünï", Dir: dir, Argv: []string{"sleep", "60"}})
	if err != nil {
		t.Fatal(err)
	}
	// Right after the start tmux may not know the pane's directory yet (its
	// process has not taken the terminal): wait until it does.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		info, err := server.PaneInfo(context.Background(), pane)
		if err == nil && info.Path != "" || time.Now().After(deadline) {
			break
		}
	}
	locales := []struct{ name, lang string }{{"UTF-8", "C.UTF-8"}, {"no locale", ""}, {"C", "C"}}
	for _, l := range locales {
		for _, v := range []string{"LC_ALL", "LC_CTYPE", "LANG"} {
			t.Setenv(v, "")
			os.Unsetenv(v)
		}
		if l.lang != "" {
			os.Setenv("LANG", l.lang)
		}
		info, err := server.PaneInfo(context.Background(), pane)
		if err != nil {
			t.Errorf("%s: PaneInfo: %v", l.name, err)
			continue
		}
		if info.Pane != pane || !strings.HasPrefix(string(info.Window), "@") || info.PID != pid || info.Path != dir {
			t.Errorf("%s: PaneInfo = %+v, want pane %s, pid %d (as StartWindow said), path %q", l.name, info, pane, pid, dir)
		}
	}
}

// TestMissingSocketDirSaysWhy: tmux exits 0 when it cannot create the
// socket, saying why only on stderr; that reason must reach the user
// (it once surfaced as `invalid pane id ""`).
func TestMissingSocketDirSaysWhy(t *testing.T) {
	testenv.NeedProgram(t, "tmux")
	server := NewSocketServer(filepath.Join(t.TempDir(), "missing", "s"))
	_, _, err := server.StartWindow(context.Background(), WindowSpec{Session: "t", Argv: []string{"true"}})
	if err == nil || !strings.Contains(err.Error(), "error creating") || strings.Contains(err.Error(), "pane id") {
		t.Fatalf("start on a socket in a missing directory: %v, want tmux's own reason (error creating …)", err)
	}
}

// TestCaptureAndPipe snapshots a real pane: the lines scrolled into its
// history, its screen row by row (a line that wraps is two rows there), the
// cursor — and from the same moment on, the pipe gets what follows.
func TestCaptureAndPipe(t *testing.T) {
	server, sock, root := privateServer(t, "qtc")
	gate := filepath.Join(root, "gate")
	script := `seq 1 12; printf 'a line of twenty-six chars'; printf '\n50%%'; while [ ! -e ` + gate + ` ]; do sleep 0.01; done; printf '\r100%%'; sleep 60`
	if out, err := exec.Command("tmux", "-S", sock, "-f", "/dev/null", "new-session", "-d", "-s", "t", "-x", "20", "-y", "5", "sh", "-c", script).CombinedOutput(); err != nil {
		t.Fatalf("new-session: %v: %s", err, out)
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		screen, _ := exec.Command("tmux", "-S", sock, "capture-pane", "-p", "-t", "t").Output()
		if strings.Contains(string(screen), "50%") || time.Now().After(deadline) {
			break
		}
	}
	piped := filepath.Join(root, "piped")
	snap, err := server.CaptureAndPipe(context.Background(), PaneID("%0"), []string{"sh", "-c", "cat > " + piped})
	if err != nil {
		t.Fatal(err)
	}
	wantHistory := []string{"1", "2", "3", "4", "5", "6", "7", "8", "9", "10"}
	wantScreen := []string{"11", "12", "a line of twenty-six", " chars", "50%"}
	if !slices.Equal(snap.History, wantHistory) || !slices.Equal(snap.Screen, wantScreen) ||
		snap.CursorX != 3 || snap.CursorY != 4 || snap.Alternate {
		t.Fatalf("snapshot %+v\nwant history %q, screen %q, cursor 3,4, main screen", snap, wantHistory, wantScreen)
	}
	os.WriteFile(gate, nil, 0o600)
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		got, _ := os.ReadFile(piped)
		if string(got) == "\r100%" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the pipe got %q, want exactly what followed the snapshot", got)
		}
	}
}

func TestParseSnapshot(t *testing.T) {
	// No history: tmux answers the history's empty range with a screen
	// row, which is not history.
	snap, err := parseSnapshot("2|1|0|3|1\n$ x\nab\n\n$ x\n")
	if err != nil || snap.History != nil || !slices.Equal(snap.Screen, []string{"$ x", "ab", ""}) ||
		snap.CursorX != 2 || snap.CursorY != 1 || !snap.Alternate {
		t.Errorf("parseSnapshot without history = %+v, %v", snap, err)
	}
	for _, bad := range []string{"", "1|2|3\n", "0|0|0|9|0\nonly one row\n", "x|0|0|1|0\n\n"} {
		if _, err := parseSnapshot(bad); err == nil {
			t.Errorf("parseSnapshot(%q): no error", bad)
		}
	}
}

// privateServer is a tmux server of the test's own (started by the test's
// first command): its socket in a short temp dir, root, which also holds
// the test's files; the server is killed and root removed at the end.
func privateServer(t *testing.T, prefix string) (server Server, sock, root string) {
	t.Helper()
	testenv.NeedProgram(t, "tmux")
	root, err := os.MkdirTemp("", prefix)
	if err != nil {
		t.Fatal(err)
	}
	sock = filepath.Join(root, "s")
	t.Cleanup(func() {
		exec.Command("tmux", "-S", sock, "kill-server").Run()
		os.RemoveAll(root)
	})
	return NewSocketServer(sock), sock, root
}

// TestStartWindowRunsMeanwhileOnce: the work a start does while tmux opens
// its window runs exactly once whichever way the window is opened, and,
// over the socket, only once the command is on its way: the window
// appears while the work is still running.
func TestStartWindowRunsMeanwhileOnce(t *testing.T) {
	server, sock, root := privateServer(t, "qtm")
	windows := func(session string) int {
		out, _ := exec.Command("tmux", "-S", sock, "list-windows", "-t", "="+session+":").Output()
		return strings.Count(string(out), "\n")
	}
	cases := []struct {
		name, session string
		server        Server
		overlaps      bool // the server is up: the command is sent first
		wantErr       bool
	}{
		{name: "no server yet (forked client)", session: "a", server: server},
		{name: "session exists (socket)", session: "a", server: server, overlaps: true},
		// Meanwhile runs during the new-window that finds no session.
		{name: "session missing (socket, then created)", session: "b", server: server},
		{name: "no socket directory (fails)", session: "a", server: NewSocketServer(filepath.Join(root, "missing", "s")), wantErr: true},
	}
	for _, c := range cases {
		calls, before := 0, windows(c.session)
		sawWindow := false
		_, _, err := c.server.StartWindow(context.Background(), WindowSpec{Session: c.session, Argv: []string{"sleep", "60"},
			Meanwhile: func() {
				calls++
				for deadline := time.Now().Add(5 * time.Second); c.overlaps && !sawWindow && time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
					sawWindow = windows(c.session) > before
				}
			}})
		if (err != nil) != c.wantErr {
			t.Errorf("%s: StartWindow: %v", c.name, err)
		}
		if calls != 1 {
			t.Errorf("%s: Meanwhile ran %d times, want once", c.name, calls)
		}
		if c.overlaps && !sawWindow {
			t.Errorf("%s: the window never appeared while Meanwhile ran: the command was not sent first", c.name)
		}
	}
}
