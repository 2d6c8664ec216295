package tmux

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/qtask/qtask/internal/testenv"
)

// tmux's socket directory is refused unless it is a directory of ours
// that nobody else may use, as tmux's own client refuses it for -L; a
// directory by any other name is the user's choice and not judged.
func TestCheckSocketDir(t *testing.T) {
	root := t.TempDir()
	tmuxDir := fmt.Sprintf("tmux-%d", os.Getuid())
	for _, tc := range []struct {
		name    string
		make    func(dir string) error
		refused string // in the error; "" for accepted
		asRoot  bool   // the case chowns
	}{
		{"missing", func(string) error { return nil }, "", false},
		{"0700", func(dir string) error { return os.Mkdir(dir, 0o700) }, "", false},
		{"0777", mkdirMode(0o777), "open to others (mode 0777)", false},
		{"0701", mkdirMode(0o701), "open to others (mode 0701)", false},
		{"0750", mkdirMode(0o750), "open to others (mode 0750)", false},
		{"a symlink to a good one", func(dir string) error {
			real := dir + "-real"
			if err := os.Mkdir(real, 0o700); err != nil {
				return err
			}
			return os.Symlink(real, dir)
		}, "not a directory", false},
		{"a file", func(dir string) error { return os.WriteFile(dir, nil, 0o600) }, "not a directory", false},
		{"another user's", func(dir string) error {
			if err := os.Mkdir(dir, 0o700); err != nil {
				return err
			}
			return os.Chown(dir, 65534, 65534)
		}, "owned by nobody (uid 65534), not by you", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.asRoot && os.Geteuid() != 0 {
				testenv.Unavailable(t, "giving a directory to another user needs root")
			}
			base := filepath.Join(root, tc.name)
			if err := os.Mkdir(base, 0o700); err != nil {
				t.Fatal(err)
			}
			for _, name := range []string{tmuxDir, "elsewhere"} {
				dir := filepath.Join(base, name)
				if err := tc.make(dir); err != nil {
					t.Fatal(err)
				}
				err := checkSocket(filepath.Join(dir, "qtask"))
				want := tc.refused
				if name == "elsewhere" {
					want = "" // named by the user, as tmux -S
				}
				var unsafe *UnsafeSocketError
				switch {
				case want == "" && err != nil:
					t.Errorf("%s: refused: %v", name, err)
				case want != "" && (!errors.As(err, &unsafe) || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), dir)):
					t.Errorf("%s: %v; want it refused naming %s and %q", name, err, dir, want)
				}
			}
		})
	}
}

func mkdirMode(mode os.FileMode) func(string) error {
	return func(dir string) error {
		if err := os.Mkdir(dir, 0o700); err != nil {
			return err
		}
		return os.Chmod(dir, mode)
	}
}

// A socket another user listens on gets nothing from a command, however
// it is named, and whether it is sent over the socket or by the forked
// client: refused by the socket's owner, and, where the socket file
// says it is ours, by the listening process's (SO_PEERCRED).
func TestForeignListenerGetsNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the other user's listener with go build")
	}
	testenv.NeedProgram(t, "tmux")
	testenv.OtherUser(t, "qtasktmux")
	for _, tc := range []struct {
		name      string
		chownOurs bool
		want      string
	}{
		{"its socket", false, "owned by qtasktmux"},
		{"its listener on a socket of ours", true, "listened on by pid"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// A directory both may write, as /tmp.
			dir, err := os.MkdirTemp("", "qtshared")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { os.RemoveAll(dir) })
			if err := os.Chmod(dir, 0o1777); err != nil {
				t.Fatal(err)
			}
			sock := filepath.Join(dir, "sock")
			stop := testenv.ForeignListener(t, "qtasktmux", sock)
			if tc.chownOurs {
				if err := os.Lchown(sock, os.Getuid(), os.Getgid()); err != nil {
					t.Fatal(err)
				}
			}
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			_, err = NewSocketServer(sock).run(ctx, "display-message", "-p", "secret")
			var unsafe *UnsafeSocketError
			if !errors.As(err, &unsafe) || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), sock) {
				t.Errorf("run: %v; want it refused naming %s and %q", err, sock, tc.want)
			}
			if got := stop(); len(got) != 0 {
				t.Errorf("the other user's listener received %d bytes: %.200q", len(got), got)
			}
		})
	}
}
