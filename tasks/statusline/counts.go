package statusline

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/qtask/qtask/tasks/statefs"
)

// Line is the status segment of one state directory.
type Line struct{ dir *statefs.Root }

// New is the status segment kept in dir, the state directory its store
// checked and holds open: every file is reached through it, never through
// a symlink, with its modes (files 0600, directories 0700).
func New(dir *statefs.Root) Line { return Line{dir} }

// The counts directories, each holding one marker per counted task.
const (
	countRunning = "running"
	countUnseen  = "unseen"
)

// countsName is kind's counts directory relative to the state directory
// ("counts" itself for "").
func countsName(kind string) string { return filepath.Join("counts", kind) }

// Counts are what the status segment shows.
type Counts struct {
	Running int // tasks running, foreground or background
	Failed  int // failed background tasks not yet viewed or removed
}

// Counts reads the counts.
func (l Line) Counts() (Counts, error) {
	running, err := l.counted(countRunning)
	if err != nil {
		return Counts{}, err
	}
	failed, err := l.counted(countUnseen)
	return Counts{Running: len(running), Failed: len(failed)}, err
}

// Running are the ids counted as running: the running tasks, found
// without reading every record (a task whose marker could not be written
// is missing).
func (l Line) Running() ([]string, error) { return l.counted(countRunning) }

// counted are the ids with a marker in kind's directory.
func (l Line) counted(kind string) ([]string, error) {
	names, err := l.dir.Names(countsName(kind))
	if err != nil {
		return nil, fmt.Errorf("read status counts: %w", err)
	}
	ids := names[:0]
	for _, name := range names {
		if !strings.HasPrefix(name, ".") {
			ids = append(ids, name)
		}
	}
	return ids, nil
}

// Start counts id as running. The caller does it before the task can run,
// let alone end (End), so a quick task never leaves its marker behind.
func (l Line) Start(id string) { l.set(countRunning, id, true) }

// Unstart takes back Start, for a start that failed.
func (l Line) Unstart(id string) { l.set(countRunning, id, false) }

// End moves a task that has just ended out of the running count and, if
// unseenFailure (it failed in the background: nobody watched it fail), into
// the failed count.
func (l Line) End(id string, unseenFailure bool) {
	l.set(countRunning, id, false)
	if unseenFailure {
		l.set(countUnseen, id, true)
	}
}

// Forget drops a removed task from every count.
func (l Line) Forget(id string) {
	l.set(countRunning, id, false)
	l.set(countUnseen, id, false)
}

// Unseen says whether id is counted as a failure nobody has looked at:
// one lstat, so that looking at a task that is not costs nothing more.
func (l Line) Unseen(id string) bool {
	return l.dir.Exists(filepath.Join(countsName(countUnseen), id))
}

// See drops id from the failed count: someone looked at it.
func (l Line) See(id string) { l.set(countUnseen, id, false) }

// set creates (on) or removes the marker of id in kind's directory.
// Markers only ever count; failing to write one must not fail the task, so
// errors are dropped (the next change that succeeds is exact again).
func (l Line) set(kind, id string, on bool) {
	rel := filepath.Join(countsName(kind), id)
	if !on {
		l.dir.Remove(rel)
		return
	}
	if l.dir.Mkdir(countsName("")) != nil || l.dir.Mkdir(countsName(kind)) != nil {
		return
	}
	l.mark(rel)
}

// mark puts a count marker at rel: a hard link to one shared empty file
// rather than a file of its own, because a link allocates no inode, and on
// ext4 without a journal every new inode is found by scanning past each
// inode freed in the last minutes — about 0.35 ms a file in a busy /tmp
// (docs/BENCHMARKS.md, run-bg), on the path of every `run --bg`. Where a
// link cannot be made, the marker is a file.
func (l Line) mark(rel string) {
	shared := filepath.Join(countsName(""), ".marker")
	err := l.dir.Link(shared, rel)
	if errors.Is(err, unix.ENOENT) {
		if f, cerr := l.dir.OpenFile(shared, os.O_CREATE|os.O_EXCL|os.O_WRONLY); cerr == nil {
			f.Close()
		}
		err = l.dir.Link(shared, rel)
	}
	if err == nil || errors.Is(err, unix.EEXIST) {
		return
	}
	if f, err := l.dir.OpenFile(rel, os.O_CREATE|os.O_WRONLY); err == nil {
		f.Close()
	}
}

// Format renders a status format: {running} and {failed} are replaced by
// the counts, and each space-separated part that names a count is left out
// when all the counts it names are zero. Idle is "".
func Format(format string, c Counts) string {
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
