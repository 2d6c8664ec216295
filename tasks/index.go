package tasks

import (
	"bytes"
	"hash/crc32"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	rec "github.com/qtask/qtask/tasks/record"
)

// The record index: with a thousand finished tasks, `ls` spent most of its
// time opening, stat-ing, reading and closing one record file each. A
// finished record seldom changes again, so whoever reads every record
// (loadAll) keeps a copy of the finished ones in one file, records.index,
// each beside the stamp its file had when it was read. A record whose file
// still has that stamp is taken from the index for one statx(2) instead of
// four calls. The record files stay the truth: writers never touch the
// index, a record whose stamp differs is read from its file, and the
// reader that finds the index behind rewrites it.

// indexHeader opens the index; a file that starts otherwise is not used.
const indexHeader = "qtask records.index 2\n"

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

// fileStamp is what tells one version of a record file from another: a
// save writes the bytes into a recycled inode (see save) and renames it in,
// so the inode alone repeats; its size and times change with every write.
type fileStamp struct {
	ino          uint64
	size         int64
	mtime, ctime int64 // ns since the epoch
}

// stampOfStat is the stamp of the file st describes.
func stampOfStat(st *syscall.Stat_t) fileStamp {
	return fileStamp{ino: st.Ino, size: st.Size, mtime: st.Mtim.Nano(), ctime: st.Ctim.Nano()}
}

// indexEntry is one record as read: its file's stamp and its bytes (and,
// from the index, the same as a string, text, the task's id and the
// checksum the bytes had when written).
type indexEntry struct {
	id    string
	stamp fileStamp
	data  []byte
	text  string
	sum   uint32
}

// indexSum is the checksum of a record's bytes in the index: an entry whose
// bytes were changed in place (a disk error, a hand edit that kept the
// length) is not served, however well its stamp matches.
func indexSum(data []byte) uint32 { return crc32.Checksum(data, castagnoli()) }

// castagnoli is made on first use, not as the package loads: making it
// was 5 % of the CPU of every qtask start (a `run --bg` never needs it).
var castagnoli = sync.OnceValue(func() *crc32.Table { return crc32.MakeTable(crc32.Castagnoli) })

// recordIndex is the index's entries, sorted by id (as written): looked up
// by a binary search, since a map of a thousand entries cost `ls` a tenth
// of its page faults.
type recordIndex []indexEntry

// find returns the entry of task id, if the index holds one.
func (x recordIndex) find(id string) (indexEntry, bool) {
	i, ok := slices.BinarySearchFunc(x, id, func(e indexEntry, id string) int { return strings.Compare(e.id, id) })
	if !ok {
		return indexEntry{}, false
	}
	return x[i], true
}

// indexable reports whether a record read as e can go into the index:
// finished, read whole, and unchanged since before settled (and with times
// after 1970: a hand-set mtime can be earlier, which the index cannot hold).
func (e indexEntry) indexable(r *record, settled int64) bool {
	return r != nil && !r.Running() && e.stamp.ctime > 0 && e.stamp.mtime >= 0 && e.stamp.ctime < settled &&
		int64(len(e.data)) == e.stamp.size
}

func (s *Store) indexPath() string { return filepath.Join(s.dir, "records.index") }

// readIndex returns the index's entries: none when there is no index, or
// one qtask did not write (see readOwnFile) or cannot parse.
func (s *Store) readIndex() recordIndex {
	data, err := readOwnFile(s.indexPath())
	if err != nil {
		return nil
	}
	return parseIndex(data)
}

// parseIndex reads the entries of an index: after the header, for each
// record a line "ID INO SIZE MTIME CTIME SUM" and then the SIZE bytes of its
// file, in increasing order of ID. Anything malformed voids the whole index.
// The entries' strings share data's memory: the caller must never write
// to data again.
func parseIndex(data []byte) recordIndex {
	rest, ok := bytes.CutPrefix(data, []byte(indexHeader))
	if !ok {
		return nil
	}
	// The whole index as one string, which the records' strings slice,
	// without a copy (a copy was a tenth of `ls`'s page faults).
	text := unsafe.String(unsafe.SliceData(data), len(data))
	// About 700 bytes a record: one allocation for a well-kept index.
	entries := make(recordIndex, 0, len(data)/512)
	for len(rest) > 0 {
		line, after, ok := bytes.Cut(rest, []byte{'\n'})
		if !ok {
			return nil
		}
		var f [6][]byte
		for i := range f {
			f[i], line, _ = bytes.Cut(line, []byte{' '})
		}
		ino, ok1 := parseIndexUint(f[1], math.MaxUint64)
		size, ok2 := parseIndexUint(f[2], uint64(len(after)))
		mtime, ok3 := parseIndexUint(f[3], math.MaxInt64)
		ctime, ok4 := parseIndexUint(f[4], math.MaxInt64)
		sum, ok5 := parseIndexUint(f[5], math.MaxUint32)
		id, at := text[len(data)-len(rest):][:len(f[0])], len(data)-len(after)
		if !ok1 || !ok2 || !ok3 || !ok4 || !ok5 || len(line) != 0 ||
			len(entries) > 0 && entries[len(entries)-1].id >= id {
			return nil
		}
		entries = append(entries, indexEntry{
			id:    id,
			stamp: fileStamp{ino: ino, size: int64(size), mtime: int64(mtime), ctime: int64(ctime)},
			data:  after[:size:size],
			text:  text[at : at+int(size)],
			sum:   uint32(sum),
		})
		rest = after[size:]
	}
	return entries
}

