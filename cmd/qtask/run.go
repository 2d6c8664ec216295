package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/qtask/qtask/agent"
	"github.com/qtask/qtask/agent/route"
	"github.com/qtask/qtask/config"
	"github.com/qtask/qtask/tasks"
	"github.com/qtask/qtask/tasks/capture"
)

// RunOptions are the parsed flags and arguments of `qtask run`.
type RunOptions struct {
	Command    string
	Background bool
	Name       string
	Cwd        string
	JSON       bool
	// Foreground only; nil means "from config".
	Timeout   *time.Duration
	OnTimeout string
	// Agent words the results for a coding agent and refuses a leading
	// sleep (--agent or $QTASK_AGENT).
	Agent bool
	// Set by a routed agent command, not by flags: the script the shell
	// runs around Command, the shell that runs it, and the timeout of the
	// agent's tool, which the foreground timeout stays under.
	Script, Shell string
	ToolTimeout   time.Duration
	// AgentBackground: the agent runs this routed call in its own
	// background (Claude's run_in_background), so nobody waits on it in
	// the foreground: no long-running note.
	AgentBackground bool
	// Ready, for a --bg run with --ready or --ready-port: return only once
	// the task is ready, or say why it is not.
	Ready *tasks.ReadyOptions
	// display is set by startRun for a foreground run on a terminal: the
	// pane's raw bytes, colours and all, stream here instead of clean text.
	display *capture.Display
}

// NewCmdRun builds `qtask run`. runF replaces the work in tests of flag parsing.
func NewCmdRun(deps *Deps, runF func(context.Context, *RunOptions) error) *cobra.Command {
	opts := &RunOptions{}
	var timeout time.Duration
	var gate readyFlags
	cmd := &cobra.Command{
		Use:   "run [flags] -- COMMAND...",
		Short: "Run a shell command as a task in its own tmux window",
		Long: `Run COMMAND as a task in its own tmux window. The words after -- are joined
by spaces into one shell command string and run by the configured shell with
-c, exactly as written: quotes, $VARS, $(...) and pipes all work.

Without --bg qtask runs it in the foreground: the command gets a window you
can watch (beside your own inside tmux), its output streams here, and qtask
exits with its exit code. Send it to the background while it runs — with the
promote key, ` + "`qtask promote`" + `, or when --timeout expires — and qtask returns at
once (exit 125) while the command carries on untouched.

With --bg the task starts in the background and qtask returns at once,
printing its id and output file.

With --bg and a readiness gate, qtask returns once the task is ready: when
a line of its output matches --ready REGEX (Go syntax, searched anywhere in
the line), or when 127.0.0.1:PORT (--ready-port) accepts a TCP connection.
Then it prints what --bg prints and exits 0. If the task ends first it exits
4; if --ready-timeout (default 2m; 0: no limit) passes first it exits 124;
either way with one line saying which and the last lines of output. On a
timeout the task keeps running, unless --ready-timeout-kill stops it.`,
		Example: `  qtask run -- go test ./...
  qtask run --timeout 30s -- npm run build
  qtask run --bg -- npm run dev
  qtask run --bg --ready 'Local:.*http' -- npm run dev
  qtask run --bg --ready-port 8000 -- python3 -m http.server 8000
  qtask run --bg --name build -- 'make -j4 2>&1 | tee build.log'`,
		Args: minArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := opts.complete(cmd, args, deps, timeout, &gate); err != nil {
				return err
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return runRun(cmd.Context(), deps, opts)
		},
	}
	// Flags end at the first word of the command: `qtask run --bg ls -la`.
	cmd.Flags().SetInterspersed(false)
	cmd.Flags().BoolVar(&opts.Background, "bg", false, "start in the background and return at once")
	cmd.Flags().StringVar(&opts.Name, "name", "", "a label for the task")
	cmd.Flags().StringVar(&opts.Cwd, "cwd", "", "directory to run in (default: the current directory)")
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print the task as a JSON object (with --bg)")
	durationVar(cmd.Flags(), &timeout, "timeout", 0, "foreground: after this long, act per --on-timeout (default: foreground_timeout from config, 2m; 0: never)")
	cmd.Flags().StringVar(&opts.OnTimeout, "on-timeout", "", "foreground: background (keep it running, release the caller) or kill (default: on_timeout from config)")
	gate.register(cmd)
	cmd.Flags().BoolVar(&opts.Agent, "agent", false, "agent mode: results worded for a coding agent, a leading sleep refused (default: on when $QTASK_AGENT is set)")
	return cmd
}

