package tasks

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/qtask/qtask/tasks/monitor"
	"github.com/qtask/qtask/tasks/procs"
	"github.com/qtask/qtask/tasks/statefs"
	"github.com/qtask/qtask/tasks/taskid"
	"github.com/qtask/qtask/tmux"
)

// StartOptions is everything Start needs; the caller (the CLI) resolves
// config and environment into it.
type StartOptions struct {
	Command string // one shell command string, run with Shell -c
	// Script, when set, is what Shell runs instead of Command, which is
	// then only what people and agents are shown (ls, notifications): a
	// coding agent's script around the command its model wrote.
	Script     string
	Name       string   // optional label
	Cwd        string   // absolute directory the command runs in
	Env        []string // the caller's environment, handed to the command
	Scope      string   // who hears about the task
	Shell      string   // program that runs Command with -c
	Background bool     // nobody waits on it in the foreground
	Session    string   // tmux session holding the task's window
	// Caller is where the run was called from. When the caller's pane is
	// on the task's server, a foreground task's window opens, unselected,
	// in the caller's session, where the human can watch it — unless
	// WindowInSession, which puts it in Session as for a background task
	// (an agent's many quick commands would flicker in the user's window
	// list).
	Caller          Caller
	WindowInSession bool
	// AgentCommand: a coding agent ran the command (agent mode), so its
	// window shows the start of the command beside the id: nobody typed it.
	AgentCommand bool
	// WaiterPID is the foreground `qtask run` waiting on the task, if any.
	WaiterPID      int
	Server         tmux.Server   // tmux server to run on
	Self           string        // path of the qtask binary, for the pane's argv
	OutputMaxBytes int64         // cap of the output file
	KeepFullScreen bool          // keep a full-screen program's last screen (config keep_full_screen)
	KeepFailedPane bool          // leave a failed task's dead pane open (config keep_failed_pane)
	KeepRawOutput  bool          // keep the pane's raw bytes too (config keep_raw_output)
	StopGrace      time.Duration // SIGTERM→SIGKILL grace for leftovers
	StatusFormat   string        // the tmux status segment's format (config status_format)
	// Monitor, when set, makes the task a monitor (see monitor.go).
	Monitor *MonitorOptions
	// Display is the FIFO of a foreground caller on a terminal, which
	// shows the pane's raw bytes (see Display); empty: none.
	Display string
	// KeepFinished, when positive, is how many finished tasks a start
	// keeps (config keep_finished): it prunes older ones as it starts
	// (AutoPrune), telling Forget of each one removed.
	KeepFinished int
	Forget       func(*Task)
}

// scopeEnv is the variable that names a scope for qtask's own commands
// ($QTASK_SCOPE, see config.Env.ChosenScope).
const scopeEnv = "QTASK_SCOPE"

// InScope is o for tasks of scope whose own qtask commands keep it: it is
// set as $QTASK_SCOPE in the task's environment (replacing one there), for
// a scope the environment did not name (an agent process's noted
// session, an MCP server's own scope), which the task's processes, under
// tmux and not under the agent, could not find again.
func (o StartOptions) InScope(scope string) StartOptions {
	o.Scope = scope
	env := make([]string, 0, len(o.Env)+1)
	for _, kv := range o.Env {
		if !strings.HasPrefix(kv, scopeEnv+"=") {
			env = append(env, kv)
		}
	}
	o.Env = append(env, scopeEnv+"="+scope)
	return o
}

// spec is what the wrapper needs and nobody else may see: the caller's
// environment travels here, in a 0600 file the wrapper deletes on reading,
// never in argv (the tmux server's environment is not the caller's).
type spec struct {
	Command   string        `json:"command"`
	Shell     string        `json:"shell"`
	Cwd       string        `json:"cwd"`
	Env       []string      `json:"env"`
	StopGrace time.Duration `json:"stop_grace"`
	Monitor   *monitor.Spec `json:"monitor,omitempty"`
	Display   string        `json:"display,omitempty"`
}

// InputError is a well-formed request that cannot be carried out here (no
// such shell, nothing to monitor), as opposed to a failure of qtask or
// tmux, and to a malformed request (ArgumentError, exit 2): exit 1.
type InputError struct{ Msg string }

func (e *InputError) Error() string { return e.Msg }

