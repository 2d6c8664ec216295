package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// --version and -v print what `qtask version` does.
func TestVersionFlags(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	want := h.mustQtask("version")
	if !strings.HasPrefix(want, "qtask ") {
		t.Fatalf("qtask version: %q", want)
	}
	for _, flag := range []string{"--version", "-v"} {
		if got := h.mustQtask(flag); got != want {
			t.Errorf("qtask %s printed %q, want %q", flag, got, want)
		}
	}
}

// bashComplete completes the words of line (the last one being completed)
// with qtask's generated bash completion script, as bash would on Tab. The
// script relies on the bash-completion package for splitting the line;
// where that is not installed a minimal stand-in does the same for plain
// words.
func (h *harness) bashComplete(line ...string) []string {
	h.t.Helper()
	script := filepath.Join(h.root, "qtask.bash")
	if err := os.WriteFile(script, []byte(h.mustQtask("completion", "bash")), 0o600); err != nil {
		h.t.Fatal(err)
	}
	words := make([]string, len(line))
	for i, w := range line {
		words[i] = "'" + w + "'"
	}
	drive := `[ -r /usr/share/bash-completion/bash_completion ] && source /usr/share/bash-completion/bash_completion
type _get_comp_words_by_ref >/dev/null 2>&1 || _get_comp_words_by_ref() {
	cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]} words=("${COMP_WORDS[@]}") cword=$COMP_CWORD
}
source "$1"
COMP_WORDS=(` + strings.Join(words, " ") + `)
COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
COMP_LINE="${COMP_WORDS[*]}"
COMP_POINT=${#COMP_LINE}
__start_qtask qtask "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
printf '%s\n' "${COMPREPLY[@]}"`
	cmd := exec.Command("bash", "--norc", "--noprofile", "-c", drive, "bash", script)
	cmd.Env = h.env
	// Outside a real Tab, the script's compopt complains on stderr.
	out, err := cmd.Output()
	if err != nil {
		h.t.Fatalf("bash completion of %q: %v\n%s", line, err, out)
	}
	var got []string
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			got = append(got, l)
		}
	}
	return got
}

// Tab after `qtask stop` offers the running tasks' ids (a finished one
// would be refused), after `qtask logs` every task's, and a typed prefix
// narrows them.
func TestBashCompletesTaskIDs(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	running := h.start("sleep 60")
	done := h.wait(h.start("true").ID)
	if got := h.bashComplete("qtask", "stop", ""); len(got) != 1 || got[0] != running.ID {
		t.Errorf("qtask stop <Tab>: %q, want only the running task %s", got, running.ID)
	}
	got := h.bashComplete("qtask", "logs", "")
	if len(got) != 2 || !strings.Contains(strings.Join(got, " "), running.ID) || !strings.Contains(strings.Join(got, " "), done.ID) {
		t.Errorf("qtask logs <Tab>: %q, want both tasks", got)
	}
	if got := h.bashComplete("qtask", "logs", done.ID[:3]); len(got) != 1 || got[0] != done.ID && !strings.HasPrefix(done.ID, got[0]) {
		t.Errorf("qtask logs %s<Tab>: %q, want %s", done.ID[:3], got, done.ID)
	}
	if got := h.bashComplete("qtask", "sta"); strings.Join(got, " ") != "status status-line" {
		t.Errorf("qtask sta<Tab>: %q", got)
	}
	h.mustQtask("stop", running.ID)
}
