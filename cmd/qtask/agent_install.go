package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/qtask/qtask/agent/hooks"
	"github.com/qtask/qtask/agent/install"
	"github.com/qtask/qtask/config"
)

// InstallOptions are the parsed arguments of `qtask agent install` and
// `qtask agent uninstall`.
type InstallOptions struct {
	Agent  hooks.Agent
	Remove bool
	User   bool
	DryRun bool
	Hold   time.Duration
	// NoRoute leaves Claude's Bash tool alone (no shell prefix).
	NoRoute bool
	// AllowOwnBackground leaves qwen's and gemini's shell tool its own
	// background option (is_background), which install otherwise denies
	// with the qtask line to run instead.
	AllowOwnBackground bool
	// Wake is how an idle agent is woken besides its hooks: "" or "tmux"
	// (the hooks note the agent's pane; see `qtask agent hook --wake`).
	Wake string
}

// NewCmdAgentInstall builds `qtask agent install` or, with remove,
// `qtask agent uninstall`.
func NewCmdAgentInstall(deps *Deps, runF func(context.Context, *InstallOptions) error, remove bool) *cobra.Command {
	opts := &InstallOptions{Remove: remove}
	var project bool
	cmd := &cobra.Command{
		Use:   "install claude|qwen|gemini",
		Short: "Add qtask's hooks to a coding agent's settings",
		Long: `Merge qtask's hooks into the agent's settings file (Claude Code
.claude/settings.local.json, its personal project settings, which git is
to ignore; qwen-code .qwen/settings.json, gemini-cli .gemini/settings.json;
in the current directory, or in your home with --user), so the agent hears
about the tasks of its scope when they end. What they name (the qtask
binary, Claude's shell prefix link) is a path on this machine. For Claude,
qtask's entries left in .claude/settings.json by an older install are
moved out of it, and in a git work tree that would commit
settings.local.json, install adds Claude Code's own rule for it
(**/.claude/settings.local.json) to git's global excludes file, as Claude
does when it writes that file, and says so.
It also registers 'qtask mcp' as the agent's MCP server "qtask" (Claude:
the project's .mcp.json, which Claude means to be committed: qtask by its
bare name when PATH finds this binary, else by its path, and install says
so; qwen and gemini: the same settings file), whose
tools run commands as tasks (shell), list, read, wait for and stop them,
and watch output as it comes (monitor: each line, or each line matching a
pattern, is a notification; see 'qtask monitor --help').
For qwen and gemini, a call of the shell tool that sets its own
background option (is_background: an untracked process outside tmux that
dies with the agent) is denied, with the 'qtask run --agent --bg' line to
run instead; --allow-own-background leaves that option to the agent.
Everything else in the file is kept as it was; installing twice changes
nothing; the file's text before qtask is kept in FILE.qtask-backup (a
second install keeps the first one's).`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := opts.complete(deps, args[0], project); err != nil {
				return err
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return runAgentInstall(deps, opts)
		},
	}
	if remove {
		cmd.Use = "uninstall claude|qwen|gemini"
		cmd.Short = "Remove qtask's hooks from a coding agent's settings"
		cmd.Long = `Remove exactly what 'qtask agent install' added to the agent's settings
(its hooks and MCP server), and nothing else; for Claude, from
.claude/settings.local.json and from .claude/settings.json, where older
installs wrote. A file nobody changed since install gets its text before
install back, byte for byte (FILE.qtask-backup, which then goes), or is
deleted if install created it; a file changed since is merged (qtask's
entries out, the rest kept), and its backup kept, which uninstall says.
For Claude, the rule install added to git's global excludes file goes
with the last project's uninstall.`
	} else {
		durationVar(cmd.Flags(), &opts.Hold, "hold", 0, "end-of-turn hook waits up to this long for running tasks (for headless runs)")
		cmd.Flags().BoolVar(&opts.NoRoute, "no-route", false, "claude: do not run its Bash tool's commands as qtask tasks")
		cmd.Flags().BoolVar(&opts.AllowOwnBackground, "allow-own-background", false, "qwen, gemini: let the shell tool start its own background processes (is_background), untracked, instead of denying them with the qtask line to run")
		cmd.Flags().StringVar(&opts.Wake, "wake", "", `"tmux": wake the agent when it sits idle by typing one line into its tmux pane (for qwen and gemini; default: config "wake")`)
	}
	cmd.Flags().BoolVar(&project, "project", false, "the project's settings in the current directory (default)")
	cmd.Flags().BoolVar(&opts.User, "user", false, "your user settings instead")
	cmd.Flags().BoolVar(&opts.DryRun, "dry-run", false, "print the change as a diff and write nothing")
	return cmd
}

