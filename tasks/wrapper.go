package tasks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/signal"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/qtask/qtask/tasks/capture"
	"github.com/qtask/qtask/tasks/monitor"
	"github.com/qtask/qtask/tasks/output"
	"github.com/qtask/qtask/tasks/procs"
	"github.com/qtask/qtask/tasks/statefs"
	"github.com/qtask/qtask/tasks/taskid"
	"github.com/qtask/qtask/tmux"
)

// ExecOptions describes the pane the wrapper finds itself in.
type ExecOptions struct {
	ID      string
	Server  tmux.Server // the server of this pane ($TMUX)
	TmuxEnv string      // $TMUX as tmux set it, passed on to the command
	Term    string      // $TERM as tmux set it, for a command whose caller had none
	Pane    tmux.PaneID // $TMUX_PANE
	TTY     *os.File    // the pane's terminal (stdin)
	Out     *os.File    // the pane's terminal (stdout)
}

// How long an adopted pane's prompt hook waits for `qtask _capture` to
// acknowledge the end marker. Past it the task settles anyway, its output
// marked incomplete: a dead capture must not keep a task running forever.
const captureAckTimeout = 5 * time.Second

// Exec is `qtask _exec ID`, the first process of a task's pane. It attaches
// the capture (capture.Pane: the pane's output comes back to this process
// through the pane's pipe) before the command can print a byte, runs the command in its
// own process group in the terminal's foreground (so Ctrl+C in the pane
// reaches it, and `stop` can signal the whole group), forwards signals, and
// records the exit status itself: tmux's pane-died is a hint, not the truth.
// It returns the wrapper's own exit status.
func (s *Store) Exec(ctx context.Context, opts ExecOptions) int {
	r, sp, pc, ok := s.prepareExec(opts)
	if !ok {
		return 1
	}
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGHUP, syscall.SIGTERM, syscall.SIGINT, syscall.SIGQUIT)
	defer signal.Stop(sigs)

	// Everything the command starts is the task's, whatever group or
	// session it moves to: as their subreaper the wrapper gets back the
	// orphans (a `setsid` daemon, a `set -m` job whose shell ended), so a
	// stop and the end find them (strays), and reaps them (ReapOrphans).
	unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
	pid, err := procs.StartCommand(procs.Command{
		Shell: sp.Shell, Script: sp.Command, Dir: sp.Cwd, Env: taskEnv(sp.Env, opts), TTY: opts.TTY, Out: opts.Out,
	})
	if err != nil {
		fmt.Fprintf(opts.Out, "qtask: cannot start %s: %v\n", sp.Shell, err)
		s.finishExec(r, pc, nil, opts, false, outcome{status: StatusFailed, reason: "spawn error: " + err.Error()})
		return 1
	}
	// Now in the background of our own terminal: writing the end marker
	// must not stop us if the user's terminal has tostop set.
	signal.Ignore(syscall.SIGTTOU, syscall.SIGTTIN)
	go procs.ReapOrphans(pid)
	if err := s.claimGroup(r, opts, pid); err != nil {
		// Untracked, the command could neither be stopped nor told apart
		// from a lost one: end it now rather than let it run unseen.
		fmt.Fprintf(opts.Out, "qtask: %v\n", err)
		procs.KillLeftovers(r.procTask(), 0)
		procs.WaitCommand(pid)
		s.finishExec(r, pc, nil, opts, false, outcome{status: StatusFailed, reason: "spawn error: cannot record the task's pid: " + err.Error()})
		return 1
	}
	// The status segment counts it once it has run for startPushDelay:
	// the wrapper pays for the tmux call, not the `qtask run` that waits
	// for the start, and in the background, so that waiting for the push
	// lock behind other tasks' pushes never delays watching the command
	// (and so its end). A command that ends sooner is counted by its end's
	// push alone. Pushes read the counts under the push lock, so whichever
	// lands last, start or end, is exact.
	announce := time.AfterFunc(startPushDelay, func() { s.announceStart(r) })
	ev := s.startEvents(r, sp.Monitor, sp.StopGrace)

	var hup atomic.Bool
	go procs.ForwardSignals(sigs, r.procTask(), sp.StopGrace, &hup)
	// The SIGHUP reaches ForwardSignals through a channel, and a command
	// that ends by itself on its terminal's error (tee) may be waited for
	// before it is handled; the terminal itself already says it hung up.
	paneClosed := func() bool { return hup.Load() || procs.HungUp(opts.TTY) }

	o, ok := s.awaitCommand(pid, r, sp.StopGrace, paneClosed, func() { announce.Stop() })
	final := s.finishExec(r, pc, ev, opts, paneClosed(), o)
	if !ok || final == nil || final.ExitCode == nil {
		return 1
	}
	return *final.ExitCode & 0xff
}

