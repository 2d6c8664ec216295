package tasks

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unicode"

	"golang.org/x/sys/unix"

	"github.com/qtask/qtask/tmux"
)

// The status line counts running tasks and failed background tasks nobody
// has looked at yet. It must cost next to nothing (tmux may run
// `qtask status-line` every second, and every start and end updates it),
// so the counts are not derived from the records: each counted task has an
// empty marker file, counts/running/ID or counts/unseen/ID, created and
// removed in the same steps that change the record, and a count is one
// read of a small directory.
const (
	countRunning = "running"
	countUnseen  = "unseen"
)

// StatusOption is the tmux user option qtask keeps the status segment in,
// for `#{@qtask_status}` in status-right: free for tmux to show at every
// refresh, unlike a `#()` command.
const StatusOption = "@qtask_status"

// statusPushTimeout bounds each tmux call that updates StatusOption or
// tells clients a task ended.
const statusPushTimeout = 2 * time.Second

// StatusCounts are what the status line shows.
type StatusCounts struct {
	Running int // tasks running, foreground or background
	Failed  int // failed background tasks not yet viewed or removed
}

func (s *Store) countsDir(kind string) string { return filepath.Join(s.dir, countsName(kind)) }

// countsName is kind's counts directory relative to the state directory
// ("counts" itself for ""): the wrapper creates the markers through the
// state directory's descriptor (see openAt).
func countsName(kind string) string { return filepath.Join("counts", kind) }

// Counts reads the status line's counts.
func (s *Store) Counts() (StatusCounts, error) {
	running, err := countEntries(s.countsDir(countRunning))
	if err != nil {
		return StatusCounts{}, err
	}
	failed, err := countEntries(s.countsDir(countUnseen))
	return StatusCounts{Running: running, Failed: failed}, err
}

func countEntries(dir string) (int, error) {
	ids, err := countedIDs(dir)
	return len(ids), err
}

// countedIDs are the ids with a marker in a counts directory.
func countedIDs(dir string) ([]string, error) {
	ids, err := namesIn(dir, func(name string) bool { return !strings.HasPrefix(name, ".") })
	if err != nil {
		return nil, fmt.Errorf("read status counts: %w", err)
	}
	return ids, nil
}

// setCount creates (on) or removes the marker of id in kind's directory.
// Markers only ever count; failing to write one must not fail the task, so
// errors are dropped (the next change that succeeds is exact again).
func (s *Store) setCount(kind, id string, on bool) {
	rel := filepath.Join(countsName(kind), id)
	if !on {
		dirfd, name := s.at(rel)
		unix.Unlinkat(dirfd, name, 0)
		runtime.KeepAlive(s.root)
		return
	}
	if s.mkdirAt(countsName("")) != nil || s.mkdirAt(countsName(kind)) != nil {
		return
	}
	s.markCount(rel)
}

// markCount puts a count marker at rel: a hard link to one shared empty
// file rather than a file of its own, because a link allocates no inode,
// and on ext4 without a journal every new inode is found by scanning past
// each inode freed in the last minutes — about 0.35 ms a file in a busy
// /tmp (docs/BENCHMARKS.md, run-bg), on the path of every `run --bg`.
// Where a link cannot be made, the marker is a file.
func (s *Store) markCount(rel string) {
	defer runtime.KeepAlive(s.root)
	shared := filepath.Join(countsName(""), ".marker")
	dirfd, sharedName := s.at(shared)
	_, name := s.at(rel)
	err := unix.Linkat(dirfd, sharedName, dirfd, name, 0)
	if errors.Is(err, unix.ENOENT) {
		if f, cerr := s.openAt(shared, os.O_CREATE|os.O_EXCL|os.O_WRONLY, fileMode); cerr == nil {
			f.Close()
		}
		err = unix.Linkat(dirfd, sharedName, dirfd, name, 0)
	}
	if err == nil || errors.Is(err, unix.EEXIST) {
		return
	}
	if f, err := s.openAt(rel, os.O_CREATE|os.O_WRONLY, fileMode); err == nil {
		f.Close()
	}
}

// countEnd moves a task that has just ended out of the running count and,
// if it failed in the background (nobody watched it fail), into the unseen
// count. The caller holds the lock.
func (s *Store) countEnd(r *record) {
	s.setCount(countRunning, r.ID, false)
	if r.Status == StatusFailed && r.Background {
		s.setCount(countUnseen, r.ID, true)
	}
}