// parseIndexUint parses a decimal of at most limit, as appendIndexEntry
// writes them.
func parseIndexUint(b []byte, limit uint64) (uint64, bool) {
	if len(b) == 0 {
		return 0, false
	}
	var n uint64
	for _, c := range b {
		d := uint64(c - '0')
		if c < '0' || c > '9' || n > (limit-d)/10 || d > limit {
			return 0, false
		}
		n = n*10 + d
	}
	return n, true
}

// appendIndexEntry appends task id's entry to an index being written. The
// stamp's numbers are never negative: indexable leaves out times before
// 1970.
func appendIndexEntry(buf []byte, id string, e indexEntry) []byte {
	buf = append(buf, id...)
	for _, n := range []uint64{e.stamp.ino, uint64(e.stamp.size), uint64(e.stamp.mtime), uint64(e.stamp.ctime), uint64(indexSum(e.data))} {
		buf = append(buf, ' ')
		buf = strconv.AppendUint(buf, n, 10)
	}
	buf = append(buf, '\n')
	return append(buf, e.data...)
}

// loadIndexed is load for a record the index holds, from the index, if
// its file (found through tasks, the tasks directory open O_PATH) is still
// the one e was read from: ok is false, and the record must be read from
// its file, if not.
func (s *Store) loadIndexed(tasks int, id string, e indexEntry) (r *record, ok bool) {
	// AT_STATX_SYNC_AS_STAT (not DONT_SYNC): on a network file system a
	// cached stamp could be one the file no longer has.
	var st unix.Statx_t
	const want = unix.STATX_TYPE | unix.STATX_INO | unix.STATX_SIZE | unix.STATX_MTIME | unix.STATX_CTIME | unix.STATX_UID
	if unix.Statx(tasks, id+".json", unix.AT_SYMLINK_NOFOLLOW|unix.AT_STATX_SYNC_AS_STAT, want, &st) != nil ||
		st.Mask&want != want || st.Mode&syscall.S_IFMT != syscall.S_IFREG || int(st.Uid) != effectiveUID() {
		return nil, false
	}
	now := fileStamp{
		ino:   st.Ino,
		size:  int64(st.Size),
		mtime: st.Mtime.Sec*1e9 + int64(st.Mtime.Nsec),
		ctime: st.Ctime.Sec*1e9 + int64(st.Ctime.Nsec),
	}
	if now != e.stamp || indexSum(e.data) != e.sum {
		return nil, false
	}
	r = new(record)
	if rec.UnmarshalWithText(e.data, e.text, (*rec.Record)(r)) != nil || s.checkRecord(r, id) != nil || r.Running() {
		return nil, false
	}
	return r, true
}

// loaded is one record as loadAll read it: from the index (indexed) or
// from its file, with what was read (for the index).
type loaded struct {
	rec     *record
	err     error
	entry   indexEntry
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
func (s *Store) refreshIndex(idx recordIndex, ids []string, all []loaded, settled time.Time) {
	cutoff := settled.UnixNano()
	var keep []int
	used, fresh := 0, 0
	for i := range all {
		switch {
		case all[i].indexed:
			used++
		case all[i].entry.indexable(all[i].rec, cutoff):
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
	buf := []byte(indexHeader)
	kept := make([]string, 0, len(keep))
	for _, i := range keep {
		buf = appendIndexEntry(buf, ids[i], all[i].entry)
		kept = append(kept, ids[i])
		if len(buf) > maxStateFile {
			s.dropIndex() // too big for readOwnFile to read back
			return
		}
	}
	if writeFileAtomic(s.indexPath(), buf) != nil {
		return
	}
	if now, err := s.ids(); err != nil || anyMissing(kept, now) {
		s.dropIndex()
	}
}

// indexNamesGone reports whether idx holds a task that ids (the records
// there are) lacks; used of its entries are known to be in ids.
func indexNamesGone(idx recordIndex, ids []string, used int) bool {
	if used == len(idx) {
		return false
	}
	names := make([]string, len(idx))
	for i, e := range idx {
		names[i] = e.id
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