// prepareExec gathers what the command needs before it may start: the
// record, the spec (deleted as it is read) and the pane's capture. A failure
// is printed in the pane and, once the task's record exists, settles the
// task, so that no caller waits on a command that never ran.
func (s *Store) prepareExec(opts ExecOptions) (*record, *spec, *capture.Pane, bool) {
	// `qtask run` writes the spec while tmux opens this window and the
	// record once tmux has answered: the record comes last.
	r, err := s.awaitRecord(opts.ID)
	if err != nil {
		// The start failed half-way; its spec holds the caller's
		// environment, which must not stay behind.
		os.Remove(s.specPath(opts.ID))
		fmt.Fprintf(opts.Out, "qtask: %v\n", err)
		return nil, nil, nil, false
	}
	if r.WrapperPID != os.Getpid() {
		// Start names the window's wrapper in the first record it saves.
		// Another one: two starts picked this id at once and the other
		// claimed it (claimID); its spec is not ours to take, and our
		// start closes this window.
		fmt.Fprintf(opts.Out, "qtask: task %s is another window's (its wrapper is pid %d); this start failed\n", opts.ID, r.WrapperPID)
		return nil, nil, nil, false
	}
	sp, err := s.takeSpec(opts.ID)
	if err != nil {
		fmt.Fprintf(opts.Out, "qtask: %v\n", err)
		// The wrapper's own settle: it waits for the lock as long as it takes.
		s.settle(context.Background(), opts.ID, outcome{status: StatusFailed, reason: "spawn error: " + err.Error()})
		return nil, nil, nil, false
	}
	pc, err := capture.Start(s.outputFile(r), capture.PaneOptions{
		Server: s.panes(opts.Server), Pane: opts.Pane, TTY: opts.Out,
		Display: sp.Display, DisplayDir: s.tasksDir(), Mode: capture.ModeOf(sp.Env), Alive: procs.Runs,
	})
	if err != nil {
		fmt.Fprintf(opts.Out, "qtask: cannot capture output: %v\n", err)
		// The wrapper's own settle: it waits for the lock as long as it takes.
		s.settle(context.Background(), opts.ID, outcome{status: StatusFailed, reason: "spawn error: cannot capture output: " + err.Error()})
		return nil, nil, nil, false
	}
	return r, sp, pc, true
}

// claimGroup records the claim: what proves, later, that the command's
// group pgid is this task's (procs.ProveGroup) — its leader's start time and our
// session. r gets it too, for the wrapper's own signals.
func (s *Store) claimGroup(r *record, opts ExecOptions, pgid int) error {
	me, _ := procs.ReadStat(os.Getpid())
	claim := func(r *record) error {
		r.PID, r.WrapperPID, r.PaneID = pgid, os.Getpid(), string(opts.Pane)
		r.WrapperStart, r.Session, r.CommandStart = me.StartTime, me.Session, procs.StartTime(pgid)
		return nil
	}
	claim(r)
	// The wrapper's own write: it waits for the lock as long as it takes.
	_, err := s.update(context.Background(), opts.ID, claim)
	return err
}

// awaitCommand waits for the command to exit and says how the task ended:
// by its exit status, by a stop that came first, or lost with its pane. It
// reports false if the exit status could not be read at all. exited runs
// as soon as the command has exited, before what it left in its group is
// waited out.
func (s *Store) awaitCommand(pid int, r *record, grace time.Duration, paneClosed func() bool, exited func()) (outcome, bool) {
	ws, err := procs.WaitCommand(pid)
	exited()
	if err != nil {
		return outcome{status: StatusFailed, reason: "lost: " + err.Error()}, false
	}
	o := exitOutcome(ws)
	// The wrapper's own write: it waits for the lock as long as it takes.
	cur, err := s.noteExit(context.Background(), r.ID, o)
	stopped := err == nil && cur.StopRequestedAt != nil
	// The command is gone; whatever it left behind, in its group or out of
	// it, goes too, so "completed" never means "still running underneath".
	procs.KillLeftovers(r.procTask(), grace)

	if stopped {
		o = cur.stopOutcome(o)
	} else if paneClosed() {
		o.status, o.reason = paneClosedOutcome(r.TmuxServer)
	}
	return o, true
}

