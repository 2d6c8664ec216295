package tmux

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
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
	testenv.NeedProgram(t, "tmux")
	root, err := os.MkdirTemp("", "qtl")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(root)
	dir := filepath.Join(root, "dïr|x")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	server := NewSocketServer(filepath.Join(root, "s"))
	defer exec.Command("tmux", "-S", filepath.Join(root, "s"), "kill-server").Run()
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