// forgetCounts drops a removed task from every count.
func (s *Store) forgetCounts(id string) {
	s.setCount(countRunning, id, false)
	s.setCount(countUnseen, id, false)
}

// MarkSeen records that someone looked at the task (its status, its log,
// its pane): a failure seen is no longer counted on the status line.
func (s *Store) MarkSeen(t *Task) error {
	path := filepath.Join(s.countsDir(countUnseen), t.ID)
	if _, err := os.Lstat(path); err != nil {
		return nil // not counted: nothing to change, no tmux call
	}
	r, err := s.load(t.ID)
	if err != nil {
		return err
	}
	s.setCount(countUnseen, t.ID, false)
	s.pushStatus(r)
	return nil
}

// pushStatus sets StatusOption on the task's server to the current counts
// in the task's status format. Callers have changed the counts already
// (under the state lock, with the record); the push itself holds only the
// push lock (a tmux call must not hold up every other transition), which
// serializes pushes so that the last one made read the last counts. A
// server that is gone or refuses is not the task's problem: errors are
// dropped.
func (s *Store) pushStatus(r *record) {
	server, err := r.server()
	if err != nil || r.StatusFormat == "" {
		return
	}
	s.pushStatusTo(server, r.StatusFormat, false)
}

// pushStatusTo sets the status segment on server, unless (force aside) the
// last push set this very value on this run of the server: most task ends
// leave the segment as it was (a quick task that was never counted on it,
// a completed one among others), and a tmux call costs the server more than
// the task's whole bookkeeping. The memo names the server's run by its
// socket (tmux.Server.Incarnation): a server started again on the same
// socket has lost the option and gets it again.
func (s *Store) pushStatusTo(server tmux.Server, format string, force bool) error {
	if err := s.mkdirAt(countsName("")); err != nil {
		return err
	}
	f, err := s.openAt(filepath.Join(countsName(""), ".push-lock"), os.O_CREATE|os.O_RDWR, fileMode)
	if err != nil {
		return fmt.Errorf("open status push lock: %w", err)
	}
	defer f.Close()
	if err := flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		return fmt.Errorf("lock status push: %w", err)
	}
	// The memo below is written by path (see lock).
	if err := s.checkRoot(); err != nil {
		return err
	}
	counts, err := s.Counts()
	if err != nil {
		return err
	}
	value := FormatStatus(format, counts)
	memoPath := filepath.Join(s.countsDir(""), ".pushed")
	memo := ""
	if run := server.Incarnation(); run != "" {
		memo = server.String() + "\n" + run + "\n" + value
	}
	if !force && memo != "" {
		if last, err := readOwnFile(memoPath); err == nil && string(last) == memo {
			return nil
		}
	}
	// The old memo goes before the option is set (removing takes no disk
	// space): a memo that cannot be written after the set, or a push that
	// dies between the two, then costs one push more, never one less.
	os.Remove(memoPath)
	ctx, cancel := context.WithTimeout(context.Background(), statusPushTimeout)
	defer cancel()
	if err := server.SetGlobalOption(ctx, StatusOption, value); err != nil || memo == "" {
		return err
	}
	writeFileAtomic(memoPath, []byte(memo)) // under the push lock: no other push meanwhile
	return nil
}

// RefreshStatus sets the status segment on server from the counts as they
// are, for the plugin's first load: always, whatever the last push set.
func (s *Store) RefreshStatus(server tmux.Server, format string) error {
	return s.pushStatusTo(server, format, true)
}

// FormatStatus renders a status format: {running} and {failed} are
// replaced by the counts, and each space-separated part that names a count
// is left out when all the counts it names are zero. Idle is "".
func FormatStatus(format string, c StatusCounts) string {
	values := map[string]int{"{running}": c.Running, "{failed}": c.Failed}
	var shown []string
	for _, part := range strings.Split(format, " ") {
		named, nonzero := false, false
		for name, v := range values {
			if strings.Contains(part, name) {
				named, nonzero = true, nonzero || v != 0
				part = strings.ReplaceAll(part, name, strconv.Itoa(v))
			}
		}
		if nonzero || !named && part != "" {
			shown = append(shown, part)
		}
	}
	if c.Running == 0 && c.Failed == 0 {
		return ""
	}
	return strings.Join(shown, " ")
}

