package notify

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/qtask/qtask/tasks/statefs"
)

// fakeTree is a process table with parents and environments.
type fakeTree struct {
	fakeProcs
	parent  map[int]int
	environ map[int]string // entries joined by NUL
}

func (p fakeTree) Parent(pid int) (int, uint64, error) {
	start, ok := p.fakeProcs[pid]
	if !ok {
		return 0, 0, os.ErrNotExist
	}
	return p.parent[pid], start, nil
}

func (p fakeTree) Environ(pid int) ([]byte, error) {
	env, ok := p.environ[pid]
	if !ok {
		return nil, os.ErrPermission // another user's process
	}
	return []byte(env), nil
}

// A hook notes the agent process above it, the nearest ancestor without
// the session variable the agent set for the hook; a command run under
// that agent finds the note, and a note of a process that is gone is
// dropped when a new one is written.
func TestAgentProcessNoteIsFoundByItsDescendants(t *testing.T) {
	const marker = "GEMINI_SESSION_ID=s1"
	hookParent := os.Getppid() // the shell the agent ran the hook in
	const agent = 5000
	tree := fakeTree{
		fakeProcs: fakeProcs{os.Getpid(): 1000, hookParent: 10, agent: 77, 1: 1},
		parent:    map[int]int{hookParent: agent, agent: 1},
		environ: map[int]string{
			hookParent: "PATH=/bin\x00" + marker + "\x00HOME=/h",
			agent:      "PATH=/bin\x00GEMINI_SESSION_ID=s10",
		},
	}
	q := New(t.TempDir(), isID, tree)
	if got := q.AgentProcessScope(); got != "" {
		t.Fatalf("before any note, the scope is %q, want none", got)
	}
	if err := statefs.MkdirPrivate(q.agentsDir()); err != nil {
		t.Fatal(err)
	}
	if err := statefs.WriteAtomic(q.agentProcPath(6000, 1), []byte("gone-scope")); err != nil {
		t.Fatal(err)
	}
	if err := q.NoteAgentProcess(marker, "scope-A"); err != nil {
		t.Fatal(err)
	}
	if names := dirNames(t, q.agentsDir()); len(names) != 1 || names[0] != "proc-5000-77" {
		t.Errorf("agents holds %q, want only the agent's note proc-5000-77", names)
	}
	if got := q.AgentProcessScope(); got != "scope-A" {
		t.Errorf("a process under the agent finds scope %q, want scope-A", got)
	}

	// An ancestor whose environment cannot be read (another user's) ends
	// the walk: nothing is noted.
	delete(tree.environ, agent)
	q2 := New(t.TempDir(), isID, tree)
	if err := q2.NoteAgentProcess(marker, "scope-B"); err != nil {
		t.Fatal(err)
	}
	if names := dirNames(t, q2.agentsDir()); len(names) != 0 {
		t.Errorf("noted %q though the agent's environment could not be read", names)
	}
}

func TestHasEntry(t *testing.T) {
	environ := []byte("A=1\x00GEMINI_SESSION_ID=s1\x00B=")
	for entry, want := range map[string]bool{
		"GEMINI_SESSION_ID=s1": true,
		"A=1":                  true,
		"B=":                   true,
		"GEMINI_SESSION_ID=s":  false, // a prefix of an entry is not it
		"A=12":                 false,
		"":                     false,
	} {
		if got := hasEntry(environ, []byte(entry)); got != want {
			t.Errorf("hasEntry(%q, %q) = %v, want %v", strings.ReplaceAll(string(environ), "\x00", "|"), entry, got, want)
		}
	}
}

// dirNames lists dir (none if it is missing).
func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

// TestAgentProcessScope: a start finds the scope noted for an agent
// process above it, the nearest one first, and none when no note names
// one of its ancestors (a person's process), whatever else the agents
// directory holds: a presence, a note of a process that is no ancestor,
// one of the parent's pid with another start time (a recycled pid).
func TestAgentProcessScope(t *testing.T) {
	parent, grand := os.Getppid(), 4000
	tree := fakeTree{
		fakeProcs: fakeProcs{os.Getpid(): 1000, parent: 10, grand: 20, 1: 1},
		parent:    map[int]int{parent: grand, grand: 1},
	}
	q := New(t.TempDir(), isID, tree)
	if got := q.AgentProcessScope(); got != "" {
		t.Fatalf("no agents directory: AgentProcessScope() = %q, want none", got)
	}
	if err := statefs.MkdirPrivate(q.agentsDir()); err != nil {
		t.Fatal(err)
	}
	note := func(path, scope string) {
		t.Helper()
		if err := statefs.WriteAtomic(path, []byte(scope)); err != nil {
			t.Fatal(err)
		}
	}
	note(filepath.Join(q.agentsDir(), "claude-abc.json"), "{}")
	note(q.agentProcPath(1, 1), "pid-one")
	note(q.agentProcPath(parent, 11), "recycled")
	if got := q.AgentProcessScope(); got != "" {
		t.Fatalf("no note of an ancestor: AgentProcessScope() = %q, want none", got)
	}
	note(q.agentProcPath(grand, 20), "gemini:far")
	if got := q.AgentProcessScope(); got != "gemini:far" {
		t.Fatalf("a note of the grandparent: AgentProcessScope() = %q, want gemini:far", got)
	}
	note(q.agentProcPath(parent, 10), "gemini:near")
	if got := q.AgentProcessScope(); got != "gemini:near" {
		t.Fatalf("notes of the parent and the grandparent: AgentProcessScope() = %q, want the nearer, gemini:near", got)
	}
}
