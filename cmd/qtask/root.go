package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/qtask/qtask/agent"
	"github.com/qtask/qtask/cmd/internal/launch"
	"github.com/qtask/qtask/config"
	"github.com/qtask/qtask/tasks"
	"github.com/qtask/qtask/tmux"
)

// Exit codes are part of qtask's contract (docs/REFERENCE.md "Exit codes").
const (
	exitOK      = 0
	exitError   = 1
	exitUsage   = 2
	exitTimeout = 124
	// exitLimit: a start refused because a limit is reached (the
	// scope's running monitors); it can succeed once something ends.
	exitLimit = 3
	// exitNotReady: the task a readiness gate waited on ended first.
	exitNotReady = 4
	// exitPromoted: a foreground run was sent to the background and
	// released its caller; the task runs on.
	exitPromoted = 125
)

// IOStreams are where a command reads and writes; tests swap them.
type IOStreams struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer
}

// Files are In and Out as the files they are, for the hidden commands
// tmux runs on a pane's terminal or pipe: the wrapper and the capture need
// file descriptors (terminal size, the pane's pipe), not just streams.
func (s IOStreams) Files() (in, out *os.File, err error) {
	in, inOK := s.In.(*os.File)
	out, outOK := s.Out.(*os.File)
	if !inOK || !outOK {
		return nil, nil, errors.New("this internal command needs its standard input and output to be files (a tmux pane's terminal or pipe)")
	}
	return in, out, nil
}

// Deps is what commands need from the outside world, built once in Main.
// Everything environment-dependent is resolved here so commands never read
// the environment themselves.
type Deps struct {
	IO      IOStreams
	Env     config.Env
	Environ []string // the caller's environment, handed to tasks verbatim
	// Self is the qtask binary that tmux runs as a task's wrapper and capture.
	Self string
	// Arg0 is the command name as the user typed it ("bin/qtask" from a
	// checkout), for the commands qtask's hints suggest.
	Arg0 string
	// OpenTasks opens the task store as the commands that only query and
	// steer tasks (ls, status, stop, wait, promote) see it: Main sets it to
	// Store; a unit test sets a fake, so those commands' run functions are
	// tested without tmux or a state directory.
	OpenTasks func() (TaskStore, error)
}

// TaskStore is what ls, status, stop, wait and promote need of the task
// store (*tasks.Store is the real one): defined here, where it is used, so
// a test's fake implements only this.
type TaskStore interface {
	List(ctx context.Context, f tasks.Filter) ([]*tasks.Task, []string, error)
	Get(ctx context.Context, idOrPrefix string) (*tasks.Task, error)
	MarkSeen(*tasks.Task) error
	StopMany(ctx context.Context, ids []string, opts tasks.StopOptions) []tasks.StopResult
	StopAll(ctx context.Context, opts tasks.StopOptions) ([]tasks.StopResult, error)
	Wait(ctx context.Context, ids []string) ([]*tasks.Task, error)
	AwaitReady(ctx context.Context, idOrPrefix string, opts tasks.ReadyOptions) (*tasks.ReadyResult, error)
	Promote(ctx context.Context, idOrPrefix, session string) (*tasks.PromoteResult, error)
}

// openStore is the real OpenTasks.
func (d *Deps) openStore() (TaskStore, error) {
	store, err := d.Store()
	if err != nil {
		return nil, err // not a nil *tasks.Store in a non-nil interface
	}
	return store, nil
}

// Config loads the config file named by the environment.
func (d *Deps) Config() (config.Config, error) {
	cfg, _, err := config.Load(d.Env.ConfigPath)
	return cfg, err
}

// Store opens the state directory; what a read could not do on its way is
// printed as a warning.
func (d *Deps) Store() (*tasks.Store, error) {
	store, err := launch.OpenStore(d.Env)
	if err != nil {
		return nil, err
	}
	warn := func(msg string) { printWarnings(d.IO.ErrOut, []string{msg}) }
	return store.WithWarnings(warn), nil
}