// complete fills opts from the command line's words and the flags that are
// not bound to it directly, and rejects what cannot run before anything
// starts: a usage error exits 2, a refused sleep says why for the agent.
func (opts *RunOptions) complete(cmd *cobra.Command, args []string, deps *Deps, timeout time.Duration, gate *readyFlags) error {
	opts.Command = strings.Join(args, " ")
	if err := tasks.CheckCommand(opts.Command, "qtask run --bg -- make test"); err != nil {
		return &UsageError{Err: err}
	}
	if err := checkNameFlag(cmd, opts.Name); err != nil {
		return err
	}
	opts.Agent = opts.Agent || deps.Env.Agent
	if !opts.Background && opts.ToolTimeout == 0 {
		// Run by qwen-code's shell tool: stay under its timeout. Its
		// settings are found from where qwen ran this (not --cwd).
		wd, _ := os.Getwd()
		opts.ToolTimeout = route.QwenToolTimeout(deps.Env.QwenSessionID, deps.Env.Home, wd)
	}
	if opts.Agent && !opts.Background {
		if err := agent.CheckSleep(opts.Command, deps.agentName()); err != nil {
			return err
		}
	}
	if opts.JSON && !opts.Background {
		// A foreground run prints the command's output, not a task object.
		return argsError(cmd, "--json prints the task a background run starts: add --bg")
	}
	if cmd.Flags().Changed("timeout") {
		if opts.Background {
			return usageErrorf("--timeout applies to foreground runs; drop it or drop --bg")
		}
		if timeout < 0 {
			return usageErrorf("--timeout must not be negative")
		}
		opts.Timeout = &timeout
	}
	switch opts.OnTimeout {
	case "", config.OnTimeoutBackground, config.OnTimeoutKill:
	default:
		return usageErrorf("--on-timeout must be %s or %s, not %q", config.OnTimeoutBackground, config.OnTimeoutKill, opts.OnTimeout)
	}
	ready, err := gate.options(cmd, opts.Background)
	if err != nil {
		return err
	}
	opts.Ready = ready
	return nil
}

// checkNameFlag checks --name of run and monitor: given, even as "", it
// must name something (a blank label is a mistake, as a blank command is);
// left out, the task is unnamed.
func checkNameFlag(cmd *cobra.Command, name string) error {
	check := tasks.CheckName
	if cmd.Flags().Changed("name") {
		if strings.TrimSpace(name) == "" {
			return usageErrorf("task name is empty (only whitespace): give a --name to show, or leave --name out")
		}
		check = tasks.CheckGivenName
	}
	if err := check(name); err != nil {
		return &UsageError{Err: err}
	}
	return nil
}

func runRun(ctx context.Context, deps *Deps, opts *RunOptions) error {
	if opts.Ready != nil && opts.Ready.Port != 0 {
		if err := tasks.CheckPortFree(opts.Ready.Port); err != nil {
			return err
		}
	}
	cfg, store, t, err := startRun(ctx, deps, opts)
	if err != nil {
		return err
	}
	if !opts.Background {
		return runForeground(ctx, deps, store, t, cfg, opts)
	}
	var ready *tasks.ReadyResult
	if opts.Ready != nil {
		gate := *opts.Ready
		gate.StopGrace = cfg.StopGrace
		if ready, err = store.AwaitReady(ctx, t.ID, gate); err != nil {
			return err
		}
		if ready.Outcome != tasks.Ready {
			return reportNotReady(deps, ready, gate)
		}
		t = ready.Task
	}
	out := deps.IO.Out
	if opts.JSON {
		return writeJSON(out, t)
	}
	id := displayValue(t.ID)
	if opts.Agent {
		fmt.Fprint(out, agent.Started(deps.agentName(), id, displayCommand(t.Label(), 200), displayValue(t.OutputPath)))
	} else {
		// One write: on a terminal each is a round trip through the tty.
		fmt.Fprintf(out, "Started task %s: %s\nOutput:  %s\nFollow:  %s logs -f %s\nStop:    %s stop %s\n",
			id, displayCommand(t.Label(), 72), displayValue(t.OutputPath), deps.typedName(), id, deps.typedName(), id)
	}
	if ready != nil {
		fmt.Fprintf(out, "Ready:   %s\n", readyText(ready, *opts.Ready))
	}
	return nil
}

