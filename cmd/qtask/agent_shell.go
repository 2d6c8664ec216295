package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/qtask/qtask/agent"
	"github.com/qtask/qtask/agent/route"
	"github.com/qtask/qtask/config"
	"github.com/qtask/qtask/tasks"
)

// ShellOptions are the arguments of `qtask agent shell claude SCRIPT`.
type ShellOptions struct {
	Script string
}

// NewCmdAgentShell builds `qtask agent shell claude SCRIPT`, what Claude
// Code runs as its shell prefix (through the qtask-claude-shell link that
// `qtask agent install claude` makes): a Bash tool call becomes a
// foreground qtask task showing the model's own command; anything else
// Claude runs through the prefix (hooks, MCP servers) runs as if there
// were no prefix.
func NewCmdAgentShell(deps *Deps, runF func(context.Context, *ShellOptions) error) *cobra.Command {
	opts := &ShellOptions{}
	cmd := &cobra.Command{
		Use:   "shell claude SCRIPT",
		Short: "Run a coding agent's shell command as a qtask task (Claude Code's shell prefix)",
		Long: `Run SCRIPT, the script Claude Code hands its shell prefix
(CLAUDE_CODE_SHELL_PREFIX), as a foreground task in agent mode: its window
and 'qtask ls' show the command the model wrote, its output and exit code
come back as Claude would have seen them, and a command still running a
little before Claude's own tool timeout is moved to the background (exit
125), to be announced by a notification when it ends. A script that is not
a Bash tool call (a hook, an MCP server) is run directly by sh.`,
		Args: exactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if args[0] != "claude" {
				return usageErrorf("qtask agent shell: only claude runs commands through a shell prefix, not %q", args[0])
			}
			opts.Script = args[1]
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return runAgentShell(cmd.Context(), deps, opts)
		},
	}
	return cmd
}

func runAgentShell(ctx context.Context, deps *Deps, opts *ShellOptions) error {
	claude := os.Getppid() // taken first: Claude runs its prefix itself
	command, ok := route.ClaudeCommand(opts.Script)
	if !ok {
		return execShell("sh", opts.Script, deps.Environ)
	}
	run := &RunOptions{
		Command: command, Script: opts.Script, Shell: route.ClaudeShell(opts.Script), Agent: true,
		OnTimeout: config.OnTimeoutBackground, ToolTimeout: route.ClaudeToolTimeout(deps.Env.ClaudeBashTimeout),
	}
	// The mark is taken first, whatever comes next: it says whether the
	// rules of a foreground call apply, and must not stay behind.
	call, _ := route.TakeCall(filepath.Join(deps.Env.StateDir, "agent"), deps.Env.ClaudeSessionID, command)
	if call.Timeout > 0 {
		// The model's timeout for this call is Claude's tool timeout.
		run.ToolTimeout = min(call.Timeout, route.ClaudeMaxTimeout(deps.Env.ClaudeBashMaxTimeout, run.ToolTimeout))
	}
	if call.Background {
		// Claude's own background run: Claude waits it out and tells the
		// model when it ends, so qtask neither times it out nor tells.
		never := time.Duration(0)
		run.Timeout, run.ToolTimeout, run.AgentBackground = &never, 0, true
	} else if err := agent.CheckSleep(command, deps.agentName()); err != nil {
		// A leading sleep holds only a foreground call's caller.
		return err
	}
	var ends chan os.Signal
	if run.AgentBackground {
		// From its start on, a signal is this call's to judge (see
		// attendBackgroundCall), not an interrupt to pass on.
		ends = make(chan os.Signal, 1)
		signal.Notify(ends, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
		ctx = context.WithoutCancel(ctx)
	}
	cfg, store, t, err := startRun(ctx, deps, run)
	if err != nil {
		// A qtask that cannot start tasks must not take the agent's shell
		// down with it: say why, once, and run the command as Claude would.
		fmt.Fprintf(deps.IO.ErrOut, "qtask: not run as a task (%s); running it directly\n", displayCommand(err.Error(), maxErrorWidth))
		return execShell(run.Shell, opts.Script, deps.Environ)
	}
	if run.AgentBackground {
		return attendBackgroundCall(ctx, deps, store, t, cfg, run, claude, ends)
	}
	return runForeground(ctx, deps, store, t, cfg, run)
}

// attendBackgroundCall waits on the task of a Claude background call as
// runForeground does, but the task outlives Claude: Claude sends the same
// SIGTERM to the call's process group when the model stops it (TaskStop)
// and when Claude itself ends (SIGTERM, SIGHUP, a closed terminal, /exit),
// and kills the group with SIGKILL moments later. A signal with the
// model's stop mark for this call (route.TakeStop) stops the task, as an
// interrupt of a foreground run does; any other lets it go (tasks.Release):
// it runs on, and its end is queued for the session, to be told on resume.
// A Claude killed outright (SIGKILL) sends nothing and leaves the prefix
// running: once it has exited, the end is queued as well
// (tasks.OutliveCaller), while the prefix still waits, in case Claude
// handed the call to another process ("Move to background and exit").
func attendBackgroundCall(ctx context.Context, deps *Deps, store *tasks.Store, t *tasks.Task, cfg config.Config, run *RunOptions, claudePID int, ends <-chan os.Signal) error {
	attend, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	claude, unwatch := agent.UntilAgentExits(ctx, claudePID)
	defer unwatch()
	claudeTask, _ := route.ClaudeTaskID(outputFileOf(deps.IO.Out))
	marks := filepath.Join(deps.Env.StateDir, "agent")
	go func() {
		for {
			select {
			case sig := <-ends:
				if claudeTask != "" && route.TakeStop(marks, deps.Env.ClaudeSessionID, claudeTask) {
					stop(&tasks.Interrupted{Signal: sig.(syscall.Signal)})
					return
				}
				if _, err := store.Release(ctx, t.ID, cfg.Session); err != nil {
					fmt.Fprintf(deps.IO.ErrOut, "qtask: task %s: %s\n", displayValue(t.ID), displayCommand(err.Error(), maxErrorWidth))
				}
				return
			case <-claude.Done():
				if errors.Is(context.Cause(claude), agent.ErrAgentGone) {
					store.OutliveCaller(ctx, t.ID)
				}
				claude = context.Background() // seen: wait for the rest
			case <-attend.Done():
				return
			}
		}
	}()
	return runForeground(attend, deps, store, t, cfg, run)
}

// outputFileOf is the file out writes to, "" when it is not a file:
// Claude gives its shell prefix an output file as stdout (see
// route.ClaudeTaskID).
func outputFileOf(out io.Writer) string {
	f, ok := out.(*os.File)
	if !ok {
		return ""
	}
	path, _ := os.Readlink("/proc/self/fd/" + strconv.Itoa(int(f.Fd())))
	return path
}

// execShell replaces qtask with `shell -c script`, so that stdin, stdout,
// the exit status and signals are the shell's own, as if no prefix had
// been set.
func execShell(shell, script string, env []string) error {
	path, err := exec.LookPath(shell)
	if err != nil {
		return fmt.Errorf("shell %q not found: %w", shell, err)
	}
	return syscall.Exec(path, []string{shell, "-c", script}, env)
}

// claudeShellArgs turns a call through the qtask-claude-shell link
// (Claude's shell prefix: the link, then the script as one argument) into
// the qtask command line it stands for.
func claudeShellArgs(argv []string) []string {
	if len(argv) == 0 || !route.IsClaudeShellLink(argv[0]) {
		return argv[1:]
	}
	return append([]string{"agent", "shell", "claude", "--"}, argv[1:]...)
}