// Task opens the store and resolves id (or a unique prefix) to its task.
func (d *Deps) Task(ctx context.Context, id string) (*tasks.Store, *tasks.Task, error) {
	store, err := d.Store()
	if err != nil {
		return nil, nil, err
	}
	t, err := store.Get(ctx, id)
	return store, t, err
}

// ViewTask is Task for commands that show the task to someone (status,
// logs, attach): looking at a failed task clears it from the status line's
// unseen failures. A state dir that cannot record that must not stop the
// looking, so that error is dropped.
func (d *Deps) ViewTask(ctx context.Context, id string) (*tasks.Store, *tasks.Task, error) {
	store, err := d.Store()
	if err != nil {
		return nil, nil, err
	}
	t, err := viewTask(ctx, store, id)
	return store, t, err
}

// viewTask resolves id in store and marks the task seen (see ViewTask).
func viewTask(ctx context.Context, store TaskStore, id string) (*tasks.Task, error) {
	t, err := store.Get(ctx, id)
	if err == nil {
		_ = store.MarkSeen(t)
	}
	return t, err
}

// ConfigAndStore loads the config and opens the store, for commands that
// act on tasks with configured settings.
func (d *Deps) ConfigAndStore() (config.Config, *tasks.Store, error) {
	cfg, err := d.Config()
	if err != nil {
		return cfg, nil, err
	}
	store, err := d.Store()
	return cfg, store, err
}

// Caller is where qtask was run from: the caller's tmux pane and the
// server of $TMUX, both zero outside tmux.
func (d *Deps) Caller() tasks.Caller {
	return tasks.CallerAt(d.Env.TmuxSocketFromTMUX(), d.Env.TmuxPane)
}

// tmuxServer is the server of $TMUX (launch.InTmux).
func (d *Deps) tmuxServer() *tmux.Server { return launch.InTmux(d.Env) }

// startOptions is what every start from this process shares (launch).
func (d *Deps) startOptions(cfg config.Config, store *tasks.Store) tasks.StartOptions {
	return launch.StartOptions(cfg, d.Env, d.Environ, d.Self, store)
}

// typedName is how hints name qtask: as the user typed it, so a hint
// works when pasted (`bin/qtask logs -f ID` before qtask is on PATH); a
// bare name and anything odd is just "qtask".
func (d *Deps) typedName() string {
	if d.Arg0 == "" || !strings.Contains(d.Arg0, "/") || strings.ContainsAny(d.Arg0, " \t\n'\"$`\\") {
		return "qtask"
	}
	return d.Arg0
}

// agentName is how results for an agent name qtask: "qtask" when the
// caller's PATH finds this binary under that name, else its full path
// (qtask installed for an agent by its full path is not on the agent's
// PATH: a bare `qtask wait ID` would not run). A path with characters a
// shell would read is left out, as in typedName.
func (d *Deps) agentName() string {
	if d.Self == "" || strings.ContainsAny(d.Self, " \t\n'\"$`\\") || d.onPath() {
		return "qtask"
	}
	return d.Self
}

// onPath reports whether the PATH of the caller's environment finds this
// binary as "qtask".
func (d *Deps) onPath() bool {
	self, err := filepath.EvalSymlinks(d.Self)
	if err != nil {
		return true // nothing better to name
	}
	for _, kv := range slices.Backward(d.Environ) {
		if path, ok := strings.CutPrefix(kv, "PATH="); ok {
			for _, dir := range filepath.SplitList(path) {
				if found, err := filepath.EvalSymlinks(filepath.Join(dir, "qtask")); err == nil && dir != "" && found == self {
					return true
				}
			}
			return false
		}
	}
	return false
}

// UsageError is a mistake in how qtask was called: exit 2, with a hint.
type UsageError struct {
	Err error
	// Help, when set, is the command whose --help explains what was
	// wrong ("qtask status"): the message then ends with where to look.
	Help string
}

func (e *UsageError) Error() string { return e.Err.Error() }
func (e *UsageError) Unwrap() error { return e.Err }

func usageErrorf(format string, a ...any) error {
	return &UsageError{Err: fmt.Errorf(format, a...)}
}

// ExitError ends qtask with Code after the command has said what it had to.
type ExitError struct{ Code int }