// complete checks the command line of install (or uninstall) for agent
// name, project saying whether --project was given, and fills in what the
// config decides: a usage error exits 2 before anything is read or written.
func (opts *InstallOptions) complete(deps *Deps, name string, project bool) error {
	a, err := hooks.Lookup(name)
	if err != nil {
		return &UsageError{Err: err}
	}
	if project && opts.User {
		return usageErrorf("--project and --user exclude each other")
	}
	if opts.Hold < 0 {
		return usageErrorf("--hold must not be negative")
	}
	if err := checkWake(opts.Wake); err != nil {
		return &UsageError{Err: err}
	}
	if opts.AllowOwnBackground && a.GuardEvent() == "" {
		return usageErrorf("--allow-own-background is for qwen and gemini: %s's own background calls are left to it with --no-route", a.Name)
	}
	// Config wake is for the agents a hook cannot wake (qwen,
	// gemini): Claude's asyncRewake hook wakes it already, and a
	// typed line as well would wake it twice.
	if opts.Wake == "" && !opts.Remove && !a.AsyncRewake {
		cfg, err := deps.Config()
		if err != nil {
			return err
		}
		if cfg.Wake == config.WakeTmux {
			opts.Wake = config.WakeTmux
		}
	}
	opts.Agent = a
	return nil
}

// runAgentInstall plans every file's change first, so that a plan that
// fails writes nothing, then writes (or with --dry-run prints) them,
// Claude's shell prefix link first.
func runAgentInstall(deps *Deps, opts *InstallOptions) error {
	cwd, err := os.Getwd()
	if err != nil {
		return err
	}
	paths := install.Paths{Cwd: cwd, Home: deps.Env.Home, ClaudeConfigDir: deps.Env.ClaudeConfigDir}
	path, err := install.SettingsPath(opts.Agent, opts.User, paths)
	if err != nil {
		return err
	}
	if deps.Self == "" && !opts.Remove {
		return fmt.Errorf("cannot tell where the qtask binary is, which the hooks must run: run install with qtask's full path")
	}
	link := ""
	if opts.Agent.Name == hooks.Claude.Name && !opts.NoRoute {
		link = install.ShellLinkPath(path)
	}
	changes, err := planInstall(deps, opts, path, paths, link)
	if err != nil {
		return err
	}
	if opts.Agent.Name == hooks.Claude.Name && !opts.DryRun {
		// The link first: settings naming a prefix that is not there yet
		// would break every command Claude runs.
		if err := updateShellLink(opts, path, link, deps.Self); err != nil {
			return err
		}
	}
	for _, change := range changes {
		if err := applyInstall(deps, opts, change); err != nil {
			return err
		}
	}
	if opts.Agent.Name == hooks.Claude.Name && (opts.Remove || link == "") && !opts.DryRun {
		// Last: the settings no longer name it.
		if err := install.Unlink(install.ShellLinkPath(path)); err != nil {
			return err
		}
	}
	if opts.Agent.Name == hooks.Claude.Name && !opts.User {
		note := ""
		if opts.Remove {
			note = install.ForgetGitRule(path, deps.Env.StateDir, opts.DryRun)
		} else {
			note = install.KeepOutOfGit(path, deps.Env.Home, deps.Env.XDGConfigHome, deps.Env.StateDir, opts.DryRun)
		}
		if note != "" {
			fmt.Fprintln(deps.IO.Out, note)
		}
	}
	if opts.Agent.Name == hooks.Claude.Name && opts.User && !opts.Remove {
		fmt.Fprintf(deps.IO.Out, "to give Claude Code qtask's MCP server in every project, run: %s\n", install.ClaudeUserMCPHint(deps.Self))
	}
	return nil
}

