package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/qtask/qtask/agent"
	"github.com/qtask/qtask/agent/hooks"
	"github.com/qtask/qtask/agent/route"
	"github.com/qtask/qtask/config"
)

// HookOptions are the parsed arguments of `qtask agent hook`.
type HookOptions struct {
	Agent hooks.Agent
	Event string
	Scope string
	Hold  time.Duration
	// Rewake makes the hook Claude's asyncRewake waiter (see
	// hooks.Agent.Rewake): it waits up to this long.
	Rewake time.Duration
	// Wake "tmux": note whether the agent is idle, and its pane, for the
	// settle that wakes it (tasks.AgentPresence).
	Wake string
}

// NewCmdAgentHook builds `qtask agent hook`, the command an agent's hook
// settings run. A hook must never wedge its agent: for Claude an exit code
// of 2 blocks, so even a bad flag exits 1 here, and a problem at run time
// (unreadable input, stdin left open, an unusable state directory) is a
// warning on stderr with exit 0. SIGINT and SIGTERM end it at once, before
// anything is consumed if it has not answered yet (exit 128+signal).
func NewCmdAgentHook(deps *Deps, runF func(context.Context, *HookOptions) error) *cobra.Command {
	opts := &HookOptions{}
	cmd := &cobra.Command{
		Use:   "hook claude|qwen|gemini",
		Short: "Answer a coding agent's hook: tell it which tasks ended",
		Long: `Read the hook event the agent sends on stdin and answer in its protocol.
Prompt and tool events (Claude and qwen: UserPromptSubmit, PostToolUse,
SessionStart; gemini: BeforeAgent, AfterTool, SessionStart) add the scope's
pending notifications to what the model reads next. The end of a turn
(Claude and qwen: Stop; gemini: AfterAgent) is blocked while notifications
are pending, so the agent reads them and goes on; never when none are, and
never past the agent's own limit on consecutive blocks. Notifications are
consumed: a hook that fires again does not repeat them. Before a call of
qwen's or gemini's shell tool (qwen: PreToolUse, gemini: BeforeTool), a
call that sets the tool's own is_background is denied, with the
'qtask run --agent --bg' line that runs the command as a task instead.
Other events get no answer. The event must arrive on stdin within ` + hooks.InputDeadline.String() + ` (run by hand
with --event, give it </dev/null); otherwise the hook warns and delivers
nothing.`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return fmt.Errorf("%s: want one agent: claude, qwen or gemini", cmd.CommandPath())
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			a, err := hooks.Lookup(args[0])
			if err != nil {
				return err
			}
			if opts.Hold < 0 || opts.Rewake < 0 {
				return fmt.Errorf("--hold and --rewake must not be negative")
			}
			if err := checkWake(opts.Wake); err != nil {
				return err
			}
			opts.Agent = a
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return runAgentHook(cmd.Context(), deps, opts)
		},
	}
	// Exit 1, not qtask's usage code 2: Claude reads 2 as "block".
	cmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return err })
	cmd.Flags().StringVar(&opts.Event, "event", "", "the event, when the input does not name it (hook_event_name)")
	cmd.Flags().StringVar(&opts.Scope, "scope", "", scopeFlagUsage)
	durationVar(cmd.Flags(), &opts.Hold, "hold", 0, "at the end of a turn, wait up to this long for the scope's running tasks first (for headless runs)")
	cmd.Flags().StringVar(&opts.Wake, "wake", "", `"tmux": note whether the agent is idle and its tmux pane, so that a task's end types one line there`)
	durationVar(cmd.Flags(), &opts.Rewake, "rewake", 0, "Claude's asyncRewake hook: wait up to this long for the next notification, then exit 2 with it on stderr (0 when none came)")
	return cmd
}

func runAgentHook(ctx context.Context, deps *Deps, opts *HookOptions) error {
	if out, ok := deps.IO.Out.(*os.File); ok {
		// A hook that waits (a hold, Claude's rewake waiter) outlives an
		// agent killed outright: it must not take notifications that
		// nobody will read.
		var stop context.CancelFunc
		ctx, stop = agent.UntilUnread(ctx, out)
		defer stop()
	}
	in, err := hooks.ReadInput(ctx, deps.IO.In, hooks.InputDeadline)
	if ctx.Err() != nil {
		return ctx.Err() // interrupted: Main exits as a signal death would
	}
	if err != nil {
		return hookWarning(deps, err)
	}
	event := opts.Event
	if event == "" {
		event = in.Event
	}
	if opts.Rewake == 0 && opts.Agent.Classify(event) == hooks.Ignored {
		return nil // not even the state dir is opened
	}
	if opts.Rewake > 0 && !hooks.ClaudeOutlivesTurn(deps.Env.ClaudeEntrypoint, deps.Env.ClaudePID) {
		return nil // a plain headless run: no one to wake, and Claude would wait for the waiter
	}
	store, err := deps.Store()
	if err != nil {
		return hookWarning(deps, err)
	}
	// The agent's scopes only, never the person's place: a task a person
	// started in this pane, or outside tmux, is not the agent's.
	scopes := deps.Env.AgentScopes()
	if opts.Scope != "" {
		scopes = []string{opts.Scope}
	}
	hopts := hooks.Options{
		Event: event, Scopes: scopes, OnlyScopes: opts.Scope != "", Hold: opts.Hold, StateDir: store.Dir(),
		Routed: route.IsClaudeShellLink(deps.Env.ClaudeShellPrefix), AgentSession: deps.Env.AgentSession, Qtask: deps.agentName(),
	}
	if caller := deps.Caller(); opts.Wake == config.WakeTmux && caller.Inside() {
		hopts.Pane, hopts.Server = string(caller.Pane), caller.Server.String()
	}
	if opts.Rewake > 0 {
		hopts.Hold = opts.Rewake
		reply, err := opts.Agent.Rewake(ctx, store, in, hopts)
		if err != nil || len(reply.Data) == 0 {
			return hookWarning(deps, err)
		}
		if err := reply.Write(deps.IO.ErrOut); err != nil {
			return err
		}
		return &ExitError{Code: exitRewake}
	}
	reply, err := opts.Agent.Handle(ctx, store, in, hopts)
	if err != nil && ctx.Err() != nil {
		return err // interrupted before anything was consumed
	}
	if err != nil {
		return hookWarning(deps, err)
	}
	// A failed write is an error (exit 1), not a warning: the agent got
	// nothing, and the notifications wait in the queue for the next hook.
	return reply.Write(deps.IO.Out)
}

// checkWake checks a --wake value.
func checkWake(v string) error {
	if v != "" && v != config.WakeTmux {
		return fmt.Errorf("--wake %q: the one way to wake an agent is \"tmux\"", v)
	}
	return nil
}

// exitRewake is the exit code with which an asyncRewake hook wakes Claude
// Code's model (with its stderr).
const exitRewake = 2

// hookWarning reports a problem the hook cannot act on without failing
// the agent's hook: one line on stderr, exit 0 (nil err: nothing to say).
func hookWarning(deps *Deps, err error) error {
	if err == nil {
		return nil
	}
	fmt.Fprintf(deps.IO.ErrOut, "qtask: agent hook: %s; nothing delivered\n", displayValue(err.Error()))
	return nil
}
