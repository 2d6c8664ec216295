package mcpserver

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// TestMCPTokenIsMadeOnceAndKept: the first call makes a private file with a
// fresh token; later calls, and servers starting at the same time, all get
// that one token.
func TestMCPTokenIsMadeOnceAndKept(t *testing.T) {
	dir := t.TempDir()
	tokens := make([]string, 8)
	var fresh int
	var mu sync.Mutex
	var wg sync.WaitGroup
	for i := range tokens {
		wg.Go(func() {
			token, _, created, err := Token(dir)
			if err != nil {
				t.Error(err)
			}
			mu.Lock()
			defer mu.Unlock()
			tokens[i] = token
			if created {
				fresh++
			}
		})
	}
	wg.Wait()
	if fresh != 1 || len(tokens[0]) < 26 || strings.Count(strings.Join(tokens, "\n"), tokens[0]) != len(tokens) {
		t.Fatalf("%d calls made a token, got %q; want one call to make one token (at least 128 bits) that all get", fresh, tokens)
	}
	token, path, created, err := Token(dir)
	if err != nil || created || token != tokens[0] || path != filepath.Join(dir, "mcp-token") {
		t.Errorf("again: %q %q %v %v; want the same token from %s", token, path, created, err, filepath.Join(dir, "mcp-token"))
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("the token file: %v %v, want mode 0600", fi, err)
	}
	names, _ := os.ReadDir(dir)
	for _, n := range names {
		if strings.Contains(n.Name(), ".tmp") {
			t.Errorf("left behind: %s", n.Name())
		}
	}
}

// TestMCPTokenRefusesAFileNotItsOwn: a token file others may read, a
// symlink, a short or unusable token: each refused with what to do, and
// nothing written through the symlink.
func TestMCPTokenRefusesAFileNotItsOwn(t *testing.T) {
	for _, c := range []struct {
		name  string
		plant func(path string)
		want  string
	}{
		{"readable by others", func(p string) { os.WriteFile(p, []byte("ABCDEFGHIJKLMNOPQRSTUVWXYZ\n"), 0o644) }, "has mode 0644: others may read the token; chmod 600 it"},
		{"a symlink", func(p string) { os.Symlink(p+".target", p) }, "it is a symlink: remove it"},
		{"too short", func(p string) { os.WriteFile(p, []byte("secret\n"), 0o600) }, "want one line of at least 16"},
		{"two words", func(p string) { os.WriteFile(p, []byte("ABCDEFGHIJ KLMNOPQRST\n"), 0o600) }, "want one line of at least 16"},
		{"a directory", func(p string) { os.Mkdir(p, 0o700) }, "not a regular file"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "mcp-token")
			c.plant(path)
			if token, _, _, err := Token(dir); err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), path) {
				t.Errorf("got %q, %v; want an error naming %s and saying %q", token, err, path, c.want)
			}
			if _, err := os.Lstat(path + ".target"); err == nil {
				t.Error("a token was written through the symlink")
			}
		})
	}
	dir := t.TempDir()
	own := "hand-written_token.0123456789+/="
	os.WriteFile(filepath.Join(dir, "mcp-token"), []byte(own+"\n"), 0o600)
	if token, _, created, err := Token(dir); token != own || created || err != nil {
		t.Errorf("a token written by hand: %q %v %v, want it as it is", token, created, err)
	}
}