// startRun starts the task `run` asked for and returns it with the config
// and store it was started with.
func startRun(ctx context.Context, deps *Deps, opts *RunOptions) (config.Config, *tasks.Store, *tasks.Task, error) {
	cwd, err := resolveCwd(opts.Cwd)
	if err != nil {
		return config.Config{}, nil, nil, err
	}
	cfg, store, err := deps.ConfigAndStore()
	if err != nil {
		return cfg, nil, nil, err
	}
	start := deps.startOptions(cfg, store)
	start.Command, start.Name, start.Cwd, start.Background = opts.Command, opts.Name, cwd, opts.Background
	start.Script = opts.Script
	if !opts.Background {
		start.WaiterPID = os.Getpid()
	}
	start.WindowInSession = opts.Agent && cfg.AgentWindows == config.AgentWindowsQtask
	start.AgentCommand = opts.Agent
	if opts.Shell != "" {
		start.Shell = opts.Shell
	}
	if out, ok := deps.IO.Out.(*os.File); ok && !opts.Background && !opts.Agent && isTTY(out) {
		if opts.display, err = store.NewDisplay(); err != nil {
			return cfg, nil, nil, err
		}
		start.Display = opts.display.Path()
	}
	t, err := store.Start(ctx, start)
	if err != nil {
		opts.display.Close()
		return cfg, nil, nil, err
	}
	return cfg, store, t, nil
}

// runForeground streams a foreground task's output until it ends (exit
// with its code), is promoted (exit 125) or times out.
func runForeground(ctx context.Context, deps *Deps, store *tasks.Store, t *tasks.Task, cfg config.Config, opts *RunOptions) error {
	timeout, onTimeout := foregroundLimit(cfg, opts)
	out := &lineTracker{w: deps.IO.Out, atLineStart: true}
	defer opts.display.Close()
	res, err := store.Attend(ctx, t.ID, tasks.AttendOptions{
		Display:       opts.display,
		Out:           out,
		Timeout:       timeout,
		KillOnTimeout: onTimeout == config.OnTimeoutKill,
		StopGrace:     cfg.StopGrace,
		Session:       cfg.Session,
	})
	if err != nil {
		return err
	}
	if res.Promoted {
		return reportPromoted(deps, out, res, timeout, opts.Agent)
	}
	if opts.Agent && res.Task.Status == tasks.StatusCancelled && ctx.Err() == nil {
		// Cancelled, and not by this caller's own interrupt (which
		// cancels ctx): a stop from elsewhere, which the agent would
		// otherwise read as the command failing.
		out.endLine()
		fmt.Fprintln(deps.IO.ErrOut, agent.StoppedFromOutside(displayValue(res.Task.ID)))
	}
	return reportEnd(deps, out, res.Task, timeout, cfg.LongRunNote, opts)
}

// foregroundLimit is how long a foreground run may hold the caller, and
// what happens then: the flags win over the config, and a routed agent
// command stays under its tool's own timeout.
func foregroundLimit(cfg config.Config, opts *RunOptions) (time.Duration, string) {
	timeout := cfg.ForegroundTimeout
	if opts.Timeout != nil {
		timeout = *opts.Timeout
	}
	timeout = route.ForegroundTimeout(timeout, opts.ToolTimeout)
	onTimeout := cfg.OnTimeout
	if opts.OnTimeout != "" {
		onTimeout = opts.OnTimeout
	}
	return timeout, onTimeout
}

