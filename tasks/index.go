package tasks

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
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
const indexHeader = "qtask records.index 1\n"

// indexSlack is how many records the index may lack or hold stale before
// a reader rewrites it: rewriting costs a write of every finished record,
// reading a few records from their own files costs little.
const indexSlack = 32

// indexSettle is how long a record must have gone unchanged before it is
// indexed. A stamp's times come from a clock that advances a tick (up to
// 10 ms) at a time, so two writes in one tick could leave a file with the
// same stamp and other bytes; a record indexed only when its ctime is a
// second old is one whose next write, however soon, gets a later ctime.
// (A variable for tests, which cannot wait that long every time.)
var indexSettle = time.Second

// fileStamp is what tells one version of a record file from another: a
// save writes the bytes into a recycled inode (see save) and renames it in,
// so the inode alone repeats; its size and times change with every write.
type fileStamp struct {
	ino          uint64
	size         int64
	mtime, ctime int64 // ns since the epoch
}

func stampOfStat(st *syscall.Stat_t) fileStamp {
	return fileStamp{ino: st.Ino, size: st.Size, mtime: st.Mtim.Nano(), ctime: st.Ctim.Nano()}
}

// indexEntry is one record as read: its file's stamp and its bytes (and,
// from the index, the same as a string, text, and the task's id).
type indexEntry struct {
	id    string
	stamp fileStamp
	data  []byte
	text  string
}

// recordIndex is the index's entries, sorted by id (as written): looked up
// by a binary search, since a map of a thousand entries cost `ls` a tenth
// of its page faults.
type recordIndex []indexEntry

func (x recordIndex) find(id string) (indexEntry, bool) {
	i, ok := slices.BinarySearchFunc(x, id, func(e indexEntry, id string) int { return strings.Compare(e.id, id) })
	if !ok {
		return indexEntry{}, false
	}
	return x[i], true
}

// indexable reports whether a record read as e can go into the index:
// finished, read whole, and unchanged since before settled.
func (e indexEntry) indexable(r *record, settled int64) bool {
	return r != nil && !r.Running() && e.stamp.ctime != 0 && e.stamp.ctime < settled &&
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
// record a line "ID INO SIZE MTIME CTIME" and then the SIZE bytes of its
// file, in increasing order of ID. Anything malformed voids the whole index.
func parseIndex(data []byte) recordIndex {
	rest, ok := bytes.CutPrefix(data, []byte(indexHeader))
	if !ok {
		return nil
	}
	// The whole index as one string, which the records' strings slice,
	// without a copy: data is the buffer readIndex read it into, which
	// nothing writes again (a copy was a tenth of `ls`'s page faults).
	text := unsafe.String(unsafe.SliceData(data), len(data))
	// About 700 bytes a record: one allocation for a well-kept index.
	entries := make(recordIndex, 0, len(data)/512)
	for len(rest) > 0 {
		line, after, ok := bytes.Cut(rest, []byte{'\n'})
		if !ok {
			return nil
		}
		var f [5][]byte
		for i := range f {
			f[i], line, _ = bytes.Cut(line, []byte{' '})
		}
		ino, ok1 := parseIndexInt(f[1])
		size, ok2 := parseIndexInt(f[2])
		mtime, ok3 := parseIndexInt(f[3])
		ctime, ok4 := parseIndexInt(f[4])
		id, at := text[len(data)-len(rest):][:len(f[0])], len(data)-len(after)
		if !ok1 || !ok2 || !ok3 || !ok4 || len(line) != 0 || size > int64(len(after)) ||
			len(entries) > 0 && entries[len(entries)-1].id >= id {
			return nil
		}
		entries = append(entries, indexEntry{
			id:    id,
			stamp: fileStamp{ino: uint64(ino), size: size, mtime: mtime, ctime: ctime},
			data:  after[:size:size],
			text:  text[at : at+int(size)],
		})
		rest = after[size:]
	}
	return entries
}

// parseIndexInt parses a non-negative decimal, as appendIndexEntry writes.
func parseIndexInt(b []byte) (int64, bool) {
	if len(b) == 0 || len(b) > 19 {
		return 0, false
	}
	var n int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	return n, true
}

func appendIndexEntry(buf []byte, id string, e indexEntry) []byte {
	buf = append(buf, id...)
	for _, n := range []int64{int64(e.stamp.ino), e.stamp.size, e.stamp.mtime, e.stamp.ctime} {
		buf = append(buf, ' ')
		buf = strconv.AppendInt(buf, n, 10)
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
	if now != e.stamp {
		return nil, false
	}
	r = new(record)
	if unmarshalRecordText(e.data, e.text, r) != nil || s.checkRecord(r, id) != nil || r.Running() {
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
// task whose record is gone (a prune racing the last rewrite: the index
// must not keep a removed task's command line). A write that fails is
// left: the index is only ever a shortcut.
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
	for _, i := range keep {
		buf = appendIndexEntry(buf, ids[i], all[i].entry)
	}
	_ = writeFileAtomic(s.indexPath(), buf)
}

// indexNamesGone reports whether the index holds a task that ids (the
// records there are) lacks; used of its entries were found in ids.
func indexNamesGone(idx recordIndex, ids []string, used int) bool {
	if used == len(idx) {
		return false
	}
	present := make(map[string]bool, len(ids))
	for _, id := range ids {
		present[id] = true
	}
	return slices.ContainsFunc(idx, func(e indexEntry) bool { return !present[e.id] })
}

// dropIndex removes the index, so that no copy of a removed task's record
// outlives it; the next reader of every record writes it anew.
func (s *Store) dropIndex() {
	os.Remove(s.indexPath())
}
