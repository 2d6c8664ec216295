package main

import (
	"os/exec"
	"strings"
	"testing"
)

// TestStartLinksNoDocumentTools: every qtask invocation pays for the start-up
// (package initialisation, page faults) of everything linked into the
// binary, whether the command uses it or not. Converting man pages through
// markdown and YAML libraries cost every `qtask run --bg` about a fifth of
// its time (bench/run-bg.sh); they must not come back.
func TestStartLinksNoDocumentTools(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	linked := map[string]bool{}
	for _, p := range strings.Fields(string(out)) {
		linked[p] = true
	}
	for _, heavy := range []string{
		"github.com/spf13/cobra/doc",
		"github.com/cpuguy83/go-md2man/v2/md2man",
		"github.com/russross/blackfriday/v2",
		"gopkg.in/yaml.v3",
	} {
		if linked[heavy] {
			t.Errorf("qtask links %s: every command starts slower for it", heavy)
		}
	}
}