// reportPromoted tells the caller the task went on in the background (by
// the promote key or command, at the timeout, or released as its agent
// ended) and where to find it; the run exits 125.
func reportPromoted(deps *Deps, out *lineTracker, res *tasks.AttendResult, timeout time.Duration, agentMode bool) error {
	end := res.Task
	id := displayValue(end.ID)
	out.endLine()
	switch {
	case agentMode && end.CallerGone:
		fmt.Fprint(out, agent.LeftRunning(deps.agentName(), id, displayValue(end.OutputPath)))
		return &ExitError{Code: exitPromoted}
	case agentMode:
		fmt.Fprint(out, agent.MovedToBackground(deps.agentName(), id, displayValue(end.OutputPath), timeout, res.TimedOut))
		return &ExitError{Code: exitPromoted}
	}
	why := ""
	if res.TimedOut {
		why = fmt.Sprintf(" after the %s timeout", timeout)
	}
	fmt.Fprintf(out, "promoted to background as %s%s; output continues in %s\n", id, why, displayValue(end.OutputPath))
	fmt.Fprintf(deps.IO.ErrOut, "qtask: follow it with `%s logs -f %s`, stop it with `%[1]s stop %[3]s`\n", deps.typedName(), id, id)
	return &ExitError{Code: exitPromoted}
}

// reportEnd says how a foreground task ended, when its exit code alone
// does not (a failure with a reason, a note for a long run that might
// better have run in the background, to whom longRunNote says), and exits
// with the task's code.
func reportEnd(deps *Deps, out *lineTracker, end *tasks.Task, timeout time.Duration, longRunNote string, opts *RunOptions) error {
	id := displayValue(end.ID)
	// A routed command's output is what the agent would have seen without
	// qtask, and an agent reads a plain exit from the exit code.
	quiet := opts.Script != "" || opts.Agent && strings.HasPrefix(end.Error, "exited with code ")
	if end.Status == tasks.StatusFailed && end.Error != "" && !quiet {
		out.endLine()
		fmt.Fprintf(deps.IO.ErrOut, "qtask: task %s %s\n", id, displayCommand(end.StatusText(), 200))
	}
	if end.EndedByItself() && !opts.AgentBackground {
		if hint := longRunHint(deps, end, timeout, longRunNote, opts.Agent); hint != "" {
			out.endLine()
			fmt.Fprintln(deps.IO.ErrOut, hint)
		}
	}
	if end.ExitCode == nil {
		return &ExitError{Code: exitError}
	}
	if *end.ExitCode != 0 {
		return &ExitError{Code: *end.ExitCode}
	}
	return nil
}

// longRunHint is the note after a long foreground run that ended by
// itself, as config long_run_note says: an agent's (agent mode) unless
// "off", a person's one line only with "always"; "" when none is due.
func longRunHint(deps *Deps, end *tasks.Task, timeout time.Duration, longRunNote string, agentMode bool) string {
	ran := end.Runtime(time.Now())
	switch {
	case longRunNote == config.LongRunNoteOff:
		return ""
	case agentMode:
		return agent.AgentLongRunningHint(deps.agentName(), ran, timeout, displayValue(end.OutputPath))
	case longRunNote == config.LongRunNoteAlways:
		return agent.LongRunningHint(ran, timeout)
	}
	return ""
}

// lineTracker remembers whether the output so far ends a line, so qtask's
// own messages never get glued to the end of the command's last line.
type lineTracker struct {
	w           io.Writer
	atLineStart bool
}

func (l *lineTracker) Write(p []byte) (int, error) {
	if len(p) > 0 {
		l.atLineStart = p[len(p)-1] == '\n'
	}
	return l.w.Write(p)
}

func (l *lineTracker) endLine() {
	if !l.atLineStart {
		l.Write([]byte("\n"))
	}
}

// resolveCwd makes --cwd absolute against the current directory.
func resolveCwd(dir string) (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("current directory: %w", err)
	}
	if dir == "" {
		return wd, nil
	}
	return tasks.AbsDir(wd, dir), nil
}