// countStart adds a task about to start to the running count. It comes
// before the task can run, let alone end (countEnd), so a quick task never
// leaves its marker behind; a start that fails takes it back.
func (s *Store) countStart(id string) { s.setCount(countRunning, id, true) }

// startPushDelay is how long a task runs before the wrapper pushes the
// status segment for it. Agents and scripts start many commands that end
// within it; each such task costs one push (its end's) instead of two. A
// person does not see a count a fifth of a second late.
const startPushDelay = 200 * time.Millisecond

// announceStart updates the status segment for a task just started (the
// wrapper, once its command has run for startPushDelay; Adopt).
func (s *Store) announceStart(r *record) { s.pushStatus(r) }

// EndNotifyOption is the tmux user option saying how the people watching
// the session that started a background task hear that it ended:
// "message" (the default), "bell" or "off".
const EndNotifyOption = "@qtask-notify"

// The values of EndNotifyOption.
const (
	NotifyMessage = "message"
	NotifyBell    = "bell"
	NotifyOff     = "off"
)

// EventNotifyOption is the tmux user option that, set to "on", shows each
// event of a background monitor to the people watching the session that
// started it, as an end is shown: `⚑ tail -F app.log: ERROR disk full`.
// Off unless set: events can come once a second.
const EventNotifyOption = "@qtask-notify-events"

// tellClients tells the clients attached to the session a background task
// was started from that it ended: `✓ npm test 12s`, `✗ make exit 2`. Only
// those clients, never others; nothing for a foreground task (its caller
// was watching), a stop (whoever stopped it knows) or a task started
// outside tmux. Best effort: the task has ended whatever tmux says.
func tellClients(r *record) {
	if r.Status == StatusCancelled {
		return
	}
	tellSession(r, EndNotifyOption, NotifyMessage, endMessage(r))
}

// tellEvent shows monitor r's event line to the clients of the session it
// was started from, when EventNotifyOption is on.
func tellEvent(r *record, line string) {
	tellSession(r, EventNotifyOption, NotifyOff, "⚑ "+shortLabel(r.Label(), 30)+": "+shortLabel(line, 80))
}

// tellSession tells the clients attached to the session background task r
// was started from text, as tmux option says (a message, a bell, or
// nothing; fallback when it is unset).
func tellSession(r *record, option, fallback, text string) {
	if !r.Background || r.CallerPane == "" {
		return
	}
	server, err := r.server()
	if err != nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), statusPushTimeout)
	defer cancel()
	mode, err := server.GlobalOption(ctx, option)
	if mode == "" {
		mode = fallback
	}
	if err != nil || mode == NotifyOff {
		return
	}
	session, err := server.SessionOf(ctx, tmux.PaneID(r.CallerPane))
	if err != nil {
		return
	}
	if mode == NotifyBell {
		ttys, _ := server.ClientTTYs(ctx, session)
		for _, tty := range ttys {
			ringBell(tty)
		}
		return
	}
	clients, _ := server.SessionClients(ctx, session)
	for _, c := range clients {
		server.Message(ctx, c, text)
	}
}

// endMessage is the one line a client is shown when a task ends.
func endMessage(r *record) string {
	runtime := r.Runtime(time.Now()).Round(time.Second)
	label := shortLabel(r.Label(), 40)
	if r.Status == StatusCompleted {
		return fmt.Sprintf("✓ %s %s", label, runtime)
	}
	why := "failed"
	if r.ExitCode != nil {
		why = fmt.Sprintf("exit %d", *r.ExitCode)
	}
	return fmt.Sprintf("✗ %s %s %s — qtask status %s", label, why, runtime, r.ID)
}

// shortLabel makes a command or name safe and short for a status line:
// controls (including bidi ones) become spaces, and it is cut at width
// characters.
func shortLabel(s string, width int) string {
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r) {
			return ' '
		}
		return r
	}, s)
	if r := []rune(s); len(r) > width {
		return string(r[:width-1]) + "…"
	}
	return s
}

// ringBell writes BEL to a client's terminal, which rings it as the
// terminal is set to (tmux passes nothing else there).
func ringBell(tty string) {
	f, err := os.OpenFile(tty, os.O_WRONLY|syscall.O_NOCTTY|syscall.O_NONBLOCK|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return
	}
	f.Write([]byte{'\a'})
	f.Close()
}
