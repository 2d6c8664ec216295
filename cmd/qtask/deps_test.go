package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestStartLinksNoDocumentOrMCPTools: every qtask invocation pays for the
// start-up (package initialisation, page faults) of everything linked into
// the binary, whether the command uses it or not. Converting man pages
// through markdown and YAML libraries cost every command about 0.5 ms of
// CPU, the MCP SDK (net/http, TLS, OAuth) about 0.6 ms (bench/run-bg.sh);
// the MCP server is qtask-mcp, a program of its own.
func TestStartLinksNoDocumentOrMCPTools(t *testing.T) {
	t.Parallel()
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
		"github.com/modelcontextprotocol/go-sdk/mcp",
		"net/http",
	} {
		if linked[heavy] {
			t.Errorf("qtask links %s: every command starts slower for it", heavy)
		}
	}
}

// TestMCPWithoutItsServerSaysWhatToBuild: a qtask installed without
// qtask-mcp beside it says what is missing instead of failing obscurely.
func TestMCPWithoutItsServerSaysWhatToBuild(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	data, err := os.ReadFile(qtaskBin)
	if err != nil {
		t.Fatal(err)
	}
	alone := filepath.Join(h.root, "alone", "qtask")
	if err := os.MkdirAll(filepath.Dir(alone), 0o700); err != nil {
		t.Fatal(err)
	}
	writeExecutable(t, alone, data)
	cmd := exec.Command(alone, "mcp")
	cmd.Env, cmd.Dir = h.env, h.root
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != exitError || !strings.Contains(string(out), "needs qtask-mcp beside qtask") {
		t.Errorf("qtask mcp without qtask-mcp: %v, %q; want exit %d naming qtask-mcp", err, out, exitError)
	}
}