// windowKilled is the reason of a task whose window was closed by hand
// (prefix &, kill-window, prefix x on its pane): a stop the person asked
// for, not a failure of the task.
const windowKilled = "window killed"

// paneClosedOutcome says how a task whose pane went away while it ran has
// ended: cancelled when someone closed its window, its tmux server still
// running; failed (lost) when the server went too (`kill-server`, a
// crash, or the last pane closed): a task of a dead server is not one
// anyone closed by hand. A server whose last window was closed exits a
// moment after the pane's SIGHUP: it is asked twice, serverExitGrace
// apart, so the answer does not depend on how quickly this ran.
func paneClosedOutcome(server tmux.Server) (Status, string) {
	gone := func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_, err := server.PID(ctx)
		return errors.Is(err, tmux.ErrNoServer)
	}
	if !gone() {
		time.Sleep(serverExitGrace)
		if !gone() {
			return StatusCancelled, windowKilled
		}
	}
	return StatusFailed, "lost: the task's tmux pane was closed while it ran, and its tmux server is gone"
}

// serverExitGrace is how long a tmux server that has lost its last session
// may take to exit (tmux 3.3a exits on the next turn of its event loop).
const serverExitGrace = 100 * time.Millisecond

// noteExit records that the command exited, and with what code, before the
// wrapper (or an adopted command's prompt hook) waits for the output: a
// promote or a stop arriving from now on reports the end instead of
// releasing the caller with "promoted" or turning it into "cancelled". It
// is written under the lock under which
// stop signals and records its request, so the record it returns says
// whether a stop came first (and its signal may be why the command ended).
// A failure to write is left to settle to report; promote then still sees
// the command's pid gone.
func (s *Store) noteExit(ctx context.Context, id string, o outcome) (*record, error) {
	return s.update(ctx, id, func(r *record) error {
		now := time.Now().UTC()
		r.ExitedAt, r.ExitedCode = &now, o.exitCode
		return nil
	})
}

// finishExec waits for the capture to have everything the command printed
// in the output file (and a monitor's events for it to be queued), then
// settles the task. The order is the point: whoever sees the task end can
// read its last line, and has had its last event.
// Writing the last output and the settle share one settleRetryMax.
func (s *Store) finishExec(r *record, c *capture.Pane, ev *monitor.Events, opts ExecOptions, paneClosed bool, o outcome) *record {
	until := time.Now().Add(settleRetryMax)
	o.outputLoss = c.Finish(paneClosed, until, procs.AnnounceSettling)
	ev.Finish()
	if o.status == StatusCompleted && o.reason == "" {
		o.reason = s.sourceEnd(ev.Source())
	}
	if r.KeepFailedPane && o.status == StatusFailed && !paneClosed {
		o.paneKept = keepPane(opts)
	}
	// The wrapper's own settle: it waits for the lock as long as it takes.
	final := s.settleEnd(context.Background(), r, opts.Out, o, time.Until(until))
	switch {
	case o.paneKept && (final == nil || !final.PaneKept):
		releasePane(opts) // the end was another's (a stop, a monitor's own): not kept
	case o.paneKept:
		// The capture's pipe is closed (keepPane): the note is the pane's,
		// not the output file's.
		fmt.Fprintf(opts.Out, "\r\n\x1b[7m%s\x1b[0m\r\n", keptPaneNote(r, o))
	}
	return final
}

// awaitAck prints the end marker into an adopted pane and waits for its
// `qtask _capture` to confirm the output file holds everything up to it. It
// returns what may be lost if no confirmation came.
func (s *Store) awaitAck(r *record, tty io.Writer) string {
	fmt.Fprintf(tty, "\x1b]%s\a", r.EndMarker)
	// Woken by the record's change, not a poll: the capture sets
	// OutputAcked in it.
	acked := func(cur *record) bool { return cur.OutputAcked }
	cur, err := s.waitFor(context.Background(), r.ID, captureAckTimeout, acked)
	if err != nil || acked(cur) {
		return ""
	}
	return fmt.Sprintf("the capture did not confirm the end of the output within %v", captureAckTimeout)
}

