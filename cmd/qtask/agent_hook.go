package main

import (
	"context"
	"fmt"
	"io"
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

// maxHookInput bounds what a hook reads from the agent: the JSON of one
// event, which holds at most the user's prompt (a transcript is passed by
// path, not inline). Past it the input cannot be parsed, the hook delivers
// nothing, and the notifications wait for the next event.
const maxHookInput = 32 << 20

// NewCmdAgentHook builds `qtask agent hook`, the command an agent's hook
// settings run. A hook must never wedge its agent: for Claude an exit code
// of 2 blocks, so even a bad flag exits 1 here, and a problem at run time
// (unreadable input, an unusable state directory) is a warning on stderr
// with exit 0.
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
consumed: a hook that fires again does not repeat them. Other events get
no answer.`,
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
	data, err := io.ReadAll(io.LimitReader(deps.IO.In, maxHookInput))
	if err != nil {
		return hookWarning(deps, err)
	}
	in, err := hooks.ParseInput(data)
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
	store, err := deps.Store(ctx)
	if err != nil {
		return hookWarning(deps, err)
	}
	scopes := deps.Env.Scopes
	if opts.Scope != "" {
		scopes = []string{opts.Scope}
	}
	hopts := hooks.Options{
		Event: event, Scopes: scopes, OnlyScopes: opts.Scope != "", Hold: opts.Hold, StateDir: store.Dir(),
		Routed: route.IsClaudeShellLink(deps.Env.ClaudeShellPrefix),
	}
	if caller := deps.Caller(); opts.Wake == config.WakeTmux && caller.Inside() {
		hopts.Pane, hopts.Server = string(caller.Pane), caller.Server.String()
	}
	if opts.Rewake > 0 {
		hopts.Hold = opts.Rewake
		text, err := opts.Agent.Rewake(ctx, store, in, hopts)
		if err != nil || text == "" {
			return hookWarning(deps, err)
		}
		fmt.Fprintln(deps.IO.ErrOut, text)
		return &ExitError{Code: exitRewake}
	}
	out, err := opts.Agent.Handle(ctx, store, in, hopts)
	if err != nil {
		return hookWarning(deps, err)
	}
	_, err = deps.IO.Out.Write(out)
	return err
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
