package route

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestQwenToolTimeout: qwen's shell tool timeout comes from its settings,
// the project's (found at or above the command's directory) over the
// user's, else two minutes; 0 turns it off; a caller that is not qwen
// has none.
func TestQwenToolTimeout(t *testing.T) {
	root := t.TempDir()
	home, proj := filepath.Join(root, "home"), filepath.Join(root, "proj")
	sub := filepath.Join(proj, "src", "pkg")
	write := func(dir, text string) {
		t.Helper()
		os.MkdirAll(filepath.Join(dir, ".qwen"), 0o755)
		if err := os.WriteFile(filepath.Join(dir, ".qwen", "settings.json"), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	os.MkdirAll(sub, 0o755)
	check := func(session, cwd string, want time.Duration) {
		t.Helper()
		if got := QwenToolTimeout(session, home, cwd); got != want {
			t.Errorf("QwenToolTimeout(%q, %s): %v, want %v", session, cwd, got, want)
		}
	}
	check("", sub, 0)
	check("s1", sub, 2*time.Minute)
	write(home, `{"tools":{"shell":{"defaultTimeoutMs":300000}}}`)
	check("s1", sub, 5*time.Minute)
	write(proj, `{"tools":{"shell":{"defaultTimeoutMs":4000}}}`)
	check("s1", sub, 4*time.Second)
	check("s1", proj, 4*time.Second)
	write(proj, `{"tools":{"shell":{"defaultTimeoutMs":0}}}`)
	check("s1", sub, 0)
	write(proj, `{"tools":{"shell":{}}, "model": "x"}`)
	check("s1", sub, 5*time.Minute)
	write(proj, `not json`)
	check("s1", sub, 5*time.Minute)
}