func (e *ExitError) Error() string { return fmt.Sprintf("exit status %d", e.Code) }

// Main runs qtask with the process's arguments and environment and returns
// its exit code. It is the one place errors become exit codes.
func Main() int {
	deps := &Deps{IO: IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr}, Environ: os.Environ()}
	deps.OpenTasks = deps.openStore
	ctx := interruptContext()
	env, envErr := config.EnvFrom(os.Getenv)
	deps.Env = env
	if self, err := os.Executable(); err == nil {
		deps.Self = self
	}
	deps.Arg0 = os.Args[0]
	args := claudeShellArgs(os.Args)
	root := rootFor(deps, args)
	root.SetArgs(args)
	var err error
	ran := root
	if envErr != nil {
		err = envErr
	} else {
		ran, err = root.ExecuteContextC(ctx)
	}
	var intr *tasks.Interrupted
	if err != nil && errors.As(context.Cause(ctx), &intr) {
		// Interrupted while waiting: exit as a shell reports a signal death.
		return 128 + int(intr.Signal)
	}
	return exitCode(err, ran.CommandPath(), deps.IO.ErrOut)
}

// interruptContext is cancelled, with a *tasks.Interrupted cause naming the
// signal, on SIGINT or SIGTERM: a foreground run passes that signal on to
// its task, and waits and follows end cleanly. The handler stays for the
// life of the process, which ends as Main returns: signal.Stop would wait
// for the runtime's signal thread to settle, a fifth of a millisecond of
// every `run --bg` (bench/run-bg.sh).
func interruptContext() context.Context {
	ctx, cancel := context.WithCancelCause(context.Background())
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		sig := <-sigs
		cancel(&tasks.Interrupted{Signal: sig.(syscall.Signal)})
	}()
	return ctx
}

// maxErrorWidth bounds a printed error, which stays on one line.
const maxErrorWidth = 2000

// exitCode prints err (if it has something to say) and maps it to qtask's
// documented exit codes. ran is the command that failed ("qtask stop"): a
// usage error ends with where to read about it, on the same line.
func exitCode(err error, ran string, stderr io.Writer) int {
	if err == nil {
		return exitOK
	}
	var exitErr *ExitError
	if errors.As(err, &exitErr) {
		return exitErr.Code
	}
	// Errors quote user text (commands, paths, tmux's argv): escape control
	// characters here, the one place errors are printed.
	msg := displayCommand(err.Error(), maxErrorWidth)
	var usage *UsageError
	var badArg *tasks.ArgumentError
	isUsage := (errors.As(err, &usage) || errors.As(err, &badArg)) && !errors.As(err, new(*agent.SleepError))
	if isUsage {
		help := ran
		if usage != nil && usage.Help != "" {
			help = usage.Help
		}
		if help == "" {
			help = "qtask"
		}
		msg += fmt.Sprintf(" (see '%s --help')", help)
	}
	fmt.Fprintf(stderr, "qtask: %s\n", msg)
	if errors.As(err, new(*tasks.TooManyMonitorsError)) {
		return exitLimit
	}
	if isUsage || errors.As(err, new(*agent.SleepError)) {
		return exitUsage // a SleepError is guidance for an agent: no hint
	}
	return exitError
}

// NewCmdRoot builds a fresh command tree; nothing is wired at package level.
func NewCmdRoot(deps *Deps) *cobra.Command {
	return newRoot(deps, subcommands)
}

// rootFor is NewCmdRoot for one call, args as given after "qtask": when
// the first names a subcommand, only that one is built. Building them all
// is a fifth of a millisecond of every call (a quarter of what `run --bg`
// spends before it reaches tmux, bench/run-bg.sh), and the others cannot
// run anyway. Anything else (no word, a flag, help, completion, a typo)
// gets the whole tree, for the help and suggestions that list it.
func rootFor(deps *Deps, args []string) *cobra.Command {
	if len(args) > 0 {
		for _, sub := range subcommands {
			if sub.names(args[0]) && !slices.Contains(treeReaders, args[0]) {
				return newRoot(deps, []subcommand{sub})
			}
		}
	}
	return NewCmdRoot(deps)
}