// Start creates a task and its tmux window and returns at once; the command
// runs under `qtask _exec` in the new pane. The spec is written while tmux
// opens the window, the record once it has; the wrapper waits for the record,
// so a start that dies half-way leaves a window that closes by itself and
// no task stuck running. A start that fails leaves nothing behind: no
// spec, no empty output file, no record, no window.
func (s *Store) Start(ctx context.Context, opts StartOptions) (t *Task, err error) {
	kind := KindShell
	var mon *monitor.Spec
	if opts.Monitor != nil {
		// Until its record is saved, no other monitor start counts the
		// scope's monitors: the limit holds for starts at the same time.
		unlock, err := s.root.Lock(ctx, monitorLockName)
		if err != nil {
			return nil, err
		}
		defer unlock()
		if mon, err = s.prepareMonitor(ctx, &opts); err != nil {
			return nil, err
		}
		kind = KindMonitor
	}
	shell, err := resolveStart(&opts)
	if err != nil {
		return nil, err
	}
	id, err := s.pickID()
	if err != nil {
		return nil, err
	}
	defer func() {
		// Unless another start claimed the id first: then they are its.
		if err != nil && !errors.Is(err, errIDTaken) {
			os.Remove(s.specPath(id))
			os.Remove(s.outputPath(id))
		}
	}()
	r, err := s.startRecord(id, kind, opts)
	if err != nil {
		return nil, err
	}
	var pruneDue bool
	w, saving, err := s.launch(ctx, r, opts, shell, mon, func() { pruneDue = s.startPruneDue(opts.KeepFinished) })
	if err != nil {
		return nil, err
	}
	pane, wrapper := w.pane, w.wrapper
	// One write, with the pane id: the wrapper waits for the record to
	// appear (awaitRecord), and a command issued right after `run --bg`
	// returns (attach, promote --pane) finds the pane.
	r.PaneID = string(pane)
	// The wrapper's identity from the first write on: readers judge a
	// starting task alive by its wrapper's pid and start time, never by
	// how old a wall-clock timestamp is.
	r.WrapperPID, r.WrapperStart = wrapper, procs.StartTime(wrapper)
	if err := s.saveVia(saving, r); err != nil {
		// Its wrapper waits for the record, which will never come.
		s.panes(opts.Server).KillPane(context.WithoutCancel(ctx), pane)
		s.statusLine().Unstart(id)
		return nil, err
	}
	if pruneDue {
		// Only now, with the task's record saved: a long prune (or an
		// interrupt during it) must not undo a start tmux has made.
		_, warnings, err := s.pruneBatch(ctx, opts.KeepFinished, opts.Forget, id)
		s.warnAll(pruneWarnings(warnings, err))
	}
	return &r.Task, nil
}

// launch opens the task's window. The tmux round trip is most of a
// start, and nothing in it needs the id's claim (its output file), the
// spec, the running count or the record's temp file, so they are made
// while the server works on it, and so is also (WindowSpec.Meanwhile:
// after the command is sent, on this thread; the wrapper reads its spec
// and output only once the record exists). It returns the window and the
// record's prepared write; on failure, nothing of it is left but the
// claimed id's files, which Start removes.
func (s *Store) launch(ctx context.Context, r *record, opts StartOptions, shell string, mon *monitor.Spec, also func()) (openedWindow, *statefs.PendingWrite, error) {
	var claimErr, specErr, saveErr error
	var saving *statefs.PendingWrite
	files := sync.OnceFunc(func() {
		if claimErr = s.claimID(r.ID); claimErr != nil {
			return
		}
		specErr = s.writeSpec(r.ID, opts, shell, mon)
		s.statusLine().Start(r.ID)
		saving, saveErr = statefs.Prepare(s.recordPath(r.ID))
		also()
	})
	w := s.openWindow(ctx, r, opts, files)
	files() // a Panes that did not call Meanwhile
	// A lost claim comes first whatever else failed: it tells Start that
	// the id's files are another start's (errIDTaken).
	err := cmp.Or(claimErr, w.err, specErr, saveErr)
	if err == nil {
		return w, saving, nil
	}
	if saving != nil {
		saving.Abandon()
	}
	if w.err == nil {
		// Its wrapper waits for a record that will never come.
		s.panes(opts.Server).KillPane(context.WithoutCancel(ctx), w.pane)
	}
	if claimErr == nil {
		s.statusLine().Unstart(r.ID)
	}
	return w, nil, err
}

// writeSpec writes what the wrapper of task id runs: the command (or the
// agent's script around it), the shell, and the caller's directory and
// environment.
func (s *Store) writeSpec(id string, opts StartOptions, shell string, mon *monitor.Spec) error {
	run := opts.Command
	if opts.Script != "" {
		run = opts.Script
	}
	sp := spec{Command: run, Shell: shell, Cwd: opts.Cwd, Env: opts.Env, StopGrace: opts.StopGrace, Monitor: mon, Display: opts.Display}
	data, err := json.Marshal(sp)
	if err != nil {
		return fmt.Errorf("encode task spec: %w", err)
	}
	return statefs.WriteAtomic(s.specPath(id), data)
}

// startRecord is the record of task id as Start saves it once its window
// is open. The caller's pane is kept only when it is on the task's server.
func (s *Store) startRecord(id string, kind Kind, opts StartOptions) (*record, error) {
	marker, err := taskid.New()
	if err != nil {
		return nil, err
	}
	var callerPane tmux.PaneID
	if opts.Caller.On(opts.Server) {
		callerPane = opts.Caller.Pane
	}
	return &record{
		Task: Task{
			ID: id, Name: opts.Name, Kind: kind, Command: opts.Command, Cwd: opts.Cwd,
			Scope: opts.Scope, Status: StatusRunning, StartedAt: time.Now().UTC(),
			OutputPath: s.outputPath(id), Background: opts.Background, OutputComplete: true,
		},
		TmuxServer:     opts.Server,
		WaiterPID:      opts.WaiterPID,
		CallerPane:     string(callerPane),
		EndMarker:      "qtask-end:" + id + ":" + marker,
		OutputMaxBytes: opts.OutputMaxBytes,
		KeepFullScreen: opts.KeepFullScreen,
		KeepFailedPane: opts.KeepFailedPane,
		KeepRawOutput:  opts.KeepRawOutput,
		StatusFormat:   opts.StatusFormat,
	}, nil
}

