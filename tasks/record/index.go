package record

import (
	"bytes"
	"hash/crc32"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The record index, the codec's second file: with a thousand finished
// tasks, `ls` spent most of its time opening, stat-ing, reading and closing
// one record file each. A finished record seldom changes again, so whoever
// reads every record keeps a copy of the finished ones in one file,
// records.index, each beside the stamp its file had when it was read. A
// record whose file still has that stamp is taken from the index for one
// statx(2) instead of four calls. The record files stay the truth: writers
// never touch the index, a record whose stamp differs is read from its
// file, and the reader that finds the index behind rewrites it. This file
// is its format; when to read, trust and rewrite it is package tasks'.

// IndexHeader opens the index; a file that starts otherwise is not used.
const IndexHeader = "qtask records.index 2\n"

// Stamp is what tells one version of a record file from another: a save
// writes the bytes into a recycled inode (see tasks' save) and renames it
// in, so the inode alone repeats; its size and times change with every
// write.
type Stamp struct {
	Ino          uint64
	Size         int64
	Mtime, Ctime int64 // ns since the epoch
}

// StampOfStat is the stamp of the file st describes.
func StampOfStat(st *syscall.Stat_t) Stamp {
	return Stamp{Ino: st.Ino, Size: st.Size, Mtime: st.Mtim.Nano(), Ctime: st.Ctim.Nano()}
}

// StampOfStatx is the stamp of the file st describes, as statx(2) gave it
// (with STATX_INO, STATX_SIZE, STATX_MTIME and STATX_CTIME).
func StampOfStatx(st *unix.Statx_t) Stamp {
	return Stamp{
		Ino:   st.Ino,
		Size:  int64(st.Size),
		Mtime: st.Mtime.Sec*1e9 + int64(st.Mtime.Nsec),
		Ctime: st.Ctime.Sec*1e9 + int64(st.Ctime.Nsec),
	}
}

// IndexEntry is one record as read: its file's stamp and its bytes (and,
// from the index, the same as a string, Text, the task's ID and the
// checksum, Sum, the bytes had when written).
type IndexEntry struct {
	ID    string
	Stamp Stamp
	Data  []byte
	Text  string
	Sum   uint32
}

// Intact reports whether the entry's bytes still have the checksum they
// were written with: an entry whose bytes were changed in place (a disk
// error, a hand edit that kept the length) is not served, however well its
// stamp matches.
func (e IndexEntry) Intact() bool { return indexSum(e.Data) == e.Sum }

// Indexable reports whether a record read as e can go into the index:
// finished, read whole, and unchanged since before settled (ns since the
// epoch; and with times after 1970: a hand-set mtime can be earlier, which
// the index cannot hold).
func (e IndexEntry) Indexable(finished bool, settled int64) bool {
	return finished && e.Stamp.Ctime > 0 && e.Stamp.Mtime >= 0 && e.Stamp.Ctime < settled &&
		int64(len(e.Data)) == e.Stamp.Size
}

// indexSum is the checksum of a record's bytes in the index.
func indexSum(data []byte) uint32 { return crc32.Checksum(data, castagnoli()) }

// castagnoli is made on first use, not as the package loads: making it
// was 5 % of the CPU of every qtask start (a `run --bg` never needs it).
var castagnoli = sync.OnceValue(func() *crc32.Table { return crc32.MakeTable(crc32.Castagnoli) })

// Index is the index's entries, sorted by id (as written): looked up by a
// binary search, since a map of a thousand entries cost `ls` a tenth of
// its page faults.
type Index []IndexEntry

// Find returns the entry of task id, if the index holds one.
func (x Index) Find(id string) (IndexEntry, bool) {
	i, ok := slices.BinarySearchFunc(x, id, func(e IndexEntry, id string) int { return strings.Compare(e.ID, id) })
	if !ok {
		return IndexEntry{}, false
	}
	return x[i], true
}

// ParseIndex reads the entries of an index: after the header, for each
// record a line "ID INO SIZE MTIME CTIME SUM" and then the SIZE bytes of its
// file, in increasing order of ID. Anything malformed voids the whole index.
// The entries' strings share data's memory: the caller must never write
// to data again.
func ParseIndex(data []byte) Index {
	rest, ok := bytes.CutPrefix(data, []byte(IndexHeader))
	if !ok {
		return nil
	}
	// The whole index as one string, which the records' strings slice,
	// without a copy (a copy was a tenth of `ls`'s page faults).
	text := unsafe.String(unsafe.SliceData(data), len(data))
	// About 700 bytes a record: one allocation for a well-kept index.
	entries := make(Index, 0, len(data)/512)
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
			len(entries) > 0 && entries[len(entries)-1].ID >= id {
			return nil
		}
		entries = append(entries, IndexEntry{
			ID:    id,
			Stamp: Stamp{Ino: ino, Size: int64(size), Mtime: int64(mtime), Ctime: int64(ctime)},
			Data:  after[:size:size],
			Text:  text[at : at+int(size)],
			Sum:   uint32(sum),
		})
		rest = after[size:]
	}
	return entries
}

// parseIndexUint parses a decimal of at most limit, as AppendIndexEntry
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

// AppendIndexEntry appends task id's entry to an index being written
// (after IndexHeader, in increasing order of id). The stamp's numbers are
// never negative: Indexable leaves out times before 1970.
func AppendIndexEntry(buf []byte, id string, e IndexEntry) []byte {
	buf = append(buf, id...)
	for _, n := range []uint64{e.Stamp.Ino, uint64(e.Stamp.Size), uint64(e.Stamp.Mtime), uint64(e.Stamp.Ctime), uint64(indexSum(e.Data))} {
		buf = append(buf, ' ')
		buf = strconv.AppendUint(buf, n, 10)
	}
	buf = append(buf, '\n')
	return append(buf, e.Data...)
}