// settleEnd settles a task whose command has ended and whose output is in,
// retrying a failed write for as long as patience (see settleLate).
func (s *Store) settleEnd(ctx context.Context, r *record, out io.Writer, o outcome, patience time.Duration) *record {
	if o.exitCode != nil && (*o.exitCode == 126 || *o.exitCode == 127) && o.status == StatusFailed {
		// The shell could not run the command; its last words say why.
		if why := output.LastLine(r.OutputPath, 200); why != "" {
			o.reason += ": " + why
		}
	}
	final, err := s.settleLate(ctx, r.ID, o, patience)
	if err != nil {
		fmt.Fprintf(out, "qtask: %v\n", err)
	}
	return final
}

// recordWait bounds how long the wrapper waits for `qtask run` to write the
// task's record after tmux started the window. A variable only so that the
// package's tests can run out of it in milliseconds.
var recordWait = 10 * time.Second

// awaitRecord waits for the record Start writes once tmux has answered.
// It is usually there by the wrapper's first look; otherwise the store's
// watch wakes the wrapper (polling its first moments, file events after).
func (s *Store) awaitRecord(id string) (*record, error) {
	r, err := s.load(id)
	if err == nil || !errors.Is(err, taskid.ErrNotFound) {
		return r, err
	}
	w := s.watch([]string{id}, false)
	defer w.Close()
	deadline := time.NewTimer(recordWait)
	defer deadline.Stop()
	for {
		select {
		case <-w.C:
		case <-deadline.C:
			return s.load(id)
		}
		r, err := s.load(id)
		if err == nil || !errors.Is(err, taskid.ErrNotFound) {
			return r, err
		}
	}
}

// takeSpec reads the task's spec and deletes it: it holds the caller's
// environment, which must not outlive the start of the command. Only a
// regular file of the effective user's is run: a spec swapped by another
// user (or a symlink to one) would run their command as us.
func (s *Store) takeSpec(id string) (*spec, error) {
	path := s.specPath(id)
	data, err := statefs.ReadOwn(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("task %s has no start spec (was it started twice?)", id)
	}
	if err != nil {
		return nil, fmt.Errorf("refusing task spec %s: %w", path, err)
	}
	s.spendSpec(id)
	var sp spec
	if err := json.Unmarshal(data, &sp); err != nil {
		return nil, fmt.Errorf("task spec %s is corrupt: %w", path, err)
	}
	return &sp, nil
}

// spendSpec empties the spec the wrapper has read (the caller's
// environment must not outlive the start of the command) and keeps its
// inode as the record's spare (see save) rather than freeing it.
func (s *Store) spendSpec(id string) {
	path := s.specPath(id)
	f, err := os.OpenFile(path, os.O_WRONLY|syscall.O_NOFOLLOW, 0)
	if err == nil {
		err = f.Truncate(0)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err == nil {
		err = os.Rename(path, s.sparePath(id))
	}
	if err != nil {
		os.Remove(path)
	}
}

// taskEnv is the caller's environment, corrected for where the command
// really runs: inside a tmux pane, as a qtask task.
func taskEnv(callerEnv []string, opts ExecOptions) []string {
	env := make([]string, 0, len(callerEnv)+4)
	term := ""
	for _, kv := range callerEnv {
		name, value, _ := strings.Cut(kv, "=")
		switch name {
		case "TMUX", "TMUX_PANE", procs.TaskIDEnv:
			continue
		case "TERM":
			term = value
			continue
		}
		env = append(env, kv)
	}
	if opts.TmuxEnv != "" {
		env = append(env, "TMUX="+opts.TmuxEnv)
	}
	// The command runs on a terminal, its pane, whatever the caller ran
	// on: a caller without TERM (cron, env -i) would leave less, top or
	// tput with none. The caller's own TERM is kept.
	if term == "" {
		term = opts.Term
	}
	if term != "" {
		env = append(env, "TERM="+term)
	}
	return append(env, "TMUX_PANE="+string(opts.Pane), procs.TaskIDEnv+"="+opts.ID)
}
