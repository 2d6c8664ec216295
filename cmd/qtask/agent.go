package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/qtask/qtask/agent"
	"github.com/qtask/qtask/cmd/internal/launch"
	"github.com/qtask/qtask/tasks"
)

// NewCmdAgent builds `qtask agent`, the commands coding agents (and their
// hooks) use to hear about tasks.
func NewCmdAgent(deps *Deps) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "agent",
		Short: "Task notifications for coding agents: inbox, hooks, install",
	}
	cmd.AddCommand(
		NewCmdAgentInbox(deps, nil),
		NewCmdAgentHook(deps, nil),
		NewCmdAgentInstall(deps, nil, false),
		NewCmdAgentInstall(deps, nil, true),
		NewCmdAgentShell(deps, nil),
	)
	asGroup(cmd)
	return cmd
}

// scopeFlagUsage describes the --scope flag of the commands that read
// notifications.
const scopeFlagUsage = "whose notifications (default: the caller's scope, see docs/AGENTS.md, \"Scope\")"

// InboxOptions are the parsed flags of `qtask agent inbox`.
type InboxOptions struct {
	// Scope is the scope read: when empty, the caller's (launch.Scope).
	Scope string
	Wait  time.Duration
	Peek  bool
	JSON  bool
}

// NewCmdAgentInbox builds `qtask agent inbox`.
func NewCmdAgentInbox(deps *Deps, runF func(context.Context, *InboxOptions) error) *cobra.Command {
	opts := &InboxOptions{}
	cmd := &cobra.Command{
		Use:   "inbox",
		Short: "Print (and consume) the notifications of ended tasks",
		Long: `Print a <task-notification> for every task of the scope that ended since
the last read, in the order they ended, and consume them: no other reader
(another inbox, an agent's hook) will see them again. With --wait, block
until one arrives or the duration passes (then exit 124). With --peek,
leave them queued.`,
		Args: exactArgs(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if opts.Wait < 0 {
				return usageErrorf("--wait must not be negative")
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return runAgentInbox(cmd.Context(), deps, opts)
		},
	}
	cmd.Flags().StringVar(&opts.Scope, "scope", "", scopeFlagUsage)
	durationVar(cmd.Flags(), &opts.Wait, "wait", 0, "when none is pending, wait this long for one (exit 124 if none comes)")
	cmd.Flags().BoolVar(&opts.Peek, "peek", false, "print without consuming")
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print a JSON array: each task with its output tail and envelope")
	return cmd
}

// inboxEntry is one notification in `inbox --json`.
type inboxEntry struct {
	tasks.Task
	// Event is a monitor's event: its count and line.
	Event               *tasks.Event `json:"event,omitempty"`
	OutputTail          string       `json:"output_tail"`
	OutputTailTruncated bool         `json:"output_tail_truncated"`
	Envelope            string       `json:"envelope"`
}

func runAgentInbox(ctx context.Context, deps *Deps, opts *InboxOptions) error {
	store, err := deps.Store()
	if err != nil {
		return err
	}
	scope := opts.Scope
	if scope == "" {
		scope, _ = launch.Scope(deps.Env, store)
	}
	scopes := []string{scope}
	nopts := tasks.NotifyOptions{Peek: opts.Peek, TailBytes: agent.TailBytes}
	var d *tasks.Delivery
	if opts.Wait > 0 {
		wctx, cancel := context.WithTimeout(ctx, opts.Wait)
		defer cancel()
		d, err = store.WaitNotifications(wctx, scopes, nopts)
		if errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
			if opts.JSON {
				fmt.Fprintln(deps.IO.Out, "[]")
			}
			return &ExitError{Code: exitTimeout}
		}
	} else {
		d, err = store.Notifications(ctx, scopes, nopts)
	}
	if err != nil {
		return err
	}
	// One write of the whole batch: the notifications leave the queue
	// once it has succeeded, and go back to it if it failed.
	var out []byte
	if opts.JSON {
		entries := make([]inboxEntry, len(d.List))
		for i, n := range d.List {
			tail, cut := agent.Tail(n)
			entries[i] = inboxEntry{Task: n.Task, Event: n.Event, OutputTail: tail, OutputTailTruncated: cut, Envelope: agent.Envelope(n)}
		}
		var b bytes.Buffer
		if err := writeJSON(&b, entries); err != nil {
			return errors.Join(err, d.Release())
		}
		out = b.Bytes()
	} else {
		for _, n := range d.List {
			out = append(append(out, agent.Envelope(n)...), '\n')
		}
	}
	return d.Deliver(func() error {
		if _, err := deps.IO.Out.Write(out); err != nil {
			return fmt.Errorf("print notifications: %w; they stay queued for the next reader", err)
		}
		return nil
	})
}
