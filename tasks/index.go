package tasks

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	rec "github.com/qtask/qtask/tasks/record"
	"github.com/qtask/qtask/tasks/statefs"
)

// The record index (its format: package record, index.go): a reader of
// every record (loadAll) keeps the finished ones in records.index, beside
// their files' stamps, and takes a record from there while its file keeps
// that stamp. The record files stay the truth: writers never touch the
// index, and the reader that finds it behind rewrites it.

// indexSlack is how many records the index may lack or hold stale before
// a reader rewrites it: rewriting costs a write of every finished record,
// reading a few records from their own files costs little.
const indexSlack = 32

// indexSettle is how long a record must have gone unchanged before it is
// indexed. A stamp's times come from a clock that advances a tick (up to
// 10 ms, or a whole second or two on some file systems) at a time, so two
// writes in one tick could leave a file with the same stamp and other
// bytes; a record indexed only when its ctime is older than the tick is one
// whose next write, however soon, gets a later ctime. (A variable for
// tests, which cannot wait that long every time.)
var indexSettle = 2 * time.Second

func (s *Store) indexPath() string { return filepath.Join(s.dir, "records.index") }

// readIndex returns the index's entries: none when there is no index, or
// one qtask did not write (see statefs.ReadOwn) or cannot parse.
func (s *Store) readIndex() rec.Index {
	data, err := statefs.ReadOwn(s.indexPath())
	if err != nil {
		return nil
	}
	return rec.ParseIndex(data)
}

// loadIndexed is load for a record the index holds, from the index, if
// its file (found through tasks, the tasks directory open O_PATH) is still
// the one e was read from: ok is false, and the record must be read from
// its file, if not.
func (s *Store) loadIndexed(tasks int, id string, e rec.IndexEntry) (r *record, ok bool) {
	// AT_STATX_SYNC_AS_STAT (not DONT_SYNC): on a network file system a
	// cached stamp could be one the file no longer has.
	var st unix.Statx_t
	const want = unix.STATX_TYPE | unix.STATX_INO | unix.STATX_SIZE | unix.STATX_MTIME | unix.STATX_CTIME | unix.STATX_UID
	if unix.Statx(tasks, id+".json", unix.AT_SYMLINK_NOFOLLOW|unix.AT_STATX_SYNC_AS_STAT, want, &st) != nil ||
		st.Mask&want != want || st.Mode&syscall.S_IFMT != syscall.S_IFREG || int(st.Uid) != statefs.EffectiveUID() {
		return nil, false
	}
	if rec.StampOfStatx(&st) != e.Stamp || !e.Intact() {
		return nil, false
	}
	r = new(record)
	if rec.UnmarshalWithText(e.Data, e.Text, (*rec.Record)(r)) != nil || s.checkRecord(r, id) != nil || r.Running() {
		return nil, false
	}
	return r, true
}

// loaded is one record as loadAll read it: from the index (indexed) or
// from its file, with what was read (for the index).
type loaded struct {
	rec     *record
	err     error
	entry   rec.IndexEntry
	indexed bool
}

// refreshIndex rewrites the index from what loadAll read, when the index
// lacks indexSlack records or more, holds as many stale ones, or names a
// task whose record is gone. A write that fails is left: the index is only
// ever a shortcut.
//
// A prune removes records, then the index, under the state lock; this
// write takes no lock, so a reader that read a task before a prune and
// writes after it would put the removed task's command line back. So the
// writer lists tasks/ once more after writing and removes what it wrote if
// a task in it is gone: either the prune's removal of the index or this
// check comes after the other's write.
func (s *Store) refreshIndex(idx rec.Index, ids []string, all []loaded, settled time.Time) {
	cutoff := settled.UnixNano()
	var keep []int
	used, fresh := 0, 0
	for i := range all {
		switch {
		case all[i].indexed:
			used++
		case all[i].entry.Indexable(all[i].rec != nil && !all[i].rec.Running(), cutoff):
			fresh++
		default:
			continue
		}
		keep = append(keep, i)
	}
	if fresh+len(idx)-used < indexSlack && !indexNamesGone(idx, ids, used) {
		return
	}
	slices.SortFunc(keep, func(a, b int) int { return strings.Compare(ids[a], ids[b]) })
	buf := []byte(rec.IndexHeader)
	kept := make([]string, 0, len(keep))
	for _, i := range keep {
		buf = rec.AppendIndexEntry(buf, ids[i], all[i].entry)
		kept = append(kept, ids[i])
		if len(buf) > statefs.MaxFile {
			s.dropIndex() // too big for statefs.ReadOwn to read back
			return
		}
	}
	if statefs.WriteAtomic(s.indexPath(), buf) != nil {
		return
	}
	if now, err := s.ids(); err != nil || anyMissing(kept, now) {
		s.dropIndex()
	}
}

// indexNamesGone reports whether idx holds a task that ids (the records
// there are) lacks; used of its entries are known to be in ids.
func indexNamesGone(idx rec.Index, ids []string, used int) bool {
	if used == len(idx) {
		return false
	}
	names := make([]string, len(idx))
	for i, e := range idx {
		names[i] = e.ID
	}
	return anyMissing(names, ids)
}

// anyMissing reports whether a name of names is not among ids.
func anyMissing(names, ids []string) bool {
	present := make(map[string]bool, len(ids))
	for _, id := range ids {
		present[id] = true
	}
	return slices.ContainsFunc(names, func(name string) bool { return !present[name] })
}

// dropIndex removes the index, so that no copy of a removed task's record
// outlives it; the next reader of every record writes it anew.
func (s *Store) dropIndex() {
	os.Remove(s.indexPath())
}
