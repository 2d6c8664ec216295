package tasks

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/qtask/qtask/tasks/notify"
	"github.com/qtask/qtask/tasks/procs"
	rec "github.com/qtask/qtask/tasks/record"
	"github.com/qtask/qtask/tasks/statefs"
	"github.com/qtask/qtask/tasks/taskid"
	"github.com/qtask/qtask/tmux"
)

// Store is the state directory: one JSON record per task under tasks/, one
// output file per task under output/, and a lock file that serializes state
// transitions. Records are replaced atomically (temp file + rename), so a
// reader sees the old record or the new one, never half of one.
type Store struct {
	dir string
	// root is the state directory as OpenStore checked it, open: the lock
	// and the status counts are created through it (see statefs.Root).
	root *statefs.Root
	// warn, if set, is told what a reader could not do on the way (see
	// WithWarnings).
	warn func(string)
	// panesOf, if set, stands in for the tmux servers tasks live on (see
	// panes); procsOf for the machine's processes (see procs). Only an
	// option given to OpenStore sets them: tests' fakes.
	panesOf func(tmux.Server) Panes
	procsOf procs.Processes
	// queue is the notification queue, which the store writes under its
	// lock (see notify.go).
	queue *notify.Queue
}

// WithWarnings returns the store with warn told of what a read could not
// do on its way, such as settle a lost task on a full disk: the command
// goes on, but nothing is hidden. Each distinct warning is told once, so a
// `wait` that re-reads every second does not repeat itself.
func (s *Store) WithWarnings(warn func(string)) *Store {
	c := *s
	var mu sync.Mutex
	told := map[string]bool{}
	c.warn = func(msg string) {
		mu.Lock()
		first := !told[msg]
		told[msg] = true
		mu.Unlock()
		if first {
			warn(msg)
		}
	}
	return &c
}

func (s *Store) warnf(format string, a ...any) {
	if s.warn != nil {
		s.warn(fmt.Sprintf(format, a...))
	}
}

// warnAll passes on each of warnings, as warnf does one.
func (s *Store) warnAll(warnings []string) {
	for _, w := range warnings {
		s.warnf("%s", w)
	}
}

const fileMode = statefs.FileMode

// OpenStore opens the state directory, creating it (and any missing
// parents) 0700 when absent: records carry command lines and output that are
// nobody else's business. A directory that already exists is used as it is
// or refused, never changed (see statefs.OpenRoot). tasks/ and output/ are
// held to the same rules.
func OpenStore(dir string, opts ...option) (*Store, error) {
	return OpenStoreIn(dir, statefs.Home{}, opts...)
}

// option configures a store as OpenStore opens it: the seams through which
// the package's tests put fakes in place of tmux and of the machine's
// processes (see seams.go). Production code passes none.
type option func(*Store)

// withPanes makes of stand in for the tmux servers tasks live on.
func withPanes(of func(tmux.Server) Panes) option { return func(s *Store) { s.panesOf = of } }

// withProcesses makes p stand in for the machine's processes.
func withProcesses(p procs.Processes) option { return func(s *Store) { s.procsOf = p } }

