package main

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/qtask/qtask/agent/mcpserver"
	"github.com/qtask/qtask/config"
)

// MCPOptions are the parsed flags of `qtask mcp` (none yet).
type MCPOptions struct{}

// NewCmdMCP builds `qtask mcp`, the MCP server an agent starts over stdio.
func NewCmdMCP(deps *Deps, runF func(context.Context, *MCPOptions) error) *cobra.Command {
	opts := &MCPOptions{}
	return &cobra.Command{
		Use:   "mcp",
		Short: "Serve qtask's tools to an MCP client (a coding agent) on stdin/stdout",
		Long: `Serve the Model Context Protocol on stdin and stdout, for an MCP client
such as a coding agent, which starts it. Its tools run shell commands as
tasks (shell), list, read, wait for and stop them (task_list, task_status,
task_output, task_wait, task_stop). Every result also carries the
notifications of the scope's tasks that ended since the last reader, once.
The scope is $QTASK_SCOPE, else $TMUX_PANE, else "default"; tasks outlive
the server.`,
		Args: exactArgs(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return runMCP(cmd.Context(), deps, opts)
		},
	}
}

func runMCP(ctx context.Context, deps *Deps, _ *MCPOptions) error {
	wd, err := os.Getwd()
	if err != nil {
		return fmt.Errorf("current directory: %w", err)
	}
	cfg, store, err := deps.ConfigAndStore(ctx)
	if err != nil {
		return err
	}
	start := deps.startOptions(cfg)
	start.WindowInSession = cfg.AgentWindows == config.AgentWindowsQtask
	server := mcpserver.New(mcpserver.Options{
		Store:             store,
		Start:             start,
		Dir:               wd,
		ForegroundTimeout: cfg.ForegroundTimeout,
		Started:           func() { autoPrune(deps, store, cfg.KeepFinished) },
		Version:           version,
	})
	err = server.Run(ctx, mcpserver.StdioTransport(deps.IO.In, deps.IO.Out))
	if errors.Is(err, context.Canceled) {
		return nil // SIGINT or SIGTERM: a clean stop
	}
	return err
}
