// Command qtask-mcp is `qtask mcp`, the MCP server, as a program of its
// own: the MCP SDK (with net/http, TLS, OAuth and JSON Schema) took about
// 0.6 ms of CPU from the start of every qtask command that linked it
// (docs/BENCHMARKS.md, run-bg). `qtask mcp` checks its flags, the config
// and the state dir, then execs this program beside it with the path of
// qtask itself, whose directory holds the wrapper. It is not for use by
// hand.
package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/spf13/pflag"

	"github.com/qtask/qtask/agent/mcpaddr"
	"github.com/qtask/qtask/agent/mcpserver"
	"github.com/qtask/qtask/cmd/internal/launch"
	"github.com/qtask/qtask/config"
)

// version is set at release time, as qtask's is.
var version = "dev"

func main() {
	flags := pflag.NewFlagSet("qtask-mcp", pflag.ContinueOnError)
	flags.Usage = func() {}
	self := flags.String("qtask", "", "the qtask binary")
	addr := flags.String("http", "", "serve streamable HTTP on HOST:PORT")
	anyHost := flags.Bool("listen-any", false, "allow an address that is not loopback")
	noAuth := flags.Bool("no-auth", false, "serve --http without a token")
	unixSocket := flags.Bool("unix", false, "serve streamable HTTP on a unix socket in the state directory")
	if err := flags.Parse(os.Args[1:]); err != nil || *self == "" || flags.NArg() != 0 || *unixSocket && *addr != "" {
		fmt.Fprintln(os.Stderr, "usage: qtask-mcp --qtask PATH [--http HOST:PORT [--listen-any] [--no-auth] | --unix] (run `qtask mcp` instead)")
		os.Exit(2)
	}
	if *addr != "" {
		err := mcpaddr.Check(*addr, *anyHost)
		if err == nil && *noAuth {
			err = mcpaddr.CheckNoAuth(*addr, *anyHost)
		}
		if err != nil {
			say("%s", err)
			os.Exit(2)
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := serve(ctx, *self, listen{addr: *addr, unix: *unixSocket, noAuth: *noAuth})
	stop()
	if err != nil && !errors.Is(err, context.Canceled) { // a signal is a clean stop
		say("%s", err)
		os.Exit(1)
	}
}

// say prints one line on stderr, escaped: errors and warnings quote
// values read from disk.
func say(format string, a ...any) {
	msg := strconv.QuoteToGraphic(fmt.Sprintf(format, a...))
	fmt.Fprintf(os.Stderr, "qtask: %s\n", msg[1:len(msg)-1])
}

// listen is where the server serves: stdio when neither addr nor unix is
// set.
type listen struct {
	addr   string // --http HOST:PORT
	unix   bool   // --unix: the socket in the state directory
	noAuth bool   // --no-auth: --http without a token
}

func serve(ctx context.Context, self string, at listen) error {
	env, err := config.EnvFrom(os.Getenv)
	if err != nil {
		return err
	}
	wd, err := os.Getwd()
	if err != nil {
		return fmt.Errorf("current directory: %w", err)
	}
	cfg, _, err := config.Load(env.ConfigPath)
	if err != nil {
		return err
	}
	store, err := launch.OpenStore(env)
	if err != nil {
		return err
	}
	store = store.WithWarnings(func(msg string) { say("warning: %s", msg) })
	start := launch.StartOptions(cfg, env, os.Environ(), self, store)
	start.WindowInSession = cfg.AgentWindows == config.AgentWindowsQtask
	// A server no agent names a session for has a scope of its own, never
	// the person's place: a person's tasks are not told to an agent.
	own := fmt.Sprintf("mcp:%d@%s", os.Getpid(), time.Now().UTC().Format("20060102T150405"))
	server := mcpserver.New(mcpserver.Options{
		Store: store,
		Start: start,
		Scope: func() string {
			if scope := launch.AgentScope(env, store); scope != "" {
				return scope
			}
			return own
		},
		Dir:               wd,
		ForegroundTimeout: cfg.ForegroundTimeout,
		NoLongRunNote:     cfg.LongRunNote == config.LongRunNoteOff,
		Started: func() {
			for _, w := range launch.AutoPrune(ctx, store, cfg.KeepFinished, env.StateDir) {
				say("warning: %s", w)
			}
		},
		Version: version,
	})
	switch {
	case at.unix:
		path := filepath.Join(env.StateDir, mcpserver.SocketName)
		ln, err := mcpserver.ListenUnix(path)
		if err != nil {
			return fmt.Errorf("--unix: %w", err)
		}
		return mcpserver.ServeHTTP(ctx, server, ln, "", func(url string) {
			fmt.Fprintf(os.Stderr, "qtask mcp: serving %s on the unix socket %s (mode 0600: only you can connect)\n", url, path)
		})
	case at.addr != "":
		token, tokenFile, fresh := "", "", false
		if !at.noAuth {
			var err error
			if token, tokenFile, fresh, err = mcpserver.Token(store.Dir()); err != nil {
				return err
			}
		}
		ln, err := net.Listen("tcp", at.addr)
		if err != nil {
			return fmt.Errorf("--http: %w", err)
		}
		return mcpserver.ServeHTTP(ctx, server, ln, token, func(url string) {
			fmt.Fprintf(os.Stderr, "qtask mcp: serving %s\n", url)
			if token == "" {
				say("warning: --no-auth: every user and program on this machine can run commands as you through %s", url)
				return
			}
			// Once, to the person who started it: the token is the
			// whole of the protection.
			kept := "kept in " + tokenFile
			if fresh {
				kept = "a new token, " + kept
			}
			fmt.Fprintf(os.Stderr, "qtask mcp: clients must send the header \"Authorization: Bearer %s\" (%s), e.g.\n"+
				"  claude mcp add --transport http qtask %s --header \"Authorization: Bearer %[1]s\"\n", token, kept, url)
		})
	}
	return server.Run(ctx, mcpserver.StdioTransport(os.Stdin, os.Stdout))
}
