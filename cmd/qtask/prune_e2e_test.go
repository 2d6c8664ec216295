package main

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/qtask/qtask/tasks"
)

// TestRetention: a run keeps the newest keep_finished finished tasks and
// their files; `qtask prune` removes the rest on demand; a running task and
// its files are never touched.
func TestRetention(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.writeConfig("shell = \"sh\"\nkeep_finished = 2\n")
	long := h.start("sleep 300")
	var done []tasks.Task
	finish := func() tasks.Task {
		task := h.start("echo hello")
		if got := h.wait(task.ID); got.Status != tasks.StatusCompleted {
			t.Fatalf("task %s: %s, want completed", task.ID, got.StatusText())
		}
		done = append(done, task)
		return task
	}
	for range 4 {
		finish()
	}
	// The fourth run found three finished tasks: the oldest went, with its output.
	gone, kept := done[0], done[1:]
	assertPruned(t, h, gone)
	for _, task := range append(kept, long) {
		assertKept(t, h, task)
	}

	// The shell hooks' files for a pruned task's pane go with it: its claim
	// on the pane, and the pane's file when the shell that wrote it is dead.
	panes := filepath.Join(h.state, "panes")
	if err := os.MkdirAll(panes, 0o700); err != nil {
		t.Fatal(err)
	}
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	pane := strings.TrimPrefix(kept[0].PaneID, "%")
	plant := map[string]string{
		pane + ".promoted": kept[0].ID + "\n",
		pane:               strconv.Itoa(dead.Process.Pid) + " c\necho hello\n",
		"99999.promoted":   "ffffffff\n", // another pane's: stays
	}
	for name, text := range plant {
		if err := os.WriteFile(filepath.Join(panes, name), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}

	// Three finished, keep 2: a dry run names the oldest and removes nothing.
	if out := h.mustQtask("prune", "--dry-run"); out != "Would remove task "+kept[0].ID+": echo hello\n" {
		t.Errorf("prune --dry-run printed %q, want only the oldest finished task", out)
	}
	assertKept(t, h, kept[0])
	var pruned []tasks.Task
	if err := json.Unmarshal([]byte(h.mustQtask("prune", "--json")), &pruned); err != nil {
		t.Fatal(err)
	}
	if len(pruned) != 1 || pruned[0].ID != kept[0].ID {
		t.Fatalf("prune --json = %+v, want exactly task %s", pruned, kept[0].ID)
	}
	assertPruned(t, h, kept[0])
	entries, _ := os.ReadDir(panes)
	var left []string
	for _, e := range entries {
		left = append(left, e.Name())
	}
	if !slices.Equal(left, []string{"99999.promoted"}) {
		t.Errorf("pane files left after pruning: %q, want only another task's claim", left)
	}

	if out := h.mustQtask("prune", "--older-than", "1d"); out != "Nothing to prune.\n" {
		t.Errorf("prune --older-than 1d printed %q, want nothing pruned", out)
	}
	if out := h.mustQtask("prune", "--all-finished"); strings.Count(out, "Removed task ") != 2 {
		t.Errorf("prune --all-finished printed %q, want the two finished tasks removed", out)
	}
	for _, task := range kept[1:] {
		assertPruned(t, h, task)
	}
	assertKept(t, h, long)
	if got := h.status(long.ID); !got.Running() {
		t.Errorf("the long task is %s after prune, want running", got.StatusText())
	}
	if r := h.qtask("prune", "--older-than", "soon"); r.code != exitUsage || !strings.Contains(r.stderr, `invalid value "soon" for --older-than: want a duration such as`) {
		t.Errorf("prune --older-than soon: exit %d, stderr %q; want a usage error naming the value", r.code, r.stderr)
	}
}

// assertPruned checks that nothing of task is left: no record, no output.
func assertPruned(t *testing.T, h *harness, task tasks.Task) {
	t.Helper()
	if r := h.qtask("status", task.ID); r.code != exitError || !strings.Contains(r.stderr, "no task") {
		t.Errorf("status of pruned task %s: exit %d, stderr %q; want no such task", task.ID, r.code, r.stderr)
	}
	if _, err := os.Stat(task.OutputPath); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("output file of pruned task %s is still there (%v)", task.ID, err)
	}
}

// assertKept checks that task and its output file are still there.
func assertKept(t *testing.T, h *harness, task tasks.Task) {
	t.Helper()
	if r := h.qtask("status", task.ID); r.code != 0 {
		t.Errorf("task %s was pruned, want it kept: %s", task.ID, r.stderr)
	}
	if _, err := os.Stat(task.OutputPath); err != nil {
		t.Errorf("output file of kept task %s: %v", task.ID, err)
	}
}