// newRoot builds the root command with subs beneath it; with some of them
// only (rootFor), without the completion commands, which then cannot be
// what runs.
func newRoot(deps *Deps, subs []subcommand) *cobra.Command {
	root := &cobra.Command{
		Use:   "qtask",
		Short: "Background tasks in tmux windows, for humans and coding agents",
		Long: `qtask runs shell commands as tasks, each in its own tmux window, captures
their output into clean files, and lets you list, follow, stop and wait for
them. Outside tmux it uses a private server (tmux -L qtask).

Where a command takes a task ID, a unique prefix of one works, and so does
the task's --name (the running task of that name, else the newest).`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Args:          cobra.ArbitraryArgs,
		RunE:          unknownCommand,
	}
	// --version and -v print what `qtask version` does, worked out only
	// then (versionText reads the build info). Version must not be empty
	// for cobra to add the flags.
	root.Version = "qtask"
	addVersionFunc()
	root.SetVersionTemplate("{{qtaskVersion}}\n")
	root.SetIn(deps.IO.In)
	root.SetOut(deps.IO.Out)
	root.SetErr(deps.IO.ErrOut)
	root.SetFlagErrorFunc(flagError)
	root.SetHelpCommand(newCmdHelp(root))
	for _, sub := range subs {
		root.AddCommand(sub.build(deps))
	}
	if len(subs) < len(subcommands) {
		root.CompletionOptions.DisableDefaultCmd = true
		return root
	}
	root.InitDefaultCompletionCmd()
	tightenCompletion(root)
	bareBashCompletion(root)
	addTaskCompletion(deps, root)
	return root
}

// addVersionFunc gives cobra's templates qtaskVersion. Template functions
// are global to cobra, and tests build roots in parallel: added once.
var addVersionFunc = sync.OnceFunc(func() { cobra.AddTemplateFunc("qtaskVersion", versionText) })

// unknownCommand is what the bare root runs: help without words, else a
// usage error (exit 2) naming the word, so that a typo never looks like
// success to a script.
func unknownCommand(cmd *cobra.Command, args []string) error {
	if len(args) == 0 {
		return cmd.Help()
	}
	return usageErrorf("unknown command %q%s", args[0], didYouMean(cmd, args[0]))
}

// suggestionDistance is how many edits away a typo may be from the command
// it is taken for: "sotp" is two from "stop", as cobra counts.
const suggestionDistance = 2

// didYouMean is `; did you mean "stop"?` when word resembles some of
// cmd's subcommands (within suggestionDistance edits, or begins them),
// else "". cobra offers this only where it finds the command
// itself, and qtask answers unknown words itself (exit 2, not cobra's 1).
func didYouMean(cmd *cobra.Command, word string) string {
	cmd.SuggestionsMinimumDistance = suggestionDistance
	s := cmd.SuggestionsFor(word)
	if len(s) == 0 {
		return ""
	}
	// A word that begins some names means those ("st": status, stop), not
	// every name two edits away ("ls", "rm").
	if started := slices.DeleteFunc(slices.Clone(s), func(name string) bool { return !strings.HasPrefix(name, word) }); len(started) > 0 {
		s = started
	}
	slices.Sort(s)
	quoted := make([]string, len(s))
	for i, name := range s {
		quoted[i] = strconv.Quote(name)
	}
	if len(quoted) == 1 {
		return fmt.Sprintf("; did you mean %s?", quoted[0])
	}
	return fmt.Sprintf("; did you mean %s or %s?", strings.Join(quoted[:len(quoted)-1], ", "), quoted[len(quoted)-1])
}

// subcommand is one of qtask's commands and the words that call it (its
// name, then its aliases), known without building it (rootFor).
// TestSubcommandWords holds the words to what each command says.
type subcommand struct {
	words []string
	build func(*Deps) *cobra.Command
}

// treeReaders are the commands that read the whole command tree (man
// writes a page for each): rootFor builds it for them.
var treeReaders = []string{"man"}

// names reports whether word calls sub.
func (sub subcommand) names(word string) bool { return slices.Contains(sub.words, word) }

