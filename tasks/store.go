package tasks

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
)

// Store is the state directory: one JSON record per task under tasks/, one
// output file per task under output/, and a lock file that serializes state
// transitions. Records are replaced atomically (temp file + rename), so a
// reader sees the old record or the new one, never half of one.
type Store struct {
	dir string
}

const (
	dirMode  = 0o700
	fileMode = 0o600
)

// OpenStore creates the state directory if needed and tightens its mode to
// 0700: records carry command lines and output that are nobody else's business.
func OpenStore(dir string) (*Store, error) {
	s := &Store{dir: dir}
	for _, d := range []string{dir, s.tasksDir(), s.outputDir()} {
		if err := os.MkdirAll(d, dirMode); err != nil {
			return nil, fmt.Errorf("create state directory: %w", err)
		}
		fi, err := os.Lstat(d)
		if err != nil {
			return nil, fmt.Errorf("state directory: %w", err)
		}
		if d != dir && fi.Mode()&fs.ModeSymlink != 0 {
			return nil, fmt.Errorf("state directory %s is a symlink; refusing to write through it", d)
		}
		if fi.Mode().Perm() != dirMode {
			if err := os.Chmod(d, dirMode); err != nil {
				return nil, fmt.Errorf("make %s private: %w", d, err)
			}
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
func (s *Store) lockPath() string             { return filepath.Join(s.dir, "lock") }
func isRecordName(name string) (string, bool) { return strings.CutSuffix(name, ".json") }

// reserveID picks a fresh id and claims it by creating its empty output file
// with O_EXCL, so two concurrent starts can never share an id.
func (s *Store) reserveID() (string, error) {
	for range 16 {
		id, err := newID()
		if err != nil {
			return "", err
		}
		f, err := os.OpenFile(s.outputPath(id), os.O_CREATE|os.O_EXCL|os.O_WRONLY|syscall.O_NOFOLLOW, fileMode)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return "", fmt.Errorf("create output file: %w", err)
		}
		return id, f.Close()
	}
	return "", errors.New("could not find a free task id after 16 tries")
}

// load reads one record by exact id.
func (s *Store) load(id string) (*record, error) {
	data, err := os.ReadFile(s.recordPath(id))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, &NotFoundError{ID: id}
	}
	if err != nil {
		return nil, fmt.Errorf("read task %s: %w", id, err)
	}
	var r record
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("task record %s is corrupt: %w", s.recordPath(id), err)
	}
	return &r, nil
}

// save writes a record atomically. Callers changing an existing record hold
// the lock (see update); a brand-new record needs none.
func (s *Store) save(r *record) error {
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return fmt.Errorf("encode task %s: %w", r.ID, err)
	}
	return writeFileAtomic(s.recordPath(r.ID), append(data, '\n'))
}

// update applies fn to the current record under the state lock and saves
// the result, so concurrent writers (wrapper, capture, stop) never undo each
// other. If fn returns errSkip nothing is written.
func (s *Store) update(id string, fn func(*record) error) (*record, error) {
	unlock, err := s.lock()
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

// errSkip tells update that fn decided nothing needs writing.
var errSkip = errors.New("skip")

// lock takes the store-wide exclusive lock. Transitions are rare and short,
// so one lock for the whole store is simpler than one per task and costs
// nothing measurable.
func (s *Store) lock() (func(), error) {
	f, err := os.OpenFile(s.lockPath(), os.O_CREATE|os.O_RDWR|syscall.O_NOFOLLOW, fileMode)
	if err != nil {
		return nil, fmt.Errorf("open state lock: %w", err)
	}
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if !errors.Is(err, syscall.EINTR) {
			break
		}
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("lock state: %w", err)
	}
	return func() { f.Close() }, nil
}

// ids lists the ids of all records, for prefix matching.
func (s *Store) ids() ([]string, error) {
	entries, err := os.ReadDir(s.tasksDir())
	if err != nil {
		return nil, fmt.Errorf("list tasks: %w", err)
	}
	ids := make([]string, 0, len(entries))
	for _, e := range entries {
		if id, ok := isRecordName(e.Name()); ok && !strings.HasPrefix(id, ".") {
			ids = append(ids, id)
		}
	}
	return ids, nil
}

// Resolve turns what a user typed — a full id or a unique prefix — into an id.
func (s *Store) Resolve(prefix string) (string, error) {
	ids, err := s.ids()
	if err != nil {
		return "", err
	}
	return matchPrefix(prefix, ids)
}

// loadAll reads every record, sorted by start time (then id). A record that
// cannot be parsed is skipped and reported in warnings, naming the file, so
// one bad file never hides the rest.
func (s *Store) loadAll() (recs []*record, warnings []string, err error) {
	ids, err := s.ids()
	if err != nil {
		return nil, nil, err
	}
	for _, id := range ids {
		r, err := s.load(id)
		if errors.Is(err, ErrNotFound) {
			continue // removed between listing and reading
		}
		if err != nil {
			warnings = append(warnings, fmt.Sprintf("skipping %s: %v", s.recordPath(id), errors.Unwrap(err)))
			continue
		}
		recs = append(recs, r)
	}
	sort.Slice(recs, func(i, j int) bool {
		if !recs[i].StartedAt.Equal(recs[j].StartedAt) {
			return recs[i].StartedAt.Before(recs[j].StartedAt)
		}
		return recs[i].ID < recs[j].ID
	})
	return recs, warnings, nil
}

// writeFileAtomic writes data to a fresh 0600 temp file beside path and
// renames it into place. The temp file is created with O_EXCL, which never
// follows a symlink, and rename replaces a symlink at path rather than
// writing through it.
func writeFileAtomic(path string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	tmp := f.Name()
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
