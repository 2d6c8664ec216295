// Command qtask-exec is qtask's task wrapper on its own: what tmux runs as
// the first process of a task's pane, exactly as `qtask _exec` does, but
// linking only what a wrapper needs (no CLI, no MCP server, no UI), so that
// each running task costs less memory (docs/BENCHMARKS.md, memory).
// `qtask run` uses it when it is installed beside qtask.
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/qtask/qtask/cmd/internal/wrapper"
	"github.com/qtask/qtask/config"
	"github.com/qtask/qtask/tasks"
)

func main() {
	args := os.Args[1:]
	if len(args) != 4 || args[0] != "_exec" || args[1] != "--state-dir" {
		fmt.Fprintln(os.Stderr, "usage: qtask-exec _exec --state-dir DIR ID (qtask runs it; it is not for use by hand)")
		os.Exit(2)
	}
	os.Exit(run(args[2], args[3]))
}

func run(stateDir, id string) int {
	env, err := config.EnvFrom(os.Getenv)
	var store *tasks.Store
	if err == nil {
		store, err = tasks.OpenStore(stateDir)
	}
	code := 1
	if err == nil {
		code, err = wrapper.Run(context.Background(), store, id, env)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "qtask: %v\n", err)
		return 1
	}
	return code
}