// subcommands are all of qtask's commands: the user's, then the hidden
// ones tmux, the shell hooks and the plugin run (_exec, _capture, …).
var subcommands = []subcommand{
	{[]string{"run"}, func(d *Deps) *cobra.Command { return NewCmdRun(d, nil) }},
	{[]string{"monitor"}, func(d *Deps) *cobra.Command { return NewCmdMonitor(d, nil) }},
	{[]string{"ls", "list"}, func(d *Deps) *cobra.Command { return NewCmdLs(d, nil) }},
	{[]string{"status"}, func(d *Deps) *cobra.Command { return NewCmdStatus(d, nil) }},
	{[]string{"logs"}, func(d *Deps) *cobra.Command { return NewCmdLogs(d, nil) }},
	{[]string{"events"}, func(d *Deps) *cobra.Command { return NewCmdEvents(d, nil) }},
	{[]string{"stop"}, func(d *Deps) *cobra.Command { return NewCmdStop(d, nil) }},
	{[]string{"wait"}, func(d *Deps) *cobra.Command { return NewCmdWait(d, nil) }},
	{[]string{"promote"}, func(d *Deps) *cobra.Command { return NewCmdPromote(d, nil) }},
	{[]string{"attach", "fg"}, func(d *Deps) *cobra.Command { return NewCmdAttach(d, nil) }},
	{[]string{"prune"}, func(d *Deps) *cobra.Command { return NewCmdPrune(d, nil) }},
	{[]string{"status-line"}, func(d *Deps) *cobra.Command { return NewCmdStatusLine(d, nil) }},
	{[]string{"doctor"}, func(d *Deps) *cobra.Command { return NewCmdDoctor(d, nil) }},
	{[]string{"rm"}, func(d *Deps) *cobra.Command { return NewCmdRm(d, nil) }},
	{[]string{"seen"}, func(d *Deps) *cobra.Command { return NewCmdSeen(d, nil) }},
	{[]string{"restart"}, NewCmdRestart},
	{[]string{"man"}, NewCmdMan},
	{[]string{"ui"}, NewCmdUI},
	{[]string{"agent"}, NewCmdAgent},
	{[]string{"mcp"}, func(d *Deps) *cobra.Command { return NewCmdMCP(d, nil) }},
	{[]string{"config"}, NewCmdConfig},
	{[]string{"version"}, NewCmdVersion},
	{[]string{"init"}, func(d *Deps) *cobra.Command { return NewCmdInit(d, nil) }},
	{[]string{"_exec"}, newCmdExec},
	{[]string{"_capture"}, newCmdCapture},
	{[]string{"_handover"}, newCmdHandover},
	{[]string{"_pane-done"}, newCmdPaneDone},
	{[]string{"_panes-closed"}, newCmdPanesClosed},
	{[]string{"_menu"}, newCmdMenu},
}

// tightenCompletion holds cobra's completion commands to qtask's rules:
// a stray argument is a usage error in qtask's words (cobra's own says so
// in its words, exit 1), and `completion` is a group (asGroup) that names
// its shells when given none or another word.
func tightenCompletion(root *cobra.Command) {
	if completion, _, err := root.Find([]string{"completion"}); err == nil {
		for _, shell := range completion.Commands() {
			shell.Args = exactArgs(0)
		}
		asGroup(completion)
	}
}

// asGroup makes cmd, which only groups subcommands (config, agent,
// completion), refuse anything but one of them in one line.
func asGroup(cmd *cobra.Command) {
	var names []string
	for _, sub := range cmd.Commands() {
		if sub.IsAvailableCommand() {
			names = append(names, sub.Name())
		}
	}
	want := strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
	cmd.Args = cobra.ArbitraryArgs
	cmd.RunE = func(c *cobra.Command, args []string) error {
		if len(args) == 0 {
			return argsError(c, "missing subcommand: %s", want)
		}
		if hint := didYouMean(c, args[0]); hint != "" {
			return argsError(c, "unknown subcommand %q%s", args[0], hint)
		}
		return argsError(c, "unknown subcommand %q: want %s", args[0], want)
	}
}

