package tasks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
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

// pushStatus sets StatusOption to the current counts, in the task's status
// format, on every server that shows the segment: each where the plugin
// loaded (RefreshStatus), whichever server the task runs on, and the task's
// own. Callers have changed the counts already (under the state lock, with
// the record); the push itself holds only the push lock (a tmux call must
// not hold up every other transition), which serializes pushes so that the
// last one made read the last counts. A server that is gone or refuses is
// not the task's problem: errors are dropped.
func (s *Store) pushStatus(r *record) {
	if r.StatusFormat == "" {
		return
	}
	var own []tmux.Server
	if server, err := r.server(); err == nil {
		own = append(own, server)
	}
	s.pushStatusTo(own, r.StatusFormat, nil)
}

// pushedName is the file, in the counts directory, where pushes keep the
// servers that show the segment and what the last push set on each.
const pushedName = ".pushed"

// pushedServer is one server's entry in pushedName, keyed by
// tmux.Server.String (its socket path).
type pushedServer struct {
	// Shows: the plugin loaded on this server (RefreshStatus), so every
	// push goes to it, whichever server the task that changed the counts
	// runs on. A server whose socket is gone, or that answers that it is
	// not running, is dropped.
	Shows bool `json:"shows,omitempty"`
	// Run and Value are the memo: the push to the server's run Run (its
	// tmux.Server.Incarnation) set Value. Run "" is no memo.
	Run   string `json:"run,omitempty"`
	Value string `json:"value,omitempty"`
}

// pushStatusTo sets the status segment on the servers that show it (see
// pushedServer) and on own, each unless the last push set this very value
// on this run of it: most task ends leave the segment as it was (a quick
// task that was never counted on it, a completed one among others), and a
// tmux call costs the server more than the task's whole bookkeeping. A
// server started again on the same socket has lost the option and gets it
// again. refresh, if set, is a server the plugin has just loaded on: it is
// added to those that show the segment and set whatever the memo says; its
// error is returned.
func (s *Store) pushStatusTo(own []tmux.Server, format string, refresh *tmux.Server) error {
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
	// The file below is written by path (see lock).
	if err := s.checkRoot(); err != nil {
		return err
	}
	counts, err := s.Counts()
	if err != nil {
		return err
	}
	value := FormatStatus(format, counts)
	path := filepath.Join(s.countsDir(""), pushedName)
	pushed := map[string]pushedServer{}
	if data, err := readOwnFile(path); err == nil {
		json.Unmarshal(data, &pushed) // unreadable: no memo, one push more
	}
	servers := map[string]tmux.Server{}
	for key, p := range pushed {
		if server, err := tmux.ParseServer(key); err == nil && p.Shows {
			servers[key] = server
		}
	}
	for _, server := range own {
		servers[server.String()] = server
	}
	if refresh != nil {
		servers[refresh.String()] = *refresh
		pushed[refresh.String()] = pushedServer{Shows: true}
	}
	type push struct {
		key    string
		server tmux.Server
		run    string
	}
	var pushes []push
	changed := refresh != nil
	for key, server := range servers {
		p, run := pushed[key], server.Incarnation()
		switch {
		case run == "" && p.Shows:
			delete(pushed, key) // its socket is gone: so is the server
			changed = true
		case run != "" && p.Run == run && p.Value == value:
		default:
			pushes = append(pushes, push{key, server, run})
			if p.Run != "" {
				p.Run, p.Value = "", ""
				pushed[key], changed = p, true
			}
		}
	}
	if !changed && len(pushes) == 0 {
		return nil
	}
	// The memos of the servers about to be set go before they are set: a
	// file that cannot be written after the sets, or a push that dies
	// between the two, then costs one push more, never one less.
	if changed {
		writePushed(path, pushed)
	}
	// The servers are set at once: a second server costs the push hardly
	// more than one, and a hung one no more than its timeout.
	errs := make([]error, len(pushes))
	ctx, cancel := context.WithTimeout(context.Background(), statusPushTimeout)
	var wg sync.WaitGroup
	for i, p := range pushes {
		wg.Go(func() { errs[i] = p.server.SetGlobalOption(ctx, StatusOption, value) })
	}
	wg.Wait()
	cancel()
	var refreshErr error
	for i, p := range pushes {
		entry := pushed[p.key]
		switch err := errs[i]; {
		case errors.Is(err, tmux.ErrNoServer):
			delete(pushed, p.key)
		case err == nil && p.run != "":
			entry.Run, entry.Value = p.run, value
			pushed[p.key] = entry
		}
		if refresh != nil && p.key == refresh.String() {
			refreshErr = errs[i]
		}
	}
	writePushed(path, pushed) // under the push lock: no other push meanwhile
	return refreshErr
}

// writePushed writes pushedName, keeping only what a later push needs: the
// servers that show the segment, and the memos.
func writePushed(path string, pushed map[string]pushedServer) {
	for key, p := range pushed {
		if !p.Shows && p.Run == "" {
			delete(pushed, key)
		}
	}
	if data, err := json.Marshal(pushed); err == nil {
		writeFileAtomic(path, data)
	}
}

// RefreshStatus sets the status segment on server from the counts as they
// are, for the plugin's load: always, whatever the last push set. From then
// on every push goes to server too, while it runs.
func (s *Store) RefreshStatus(server tmux.Server, format string) error {
	return s.pushStatusTo([]tmux.Server{server}, format, &server)
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

// EndNotifyTimeOption is the tmux user option saying how long, in
// milliseconds, the end message stays on the status line (0: until a key
// is pressed). Unset or not a number: DefaultEndNotifyTime. tmux's own
// display-time, 750 ms by default, is easily missed.
const EndNotifyTimeOption = "@qtask-notify-time"

// DefaultEndNotifyTime is how long the end message shows by default.
const DefaultEndNotifyTime = 4 * time.Second

// endNotifyTime reads EndNotifyTimeOption's value.
func endNotifyTime(value string) time.Duration {
	ms, err := strconv.Atoi(strings.TrimSpace(value))
	if err != nil || ms < 0 {
		return DefaultEndNotifyTime
	}
	return time.Duration(ms) * time.Millisecond
}

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
	if len(clients) == 0 {
		return
	}
	shown, _ := server.GlobalOption(ctx, EndNotifyTimeOption)
	for _, c := range clients {
		server.MessageFor(ctx, c, text, endNotifyTime(shown))
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
