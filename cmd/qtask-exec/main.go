// Command qtask-exec is what lives as long as a task, on its own: the
// wrapper tmux runs as the first process of a task's pane, exactly as
// `qtask _exec` does, and an adopted pane's capture, as `qtask _capture`
// does, and the helper that hands a pane's pipe over (`_handover`), but linking only what they need (no CLI, no MCP server, no UI), so
// that each running task costs less memory (docs/BENCHMARKS.md, memory).
// qtask uses it when it is installed beside qtask.
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/qtask/qtask/cmd/internal/wrapper"
	"github.com/qtask/qtask/config"
	"github.com/qtask/qtask/tasks"
	"github.com/qtask/qtask/tasks/capture"
)

func main() {
	args := os.Args[1:]
	if len(args) == 2 && args[0] == capture.HandoverVerb {
		if err := capture.Handover(args[1], os.Stdin); err != nil {
			fmt.Fprintf(os.Stderr, "qtask: %v\n", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	if len(args) != 4 || args[0] != tasks.ExecVerb && args[0] != tasks.CaptureVerb || args[1] != "--"+tasks.StateDirFlag {
		fmt.Fprintln(os.Stderr, "usage: qtask-exec _exec|_capture --state-dir DIR ID, or _handover NAME (qtask runs it; it is not for use by hand)")
		os.Exit(2)
	}
	os.Exit(run(args[0], args[2], args[3]))
}

func run(verb, stateDir, id string) int {
	code, err := dispatch(verb, stateDir, id)
	if err != nil {
		fmt.Fprintf(os.Stderr, "qtask: %v\n", err)
		return 1
	}
	return code
}

// dispatch runs verb for task id and returns its exit status.
func dispatch(verb, stateDir, id string) (int, error) {
	env, err := config.EnvFrom(os.Getenv)
	if err != nil {
		return 0, err
	}
	store, err := tasks.OpenStore(stateDir)
	if err != nil {
		return 0, err
	}
	if verb == tasks.CaptureVerb {
		return 0, store.Capture(id, os.Stdin)
	}
	return wrapper.Run(context.Background(), store, id, env, os.Stdin, os.Stdout)
}