// openedWindow is what openWindow got from tmux: the task's pane and its
// wrapper's pid, or why there is no window.
type openedWindow struct {
	pane    tmux.PaneID
	wrapper int
	err     error
}

// openWindow opens the task's window running its wrapper: in the caller's
// session for a foreground run beside the caller, else in opts.Session.
func (s *Store) openWindow(ctx context.Context, r *record, opts StartOptions, meanwhile func()) openedWindow {
	panes := s.panes(opts.Server)
	var callerSession tmux.SessionID
	if !opts.Background && !opts.WindowInSession && r.CallerPane != "" {
		// A caller pane that cannot be described (closed already) just
		// means the window goes to the background session instead.
		callerSession, _ = panes.SessionOf(ctx, tmux.PaneID(r.CallerPane))
	}
	pane, wrapper, err := panes.StartWindow(ctx, tmux.WindowSpec{
		SessionID: callerSession,
		Session:   opts.Session,
		Name:      windowName(r, opts.AgentCommand),
		Dir:       opts.Cwd,
		Argv:      s.helperArgv(opts.Self, ExecVerb, r.ID),
		Env:       []string{wrapperGOMAXPROCS},
		Meanwhile: meanwhile,
	})
	if err != nil {
		err = fmt.Errorf("start task window: %w", err)
	}
	return openedWindow{pane: pane, wrapper: wrapper, err: err}
}

// startPruneDue is the cheap half of the check every start makes
// (AutoPrune), counting the task being started, whose record is not saved
// yet. A count that fails is a warning: the task starts either way.
func (s *Store) startPruneDue(keep int) bool {
	due, err := s.pruneDue(keep, 1)
	s.warnAll(pruneWarnings(nil, err))
	return due
}

// wrapperProgram is the program that lives as long as a task, its wrapper
// (`_exec`) or an adopted pane's capture (`_capture`): qtask-exec, when it is
// installed beside qtask (it links only what those need, so each running
// task costs less memory), else qtask itself, which has both commands too.
func wrapperProgram(self string) string {
	small := filepath.Join(filepath.Dir(self), "qtask-exec")
	if fi, err := os.Stat(small); err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0 {
		return small
	}
	return self
}

// wrapperGOMAXPROCS starts the wrapper, one per running task, on one P:
// every further P costs memory of its own (measured with bench/memory.sh:
// about 0.35 MB of the wrapper's 1.4 MB private memory), and most tasks
// print little. A task that prints a lot gets the CPUs back (capture.Pane).
// It must be set before the runtime starts, hence in the pane's
// environment; the command itself gets the caller's environment (see
// taskEnv), not the pane's.
const wrapperGOMAXPROCS = "GOMAXPROCS=1"

// resolveStart checks the request before anything is created and returns
// the shell's absolute path.
func resolveStart(opts *StartOptions) (string, error) {
	if err := CheckCommand(opts.Command, ""); err != nil {
		return "", err
	}
	if err := CheckName(opts.Name); err != nil {
		return "", err
	}
	if !filepath.IsAbs(opts.Cwd) {
		return "", &ArgumentError{Msg: fmt.Sprintf("working directory %q is not absolute", opts.Cwd)}
	}
	fi, err := os.Stat(opts.Cwd)
	if err != nil || !fi.IsDir() {
		return "", &ArgumentError{Msg: fmt.Sprintf("working directory %q does not exist or is not a directory: give an existing one", opts.Cwd)}
	}
	shell, err := exec.LookPath(opts.Shell)
	if err != nil {
		return "", &InputError{Msg: fmt.Sprintf("shell %q not found: install it or set \"shell\" in the qtask config", opts.Shell)}
	}
	if opts.Self == "" {
		return "", errors.New("cannot locate the qtask binary to run in the task's pane")
	}
	return shell, nil
}

// AbsDir is dir taken against base (the caller's working directory)
// unless it is absolute: where a task asked to run in dir runs.
func AbsDir(base, dir string) string {
	if filepath.IsAbs(dir) {
		return filepath.Clean(dir)
	}
	return filepath.Join(base, dir)
}

// windowName is what the human sees in the qtask session's window list:
// the task's name, else its id — and for an agent's command, also the
// start of the command: "3f9a1c02 npm test".
func windowName(r *record, agentCommand bool) string {
	if r.Name != "" {
		return r.Name
	}
	if !agentCommand {
		return r.ID
	}
	return r.ID + " " + tmux.WindowLabel(r.Command, 32)
}
