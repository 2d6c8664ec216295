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
	// As qwen reads it: comments, a number written as a float, a huge one.
	write(proj, "{\n  // \"a // comment\"\n  \"tools\": {/* the shell */ \"shell\": {\"defaultTimeoutMs\": 60000}},\n  \"x\": \"http://a/*b*/\"\n}")
	check("s1", sub, time.Minute)
	write(proj, `{"tools":{"shell":{"defaultTimeoutMs":90000.0}}}`)
	check("s1", sub, 90*time.Second)
	write(proj, `{"tools":{"shell":{"defaultTimeoutMs":1e300}}}`)
	check("s1", sub, maxQwenTimeout)
	write(proj, `{"tools":{"shell":{"defaultTimeoutMs":-1}}}`)
	check("s1", sub, 5*time.Minute)
}