// OpenStoreIn is OpenStore for a state directory that belongs inside home
// (see statefs.Home): when it is missing, it is created only if home exists.
func OpenStoreIn(dir string, home statefs.Home, opts ...option) (*Store, error) {
	root, err := statefs.OpenRoot(dir, home)
	if err != nil {
		return nil, err
	}
	s := &Store{dir: dir, root: root, queue: newQueue(dir)}
	for _, o := range opts {
		o(s)
	}
	for _, d := range []string{"tasks", "output"} {
		if err := root.EnsureDir(d); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// Dir is the state directory.
func (s *Store) Dir() string { return s.dir }

func (s *Store) tasksDir() string             { return filepath.Join(s.dir, "tasks") }
func (s *Store) outputDir() string            { return filepath.Join(s.dir, "output") }
func (s *Store) recordPath(id string) string  { return filepath.Join(s.tasksDir(), id+".json") }
func (s *Store) specPath(id string) string    { return filepath.Join(s.tasksDir(), id+".spec") }
func (s *Store) outputPath(id string) string  { return filepath.Join(s.outputDir(), id+".log") }
func isRecordName(name string) (string, bool) { return strings.CutSuffix(name, ".json") }

// reserveID picks a fresh id and claims it (claimID), so two concurrent
// starts can never share an id.
func (s *Store) reserveID() (string, error) {
	for range 16 {
		id, err := s.pickID()
		if err != nil {
			return "", err
		}
		err = s.claimID(id)
		if errors.Is(err, errIDTaken) {
			continue
		}
		if err != nil {
			return "", err
		}
		return id, nil
	}
	return "", errTakenIDs
}

var errTakenIDs = errors.New("could not find a free task id after 16 tries")

// pickID picks an id no task has (no output file of that name) without
// claiming it. Start claims it while tmux opens the window, off the path
// a start waits on: creating a file is a tenth of a millisecond or more.
func (s *Store) pickID() (string, error) {
	for range 16 {
		id, err := taskid.New()
		if err != nil {
			return "", err
		}
		if _, err := os.Lstat(s.outputPath(id)); errors.Is(err, fs.ErrNotExist) {
			return id, nil
		}
	}
	return "", errTakenIDs
}

// errIDTaken: another start claimed the id first; its files are not ours.
var errIDTaken = errors.New("taken by another start at the same moment; start the task again")

// claimID makes id's empty output file, with O_EXCL: whoever creates it
// owns the id, and the other gets errIDTaken.
func (s *Store) claimID(id string) error {
	f, err := os.OpenFile(s.outputPath(id), os.O_CREATE|os.O_EXCL|os.O_WRONLY|syscall.O_NOFOLLOW, fileMode)
	if errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("task id %s: %w", id, errIDTaken)
	}
	if err != nil {
		return fmt.Errorf("create output file: %w", err)
	}
	return f.Close()
}

// load reads one record by exact id. A record that cannot be used as it
// stands (see checkRecord) is an *InvalidRecordError, never a half-filled
// task: readers would print blanks and act on an empty id.
func (s *Store) load(id string) (*record, error) {
	r, _, err := s.loadRead(id)
	return r, err
}

// loadRead is load, also returning what was read: the record's bytes and
// its file's stamp, for the index (see loadAll).
func (s *Store) loadRead(id string) (*record, rec.IndexEntry, error) {
	path := s.recordPath(id)
	data, st, err := statefs.ReadOwnStat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, rec.IndexEntry{}, &taskid.NotFoundError{ID: id}
	}
	if err != nil {
		return nil, rec.IndexEntry{}, &InvalidRecordError{Path: path, Err: err}
	}
	var r record
	if err := rec.Unmarshal(data, (*rec.Record)(&r)); err != nil {
		// A save recycles the inode an earlier version of the record had
		// (see save): a reader slow enough to read it while it is being
		// rewritten reads half a record. The name holds a whole one.
		if data, st, err = statefs.ReadOwnStat(path); err == nil {
			r = record{}
			err = rec.Unmarshal(data, (*rec.Record)(&r))
		}
		if err != nil {
			return nil, rec.IndexEntry{}, &InvalidRecordError{Path: path, Err: err}
		}
	}
	if err := s.checkRecord(&r, id); err != nil {
		return nil, rec.IndexEntry{}, &InvalidRecordError{Path: path, Err: err}
	}
	return &r, rec.IndexEntry{Stamp: rec.StampOfStat(st), Data: data}, nil
}

// InvalidRecordError is a task record qtask will not use: unreadable, not
// JSON, or not a task record. Listings skip it with a warning naming Path.
type InvalidRecordError struct {
	Path string
	Err  error
}

func (e *InvalidRecordError) Error() string {
	return fmt.Sprintf("task record %s is unusable: %v", e.Path, e.Err)
}

func (e *InvalidRecordError) Unwrap() error { return e.Err }

