package main

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/qtask/qtask/agent/hooks"
)

// runAgentCmd parses args with cmd (whose runF captured the options).
// Never nil args: cobra reads nil as "take os.Args", the test binary's
// own flags (`-test.run X` given as two words broke the test).
func runAgentCmd(cmd *cobra.Command, args ...string) error {
	cmd.SetArgs(append([]string{}, args...))
	cmd.SilenceErrors, cmd.SilenceUsage = true, true
	return cmd.Execute()
}

func TestAgentFlags(t *testing.T) {
	deps, _, _ := testDeps()
	var inbox InboxOptions
	newInbox := func() *cobra.Command {
		return NewCmdAgentInbox(deps, func(_ context.Context, o *InboxOptions) error { inbox = *o; return nil })
	}
	if err := runAgentCmd(newInbox()); err != nil || !reflect.DeepEqual(inbox, InboxOptions{}) {
		t.Errorf("inbox: %+v, %v; want no scope given", inbox, err)
	}
	if err := runAgentCmd(newInbox(), "--scope", "s", "--wait", "2s", "--peek", "--json"); err != nil ||
		!reflect.DeepEqual(inbox, InboxOptions{Scope: "s", Wait: 2 * time.Second, Peek: true, JSON: true}) {
		t.Errorf("inbox with flags: %+v, %v", inbox, err)
	}
	var usage *UsageError
	if err := runAgentCmd(newInbox(), "--wait", "-1s"); !errors.As(err, &usage) {
		t.Errorf("inbox --wait -1s: %v; want a usage error", err)
	}

	var hook HookOptions
	newHook := func() *cobra.Command {
		return NewCmdAgentHook(deps, func(_ context.Context, o *HookOptions) error { hook = *o; return nil })
	}
	if err := runAgentCmd(newHook(), "gemini", "--event", "AfterAgent", "--hold", "1m"); err != nil ||
		!reflect.DeepEqual(hook, HookOptions{Agent: hooks.Gemini, Event: "AfterAgent", Hold: time.Minute}) {
		t.Errorf("hook: %+v, %v", hook, err)
	}
	// A hook's bad call is exit 1, never a usage error (exit 2 blocks Claude).
	for _, args := range [][]string{{"codex"}, {}, {"claude", "--nope"}, {"claude", "--hold", "-1s"}, {"qwen", "--wake", "screen"}} {
		if err := runAgentCmd(newHook(), args...); err == nil || errors.As(err, &usage) {
			t.Errorf("hook %q: %v; want a plain error", args, err)
		}
	}

	var inst InstallOptions
	newInstall := func(remove bool) *cobra.Command {
		return NewCmdAgentInstall(deps, func(_ context.Context, o *InstallOptions) error { inst = *o; return nil }, remove)
	}
	if err := runAgentCmd(newInstall(false), "claude", "--user", "--dry-run", "--hold", "5m"); err != nil ||
		!reflect.DeepEqual(inst, InstallOptions{Agent: hooks.Claude, User: true, DryRun: true, Hold: 5 * time.Minute}) {
		t.Errorf("install: %+v, %v", inst, err)
	}
	if err := runAgentCmd(newInstall(true), "qwen", "--project"); err != nil || !reflect.DeepEqual(inst, InstallOptions{Agent: hooks.Qwen, Remove: true}) {
		t.Errorf("uninstall: %+v, %v", inst, err)
	}
	if err := runAgentCmd(newInstall(false), "qwen", "--wake", "tmux"); err != nil || !reflect.DeepEqual(inst, InstallOptions{Agent: hooks.Qwen, Wake: "tmux"}) {
		t.Errorf("install --wake tmux: %+v, %v", inst, err)
	}
	if err := runAgentCmd(newInstall(false), "gemini", "--allow-own-background"); err != nil || !reflect.DeepEqual(inst, InstallOptions{Agent: hooks.Gemini, AllowOwnBackground: true}) {
		t.Errorf("install --allow-own-background: %+v, %v", inst, err)
	}
	for _, args := range [][]string{{"codex"}, {"claude", "--user", "--project"}, {"claude", "--hold", "-1m"}, {"gemini", "--wake", "screen"}, {"claude", "--allow-own-background"}} {
		if err := runAgentCmd(newInstall(false), args...); !errors.As(err, &usage) {
			t.Errorf("install %q: %v; want a usage error", args, err)
		}
	}
	if err := runAgentCmd(newInstall(true), "claude", "--hold", "1m"); err == nil {
		t.Error("uninstall accepted --hold")
	}
	if err := runAgentCmd(NewCmdAgent(deps), "inbx"); !errors.As(err, &usage) {
		t.Errorf("agent inbx: %v; want a usage error naming the commands", err)
	}
}
