package main

import (
	"strings"
	"testing"
)

// Tab in a bare bash (bash --norc: no bash-completion package loaded, as
// on a fresh macOS or a minimal container) completes `qtask logs ` with
// the task ids, newest first, and prints no error: cobra's script alone
// calls bash-completion's _get_comp_words_by_ref and showed
// `_get_comp_words_by_ref: command not found` on every Tab.
func TestBashCompletionWithoutTheBashCompletionPackage(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	pane := h.shellSession("work") // bash --norc --noprofile -i
	first := h.wait(h.start("true", "--name", "first").ID)
	second := h.wait(h.start("true", "--name", "second").ID)
	third := h.wait(h.start("true", "--name", "third").ID)
	h.tmux("send-keys", "-t", pane, "source <(qtask completion bash); echo loaded-$((6*7))", "Enter")
	h.waitScreen(pane, "loaded-42")
	// Two Tabs: the first completes what all share (nothing), the second lists.
	h.tmux("send-keys", "-t", pane, "qtask logs ", "Tab", "Tab")
	var screen string
	eventually(t, "Tab to list the tasks or fail", func() bool {
		screen = h.screen(pane)
		return strings.Contains(screen, "(third)") || strings.Contains(screen, "not found")
	})
	if strings.Contains(screen, "command not found") || strings.Contains(screen, "_get_comp_words_by_ref") {
		t.Fatalf("Tab printed an error in a bash without bash-completion:\n%s", screen)
	}
	at := func(id string) int {
		i := strings.Index(screen, id)
		if i < 0 {
			t.Fatalf("qtask logs <Tab><Tab> does not offer %s:\n%s", id, screen)
		}
		return i
	}
	if !(at(third.ID) < at(second.ID) && at(second.ID) < at(first.ID)) {
		t.Errorf("qtask logs <Tab><Tab> offers the ids out of order, want newest first (%s third, %s second, %s first):\n%s",
			third.ID, second.ID, first.ID, screen)
	}
	// A typed prefix narrows to one id, completed on the line with the
	// space after it (the "zz" typed next shows it: a screen has no
	// trailing blanks).
	h.tmux("send-keys", "-t", pane, "C-u", "qtask status "+second.ID[:5], "Tab", "zz")
	h.waitScreen(pane, "qtask status "+second.ID+" zz")
}