// checkRecord reports the first reason a parsed record cannot be trusted
// as the task its file name says, filling in nothing. The output path must
// be this store's own file for the id: readers open it, and a record naming
// some other file would have them print it.
func (s *Store) checkRecord(r *record, id string) error {
	switch {
	case !taskid.Valid(id):
		return fmt.Errorf("its name is not a task id")
	case r.ID == "":
		return fmt.Errorf("it has no id (an empty or null record)")
	case r.ID != id:
		return fmt.Errorf("it holds id %q, not the %q of its name", r.ID, id)
	case r.Kind != KindShell && r.Kind != KindMonitor:
		return fmt.Errorf("unknown kind %q", r.Kind)
	case r.StartedAt.IsZero():
		return fmt.Errorf("it has no started_at")
	}
	if _, err := ParseStatus(string(r.Status)); err != nil {
		return err
	}
	if !r.Running() && r.EndedAt == nil {
		return fmt.Errorf("it is %s but has no ended_at", r.Status)
	}
	if want := s.outputPath(id); r.OutputPath != want {
		if filepath.Base(r.OutputPath) != id+".log" || !sameFile(filepath.Dir(r.OutputPath), s.outputDir()) {
			return fmt.Errorf("output_path %q is not %s", r.OutputPath, want)
		}
		// The same file reached by another spelling of the state dir:
		// read it by this store's own path from now on.
		r.OutputPath = want
	}
	return nil
}

// sameFile reports whether two paths name the same existing file.
func sameFile(a, b string) bool {
	fa, err := os.Stat(a)
	if err != nil {
		return false
	}
	fb, err := os.Stat(b)
	return err == nil && os.SameFile(fa, fb)
}

// save writes a record atomically. Callers changing an existing record hold
// the lock (see update); a brand-new record needs none. Records are compact
// JSON: `ls` parses every one, and indentation is a fifth of the bytes.
//
// The replaced version's inode is kept (sparePath) and written over by the
// next save, then exchanged with the record's name in one rename: a task's
// record changes a handful of times, and on ext4 without a journal each
// inode freed makes every new file in its group slower to create for
// minutes (see statusline.Line.mark).
func (s *Store) save(r *record) error {
	data, err := (*rec.Record)(r).AppendJSON(nil)
	if err != nil {
		return fmt.Errorf("encode task %s: %w", r.ID, err)
	}
	data = append(data, '\n')
	if recycled, err := statefs.ReplaceRecycling(s.recordPath(r.ID), s.sparePath(r.ID), data); recycled {
		return err
	}
	w, err := statefs.Prepare(s.recordPath(r.ID))
	if err != nil {
		return err
	}
	return w.Commit(data, false, s.sparePath(r.ID))
}

// sparePath is the file whose inode the next save of task id's record
// writes (see save): the temp-file name of an atomic write, so that prune
// and rm know it as the task's.
func (s *Store) sparePath(id string) string {
	return filepath.Join(s.tasksDir(), "."+id+".json.tmp-spare")
}

// saveVia is save through a replacement prepared beforehand (Start).
func (s *Store) saveVia(w *statefs.PendingWrite, r *record) error {
	data, err := (*rec.Record)(r).AppendJSON(nil)
	if err != nil {
		w.Abandon()
		return fmt.Errorf("encode task %s: %w", r.ID, err)
	}
	return w.Commit(append(data, '\n'), false, "")
}

// update applies fn to the current record under the state lock and saves
// the result, so concurrent writers (wrapper, capture, stop) never undo each
// other. If fn returns errSkip nothing is written.
func (s *Store) update(ctx context.Context, id string, fn func(*record) error) (*record, error) {
	unlock, err := s.lock(ctx)
	if err != nil {
		return nil, err
	}
	defer unlock()
	r, err := s.load(id)
	if err != nil {
		return nil, err
	}
	if err := fn(r); err != nil {
		if errors.Is(err, errSkip) {
			return r, nil
		}
		return nil, err
	}
	return r, s.save(r)
}

// lock takes the store-wide state lock (statefs.Root.Lock: the state
// directory must still be the one OpenStore checked, and a wait ends with
// ctx). Transitions are rare and short, so one lock for the whole store is
// simpler than one per task and costs nothing measurable.
func (s *Store) lock(ctx context.Context) (func(), error) { return s.root.Lock(ctx, lockName) }

// lockName is the state lock's file in the state directory.
const lockName = "lock"

// errSkip tells update that fn decided nothing needs writing.
var errSkip = errors.New("skip")

// ids lists the ids of all records, in no particular order.
func (s *Store) ids() ([]string, error) {
	// Names only, unsorted: os.ReadDir would sort and build an entry for
	// each of thousands of files.
	dir, err := os.Open(s.tasksDir())
	if err != nil {
		return nil, fmt.Errorf("list tasks: %w", err)
	}
	defer dir.Close()
	names, err := dir.Readdirnames(-1)
	if err != nil {
		return nil, fmt.Errorf("list tasks: %w", err)
	}
	ids := names[:0]
	for _, name := range names {
		if id, ok := isRecordName(name); ok && !strings.HasPrefix(id, ".") {
			ids = append(ids, id)
		}
	}
	return ids, nil
}

