package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/qtask/qtask/internal/agenttest"
	"github.com/qtask/qtask/internal/mockmodel"
	"github.com/qtask/qtask/tasks"
)

// TestRealAgentClaudeBackgroundCallMayStartWithASleep: the sleep rule is
// for foreground calls, whose sleep holds the agent; a routed Bash call
// with run_in_background that starts with one runs like any other
// background call. The prefix checked the rule before it read the
// PreToolUse hook's mark, so the call failed at once with exit code 2
// (the refusal telling the model to use its shell tool's background
// option) and the mark stayed behind in the state dir.
func TestRealAgentClaudeBackgroundCallMayStartWithASleep(t *testing.T) {
	t.Parallel()
	agenttest.Require(t, agenttest.Claude)
	h := newHarness(t)
	p := newAgentProject(t, h, "claude", "route-claude-bg-sleep")
	tag := fmt.Sprintf("%08x", rand.Uint32())
	command := "sleep 2; echo slept-$((6*7))-" + tag
	mock, run := p.claude(t, []mockmodel.Turn{
		mockmodel.ShellBackground(command),
		mockmodel.Text("It runs in the background."),
		mockmodel.Text("It ended."),
	}, "Bash(sleep:*)", "Bash(echo:*)")
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	if out, err := agenttest.Output(ctx, agenttest.Command(ctx, t, run)); err != nil {
		t.Fatalf("%v\nrequests:\n%s\nstdout tail:\n%s", err, mock.Summary(), lastBytes(out, 4000))
	}
	turns := mock.MainTurns()
	last := turns[len(turns)-1]
	if last.Count("<status>completed</status>") != 1 || last.Count("exit code 0") != 1 {
		t.Errorf("the model was not told the background call completed (exit 0); it read:\n%q\nrequests:\n%s", last.Texts(), mock.Summary())
	}
	for i, r := range turns {
		if n := r.Count("refused: this command starts by sleeping") + r.Count("exit code 2"); n != 0 {
			t.Errorf("request %d tells the model the background call was refused\n%q", i+1, r.Texts())
		}
	}
	byCommand, list := p.tasks(t)
	if task, ok := byCommand[command]; !ok || task.Status != tasks.StatusCompleted {
		t.Errorf("the background call is not a completed task: %+v", list)
	}
	if marks, _ := filepath.Glob(filepath.Join(h.state, "agent", "bg-*")); len(marks) != 0 {
		t.Errorf("the hook's marks stayed behind: %q", marks)
	}
}

// outputFileRE finds the output file Claude names in its result of a
// background call and in its notification of that call's end.
var outputFileRE = regexp.MustCompile(`/[^\s<>"]*/tasks/[A-Za-z0-9]+\.output`)

// readOutputFile is a model turn that reads, with Claude's Read tool, the
// output file of the background call the request tells of.
func readOutputFile(r mockmodel.Request) mockmodel.Turn {
	var path string
	for _, s := range append(r.ToolResults(), r.Texts()...) {
		if m := outputFileRE.FindString(s); m != "" {
			path = m
		}
	}
	return mockmodel.Tool("Read", map[string]any{"file_path": path})
}

// TestRealAgentClaudeBackgroundCallHasNoLongRunningNote: qtask's note that
// a command ran long and would better run in the background is advice for
// a foreground call; a background call that ran a second or more got it
// in its output too (the rule compared against a timeout of 0), which the
// model read when it read the call's output.
func TestRealAgentClaudeBackgroundCallHasNoLongRunningNote(t *testing.T) {
	t.Parallel()
	agenttest.Require(t, agenttest.Claude)
	h := newHarness(t)
	p := newAgentProject(t, h, "claude", "route-claude-bg-note")
	tag := fmt.Sprintf("%08x", rand.Uint32())
	command := "echo begin-" + tag + "; sleep 1.5; echo end-$((6*7))-" + tag
	mock, run := p.claude(t, []mockmodel.Turn{
		mockmodel.ShellBackground(command),
		mockmodel.Text("It runs in the background."),
		mockmodel.Func(readOutputFile),
		mockmodel.Text("Read it."),
	}, "Bash(echo:*)", "Read")
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	turns := runScripted(t, ctx, mock, run, 4)
	results := turns[3].ToolResults()
	if len(results) != 2 || !strings.Contains(results[1], "end-42-"+tag) {
		t.Fatalf("the model did not read the background call's output: %q\nrequests:\n%s", results, mock.Summary())
	}
	if strings.Contains(results[1], "[qtask]") {
		t.Errorf("the background call's output carries qtask's note:\n%s", results[1])
	}
}