// planInstall is every change install (or uninstall) makes: the hooks in
// the settings file at path, then the MCP server's entry, which for some
// agents is in the same file and so is planned on top of the first change.
// link is Claude's shell prefix, "" when its commands are not routed.
func planInstall(deps *Deps, opts *InstallOptions, path string, paths install.Paths, link string) ([]install.Change, error) {
	var change install.Change
	var env []install.EnvVar
	var err error
	if opts.Remove {
		change, err = install.PlanRemove(opts.Agent, path)
	} else {
		if opts.Agent.Name == hooks.Claude.Name {
			env = install.ClaudeEnv(link)
		}
		command := install.HookCommand(deps.Self, opts.Agent)
		if opts.Wake != "" {
			command += " --wake " + opts.Wake
		}
		change, err = install.PlanAdd(opts.Agent, path, command, install.Setup{
			Hold: opts.Hold, Routed: !opts.NoRoute, OwnBackground: opts.AllowOwnBackground, Env: env})
	}
	if err != nil {
		return nil, err
	}
	var changes []install.Change
	if opts.Remove {
		changes, err = install.PlanRemoveMCP(opts.Agent, opts.User, paths, change)
		for i := range changes {
			if err == nil {
				changes[i], err = changes[i].Uninstalling()
			}
		}
	} else {
		changes, err = install.PlanAddMCP(opts.Agent, opts.User, paths, change, deps.Self)
	}
	if err != nil {
		return nil, err
	}
	// Last: until the local file has them, the shared one keeps them.
	shared, ok, err := install.PlanRemoveShared(opts.Agent, opts.User, paths, env)
	if ok {
		changes = append(changes, shared)
	}
	return changes, err
}

// updateShellLink makes the link to qtask that Claude's settings name as
// its shell prefix, beside the settings file at path.
func updateShellLink(opts *InstallOptions, path, link, self string) error {
	if opts.Remove || link == "" {
		return nil // after the settings, by runAgentInstall
	}
	return install.Link(link, self)
}

// applyInstall writes one file's change (or, with --dry-run, prints it)
// and says what it did.
func applyInstall(deps *Deps, opts *InstallOptions, change install.Change) error {
	if err := applyChange(deps, opts, change); err != nil || change.Note == "" {
		return err
	}
	fmt.Fprintln(deps.IO.Out, change.Note)
	return nil
}

// applyChange is applyInstall but for the change's note.
func applyChange(deps *Deps, opts *InstallOptions, change install.Change) error {
	verb := "installed in"
	if opts.Remove || change.Shared {
		verb = "removed from"
	}
	diff := change.Diff()
	switch {
	case diff == "" && change.Shared:
		return nil // nothing of an older install's there
	case diff == "" && opts.Remove:
		fmt.Fprintf(deps.IO.Out, "no qtask %s for %s in %s: nothing to change\n", change.What, opts.Agent.Name, change.Path)
		return nil
	case diff == "":
		fmt.Fprintf(deps.IO.Out, "qtask %s for %s already in %s: nothing to change\n", change.What, opts.Agent.Name, change.Path)
		return nil
	case opts.DryRun:
		fmt.Fprint(deps.IO.Out, diff)
		return nil
	}
	done, err := change.Apply()
	if err != nil {
		return err
	}
	var notes []string
	if change.Shared && !opts.Remove {
		notes = append(notes, "an older install's, now in settings.local.json")
	}
	if done != "" {
		notes = append(notes, done)
	}
	fmt.Fprintf(deps.IO.Out, "qtask %s for %s %s %s", change.What, opts.Agent.Name, verb, change.Path)
	if len(notes) > 0 {
		fmt.Fprintf(deps.IO.Out, " (%s)", strings.Join(notes, "; "))
	}
	fmt.Fprintln(deps.IO.Out)
	return nil
}
