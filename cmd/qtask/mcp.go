package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/qtask/qtask/agent/mcpaddr"
)

// MCPOptions are the parsed flags of `qtask mcp`.
type MCPOptions struct {
	// HTTP, when set, is the address to serve streamable HTTP on instead
	// of stdio; loopback only unless ListenAny. Clients must send the
	// token in the state directory unless NoAuth.
	HTTP      string
	ListenAny bool
	NoAuth    bool
	// Unix serves streamable HTTP on a 0600 unix socket in the state
	// directory instead, without a token: its permission bits decide.
	Unix bool
}

// NewCmdMCP builds `qtask mcp`, the MCP server an agent starts over stdio.
func NewCmdMCP(deps *Deps, runF func(context.Context, *MCPOptions) error) *cobra.Command {
	opts := &MCPOptions{}
	cmd := &cobra.Command{
		Use:   "mcp",
		Short: "Serve qtask's tools to an MCP client (a coding agent) on stdin/stdout",
		Long: `Serve the Model Context Protocol on stdin and stdout, for an MCP client
such as a coding agent, which starts it. Its tools run shell commands as
tasks (shell), list, read, wait for and stop them (task_list, task_status,
task_output, task_wait, task_stop), and turn output lines into
notifications (monitor). Every result also carries the notifications of
the scope's tasks that ended since the last reader, and of monitor events,
once.
The scope is $QTASK_SCOPE, else the session of the coding agent that
started the server, else one of its own (mcp:PID@TIME): never a person's
pane or "default", whose tasks are not told to an agent. Tasks outlive
the server.

With --http HOST:PORT it serves MCP's streamable HTTP at /mcp instead, for
clients that want HTTP: on a loopback address only unless --listen-any,
with DNS-rebinding protection on. Every request must carry the header
"Authorization: Bearer TOKEN" or gets 401: any local user can reach a
loopback port, and the tools run commands as you. The token is made on
first use, kept in the state directory's mcp-token file (0600) and printed
on stderr at every start; remove the file for a new one. --no-auth drops
the token, only with a loopback IP address (127.0.0.1:PORT, [::1]:PORT).

With --unix it serves the same at /mcp on the unix socket mcp.sock in the
state directory, mode 0600: only you can connect, and no token is needed.`,
		Args: exactArgs(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			// Changed, not a non-empty value: an empty --http (an unset
			// variable) is a bad address, not a request for stdio.
			http := cmd.Flags().Changed("http")
			switch {
			case opts.Unix && http:
				return usageErrorf("--unix and --http are two places to serve: choose one")
			case opts.ListenAny && !http:
				return usageErrorf("--listen-any applies to --http; drop it or add --http HOST:PORT")
			case opts.NoAuth && !http:
				return usageErrorf("--no-auth applies to --http; drop it or add --http 127.0.0.1:PORT")
			}
			if http {
				err := mcpaddr.Check(opts.HTTP, opts.ListenAny)
				if err == nil && opts.NoAuth {
					err = mcpaddr.CheckNoAuth(opts.HTTP, opts.ListenAny)
				}
				if err != nil {
					return &UsageError{Err: err}
				}
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return runMCP(cmd.Context(), deps, opts)
		},
	}
	cmd.Flags().StringVar(&opts.HTTP, "http", "", "serve streamable HTTP on HOST:PORT (loopback) instead of stdio")
	cmd.Flags().BoolVar(&opts.ListenAny, "listen-any", false, "with --http: allow an address that is not loopback")
	cmd.Flags().BoolVar(&opts.NoAuth, "no-auth", false, "with --http on a loopback IP: serve without a token (any local user can run commands as you)")
	cmd.Flags().BoolVar(&opts.Unix, "unix", false, "serve streamable HTTP on a 0600 unix socket in the state directory instead of stdio")
	return cmd
}

// runMCP checks what qtask can word best (the config, the state dir), then
// becomes qtask-mcp, the server linked on its own (see cmd/qtask-mcp): the
// agent's stdio and signals reach it directly.
func runMCP(ctx context.Context, deps *Deps, opts *MCPOptions) error {
	if _, _, err := deps.ConfigAndStore(); err != nil {
		return err
	}
	server := filepath.Join(filepath.Dir(deps.Self), "qtask-mcp")
	if fi, err := os.Stat(server); err != nil || !fi.Mode().IsRegular() {
		return fmt.Errorf("qtask mcp needs qtask-mcp beside qtask in %s: build both with CGO_ENABLED=0 go build -o %[1]s/ ./cmd/...", filepath.Dir(deps.Self))
	}
	argv := []string{"qtask-mcp", "--qtask", deps.Self}
	if opts.HTTP != "" {
		argv = append(argv, "--http", opts.HTTP)
	}
	if opts.ListenAny {
		argv = append(argv, "--listen-any")
	}
	if opts.NoAuth {
		argv = append(argv, "--no-auth")
	}
	if opts.Unix {
		argv = append(argv, "--unix")
	}
	return fmt.Errorf("start %s: %w", server, syscall.Exec(server, argv, deps.Environ))
}