// newCmdHelp replaces cobra's help command, which answers an unknown topic
// with exit 0.
func newCmdHelp(root *cobra.Command) *cobra.Command {
	return &cobra.Command{
		Use:   "help [command]",
		Short: "Help about any command",
		RunE: func(c *cobra.Command, args []string) error {
			target, rest, err := root.Find(args)
			if err != nil || len(rest) > 0 {
				return &UsageError{Err: fmt.Errorf("unknown command %q", strings.Join(args, " ")), Help: root.CommandPath()}
			}
			return target.Help()
		},
	}
}

// invalidFlagValue matches pflag's error for a value its type rejects:
// `invalid argument "x" for "-n, --tail" flag: strconv.ParseInt: …`.
// Compiled when a flag is wrong, not as every command starts.
var invalidFlagValue = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^invalid argument (".*") for "(?:-., )?--([^"]+)" flag: `)
})

// flagError makes a flag mistake a usage error, in qtask's words rather
// than the parsing library's: `invalid value "x" for --tail: want a whole
// number`.
func flagError(c *cobra.Command, err error) error {
	if m := invalidFlagValue().FindStringSubmatch(err.Error()); m != nil {
		if f := c.Flags().Lookup(m[2]); f != nil {
			if want := flagValueKinds[f.Value.Type()]; want != "" {
				err = fmt.Errorf("invalid value %s for --%s: want %s", m[1], m[2], want)
			} else {
				err = fmt.Errorf("invalid value %s for --%s: %s", m[1], m[2], strings.TrimPrefix(err.Error(), m[0]))
			}
		}
	}
	return &UsageError{Err: err, Help: c.CommandPath()}
}

// flagValueKinds says what a flag of each pflag type accepts.
var flagValueKinds = map[string]string{
	"int": "a whole number", "int64": "a whole number", "uint": "a whole number", "uint64": "a whole number",
	"float64":  "a number",
	"bool":     "true or false",
	"duration": "a duration such as 30s, 5m, 1h30m or 7d",
}

// exactArgs and minArgs check the number of arguments and say, in one
// line, what is missing or extra and where to look:
// "missing task ID (see 'qtask status --help')".
func exactArgs(n int) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) > n {
			return argsError(cmd, "too many arguments: %s", strings.Join(args[n:], " "))
		}
		return minArgs(n)(cmd, args)
	}
}

func minArgs(n int) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) < n {
			return argsError(cmd, "missing %s", argName(cmd.Use, len(args)))
		}
		for i, arg := range args {
			if argName(cmd.Use, i) == "task ID" {
				if err := idArg(cmd, arg); err != nil {
					return err
				}
			}
		}
		return nil
	}
}

// idArg refuses an empty task ID argument (`qtask status ""`, an unset
// variable in a script) before anything runs: a usage error, not "no task
// with id" (exit 1), and not halfway through `stop a ""`.
func idArg(cmd *cobra.Command, id string) error {
	if err := tasks.CheckID(id); err != nil {
		return &UsageError{Err: err, Help: cmd.CommandPath()}
	}
	return nil
}

func argsError(cmd *cobra.Command, format string, a ...any) error {
	return &UsageError{Err: fmt.Errorf(format, a...), Help: cmd.CommandPath()}
}

// argName names the i-th argument of a command from its usage line
// ("status ID" → "task ID", "init bash|zsh|fish|tmux" → "bash|zsh|fish|tmux");
// a last name with "..." names every argument from there on ("stop ID...").
func argName(use string, i int) string {
	var names []string
	variadic := false
	for _, w := range strings.Fields(use)[1:] {
		if !strings.HasPrefix(w, "[") && !strings.HasPrefix(w, "-") && w != "|" {
			names = append(names, strings.TrimSuffix(w, "..."))
			variadic = strings.HasSuffix(w, "...")
		}
	}
	if i >= len(names) && variadic {
		i = len(names) - 1
	}
	if i >= len(names) {
		return "argument"
	}
	if names[i] == "ID" {
		return "task ID"
	}
	return names[i]
}