// Resolve turns what a user typed into an id: the full id, a unique
// prefix of one, or a task's name (`--name web`). An id comes first, so a
// name can never take over an id that already worked: a name is looked
// up only when the text is no id or unique id prefix (not shaped like one,
// matching none, or ambiguous). A name means the task of that name that
// is running; with none running, the newest of that name; with several
// running, it is ambiguous (*taskid.AmbiguousError listing them).
func (s *Store) Resolve(ctx context.Context, handle string) (string, error) {
	if err := CheckID(handle); err != nil {
		return "", err
	}
	if taskid.Valid(handle) {
		// A full id needs no listing of every task, only its own file.
		if _, err := os.Lstat(s.recordPath(handle)); err == nil {
			return handle, nil
		}
	}
	ids, err := s.ids()
	if err != nil {
		return "", err
	}
	id, idErr := taskid.Match(handle, ids)
	if idErr == nil {
		return id, nil
	}
	recs, _, err := s.loadAll()
	if err != nil {
		return "", err
	}
	var named []taskid.Named
	for _, r := range recs {
		if r.Name == handle {
			named = append(named, taskid.Named{ID: r.ID, Running: s.reconcile(ctx, r).Running()})
		}
	}
	id, err = taskid.MatchName(handle, named)
	if errors.Is(err, taskid.ErrNotFound) {
		return "", idErr
	}
	return id, err
}

// loadAll reads every record, sorted by start time (then id). A record that
// cannot be parsed is skipped and reported in warnings, naming the file, so
// one bad file never hides the rest. Finished records come from the index
// when their files are unchanged (see index.go).
func (s *Store) loadAll() (recs []*record, warnings []string, err error) {
	settled := time.Now().Add(-indexSettle)
	// The index is read while the directory is listed: each is about a
	// millisecond with a thousand tasks.
	var idx rec.Index
	indexRead := make(chan struct{})
	go func() {
		defer close(indexRead)
		idx = s.readIndex()
	}()
	ids, err := s.ids()
	<-indexRead
	if err != nil {
		return nil, nil, err
	}
	all := make([]loaded, len(ids))
	s.loadEach(ids, idx, all)
	for _, l := range all {
		if errors.Is(l.err, taskid.ErrNotFound) {
			continue // removed between listing and reading
		}
		var invalid *InvalidRecordError
		if errors.As(l.err, &invalid) {
			warnings = append(warnings, fmt.Sprintf("skipping %s: %v", invalid.Path, invalid.Err))
			continue
		}
		if l.err != nil {
			return nil, nil, l.err
		}
		recs = append(recs, l.rec)
	}
	s.refreshIndex(idx, ids, all, settled)
	sort.Slice(recs, func(i, j int) bool {
		if !recs[i].StartedAt.Equal(recs[j].StartedAt) {
			return recs[i].StartedAt.Before(recs[j].StartedAt)
		}
		return recs[i].ID < recs[j].ID
	})
	return recs, warnings, nil
}

// loadEach loads the records of ids into all, on every CPU: reading and
// decoding is most of what `ls` does with a thousand tasks.
func (s *Store) loadEach(ids []string, idx rec.Index, all []loaded) {
	tasks := -1
	if len(idx) > 0 {
		// Stamps are taken relative to the directory: no path walk each.
		if fd, err := unix.Open(s.tasksDir(), unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0); err == nil {
			tasks = fd
			defer unix.Close(fd)
		}
	}
	workers := min(runtime.GOMAXPROCS(0), (len(ids)+63)/64)
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < len(ids); i = int(next.Add(1) - 1) {
				l := &all[i]
				if e, ok := idx.Find(ids[i]); ok && tasks >= 0 {
					if l.rec, l.indexed = s.loadIndexed(tasks, ids[i], e); l.indexed {
						l.entry = e
						continue
					}
				}
				l.rec, l.entry, l.err = s.loadRead(ids[i])
			}
		})
	}
	wg.Wait()
}
