// Package statefs is qtask's state directory on disk: finding it safe to
// use (Root: private, the user's own, inside no directory another user may
// change, never made where HOME is missing), holding it open so that what
// is created in it cannot land in a directory put in its place, the state
// lock, and the file primitives: reading a state file only when it is a
// regular file the effective user owns, writing by atomic replacement
// without ever following a symlink, making private directories. It is
// shared by the task store (tasks), the notification queue (tasks/notify)
// and the status segment (tasks/statusline) so that all hold their files to
// one set of rules, kept in one place. It knows nothing of what the files
// say.
package statefs

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// DirMode and FileMode are the modes of what qtask creates: records carry
// command lines and output that are nobody else's business.
const (
	DirMode  = 0o700
	FileMode = 0o600
)

// effectiveUID is os.Geteuid, asked once: `ls` checks the owner of every
// record, and qtask never changes its uid.
var effectiveUID = sync.OnceValue(os.Geteuid)

// EffectiveUID is the uid whose files are trusted: the effective one,
// asked once.
func EffectiveUID() int { return effectiveUID() }

// MaxFile bounds what ReadOwn reads: records and specs are small,
// and a planted huge file must not exhaust memory.
const MaxFile = 64 << 20

// ReadOwn reads a state file (a record, a spec, a notification),
// refusing anything but a regular file the effective user owns: not through
// a symlink (O_NOFOLLOW), not a FIFO or device (opened O_NONBLOCK, so a
// planted FIFO cannot hang the reader), and not another user's file. It
// makes plain system calls: `ls` reads every record, and an *os.File costs
// twice the calls (poller set-up, flag juggling, a growing read buffer).
func ReadOwn(path string) ([]byte, error) {
	data, _, err := ReadOwnStat(path)
	return data, err
}

// ReadOwnStat is ReadOwn, also returning the file's stat(2) as it
// was opened (see record.StampOfStat).
func ReadOwnStat(path string) ([]byte, *syscall.Stat_t, error) {
	fd, err := Open(path, syscall.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK|syscall.O_CLOEXEC)
	if errors.Is(err, syscall.ELOOP) {
		return nil, nil, errors.New("it is a symlink")
	}
	if err != nil {
		return nil, nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	defer syscall.Close(fd)
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		return nil, nil, &fs.PathError{Op: "stat", Path: path, Err: err}
	}
	if st.Mode&syscall.S_IFMT != syscall.S_IFREG {
		return nil, nil, fmt.Errorf("it is not a regular file but %s", fileKind(st.Mode))
	}
	if uid := int(st.Uid); uid != effectiveUID() {
		return nil, nil, fmt.Errorf("it is owned by %s, not by %s who runs qtask", UserName(uid), UserName(effectiveUID()))
	}
	if st.Size > MaxFile {
		return nil, nil, fmt.Errorf("it is %d bytes, more than any record or spec", st.Size)
	}
	// One byte more than the size: the usual whole read fits, and the
	// next one, returning 0, says it was the end.
	buf, err := ReadToEnd(fd, path, make([]byte, 0, st.Size+1))
	if err != nil {
		return nil, nil, err
	}
	return buf, &st, nil
}

// ReadToEnd appends what fd holds, up to MaxFile bytes, to buf, whose
// spare capacity is the size of the first read: plain read(2) calls,
// retried when a signal interrupts one.
func ReadToEnd(fd int, path string, buf []byte) ([]byte, error) {
	for len(buf) < MaxFile {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := syscall.Read(fd, buf[len(buf):cap(buf)])
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if err != nil {
			return nil, &fs.PathError{Op: "read", Path: path, Err: err}
		}
		if n == 0 {
			break
		}
		buf = buf[:len(buf)+n]
	}
	return buf, nil
}

// fileKind names the type of file a stat(2) mode describes, for messages.
func fileKind(mode uint32) string {
	switch mode & syscall.S_IFMT {
	case syscall.S_IFDIR:
		return "a directory"
	case syscall.S_IFIFO:
		return "a FIFO"
	case syscall.S_IFSOCK:
		return "a socket"
	case syscall.S_IFCHR, syscall.S_IFBLK:
		return "a device"
	}
	return "a special file"
}

// Open is open(2), retried when a signal interrupts it.
func Open(path string, flags int) (int, error) {
	for {
		fd, err := syscall.Open(path, flags, 0)
		if !errors.Is(err, syscall.EINTR) {
			return fd, err
		}
	}
}

// WriteAtomic writes data to a fresh 0600 temp file beside path and
// renames it into place. The temp file is created with O_EXCL, which never
// follows a symlink, and rename replaces a symlink at path rather than
// writing through it.
func WriteAtomic(path string, data []byte) error {
	return writeReplacing(path, data, false)
}

// WriteSynced is WriteAtomic with the data and the directory entry on
// disk before it returns: a notification must survive a crash that the
// record it precedes may not.
func WriteSynced(path string, data []byte) error {
	return writeReplacing(path, data, true)
}

// writeReplacing is WriteAtomic and WriteSynced: with synced, the data
// and then the directory entry are flushed to disk before it returns.
func writeReplacing(path string, data []byte, synced bool) error {
	w, err := Prepare(path)
	if err != nil {
		return err
	}
	return w.Commit(data, synced, "")
}

// PendingWrite is an atomic replacement of a file whose temp file exists
// already, so that it can be created while something else is waited for
// and the write itself allocates no inode (see statusline.Line.mark for
// why that matters on the path of a start).
type PendingWrite struct {
	path string
	tmp  *os.File
}

// Prepare creates the temp file of a replacement of path, beside it.
func Prepare(path string) (*PendingWrite, error) {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return nil, fmt.Errorf("write %s: %w", path, err)
	}
	return &PendingWrite{path: path, tmp: f}, nil
}

// Commit writes data to the temp file and puts it in place of the path;
// with synced, the data and then the directory entry are flushed first.
// With a spare name, the version it replaces is not freed but kept there
// (one RENAME_EXCHANGE), for the caller to write over next time and
// exchange again, allocating no inode.
func (w *PendingWrite) Commit(data []byte, synced bool, spare string) error {
	_, err := w.tmp.Write(data)
	if err == nil && synced {
		err = w.tmp.Sync()
	}
	if cerr := w.tmp.Close(); err == nil {
		err = cerr
	}
	kept := false
	if err == nil && spare != "" {
		kept = unix.Renameat2(unix.AT_FDCWD, w.tmp.Name(), unix.AT_FDCWD, w.path, unix.RENAME_EXCHANGE) == nil
	}
	if err == nil && !kept {
		err = os.Rename(w.tmp.Name(), w.path) // no spare, no old version, or no exchange here
	}
	if err != nil {
		os.Remove(w.tmp.Name())
		return fmt.Errorf("write %s: %w", w.path, err)
	}
	if kept && os.Rename(w.tmp.Name(), spare) != nil {
		os.Remove(w.tmp.Name())
	}
	if synced {
		if d, err := os.Open(filepath.Dir(w.path)); err == nil {
			d.Sync()
			d.Close()
		}
	}
	return nil
}

// CommitNew writes data to the temp file and links it in at the path
// only if nothing is there: unlike Commit it never replaces a file, so
// what another process wrote there meanwhile is kept (the error then
// wraps fs.ErrExist).
func (w *PendingWrite) CommitNew(data []byte) error {
	_, err := w.tmp.Write(data)
	if cerr := w.tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Link(w.tmp.Name(), w.path)
	}
	os.Remove(w.tmp.Name())
	if err != nil {
		return fmt.Errorf("write %s: %w", w.path, err)
	}
	return nil
}

// ReplaceRecycling replaces path with data by writing data over the file
// at spare and exchanging the two names in one rename: the name path goes
// from the whole old version to the whole new one, and spare keeps the old
// version's inode for the next replacement, so no inode is allocated or
// freed. Without a spare, or on a filesystem without RENAME_EXCHANGE, it
// does nothing and reports false; recycled is true once it has acted,
// whatever the error.
func ReplaceRecycling(path, spare string, data []byte) (recycled bool, err error) {
	// Non-blocking: something other than our own regular file there (a
	// FIFO would hang the open) is not a spare.
	f, err := os.OpenFile(spare, os.O_WRONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return false, nil
	}
	if fi, serr := f.Stat(); serr != nil || !fi.Mode().IsRegular() {
		f.Close()
		return false, nil
	}
	err = f.Truncate(0)
	if err == nil {
		_, err = f.Write(data)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = unix.Renameat2(unix.AT_FDCWD, spare, unix.AT_FDCWD, path, unix.RENAME_EXCHANGE)
		if errors.Is(err, unix.ENOENT) {
			// No file at path yet: the spare becomes it.
			err = os.Rename(spare, path)
		}
	}
	if errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOSYS) {
		os.Remove(spare) // no exchange here: plain atomic writes from now on
		return false, nil
	}
	if err != nil {
		return true, fmt.Errorf("write %s: %w", path, err)
	}
	return true, nil
}

// Abandon removes the temp file of a replacement that will not be made.
func (w *PendingWrite) Abandon() {
	w.tmp.Close()
	os.Remove(w.tmp.Name())
}

// Names lists the names in dir that keep accepts, sorted; none, and no
// error, when dir does not exist, as a directory nothing was written to
// yet may not.
func Names(dir string, keep func(name string) bool) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range entries {
		if keep(e.Name()) {
			names = append(names, e.Name())
		}
	}
	return names, nil
}

// MkdirPrivate creates dir 0700 unless it exists as a real directory.
func MkdirPrivate(dir string) error {
	return MkdirPrivateAt(unix.AT_FDCWD, dir, dir)
}

// MkdirPrivateAt is MkdirPrivate for name relative to dirfd; path names
// it in errors.
func MkdirPrivateAt(dirfd int, name, path string) error {
	err := unix.Mkdirat(dirfd, name, DirMode)
	if err == nil {
		return nil
	}
	if !errors.Is(err, unix.EEXIST) {
		return &fs.PathError{Op: "mkdir", Path: path, Err: err}
	}
	var st unix.Stat_t
	if err := unix.Fstatat(dirfd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return &fs.PathError{Op: "stat", Path: path, Err: err}
	}
	if st.Mode&unix.S_IFMT != unix.S_IFDIR {
		return fmt.Errorf("%s is not a directory (%s): remove it", path, fileKind(st.Mode))
	}
	return nil
}

// UserName is "name (uid N)", or "uid N" when the name is unknown.
func UserName(uid int) string {
	if u, err := user.LookupId(strconv.Itoa(uid)); err == nil {
		return fmt.Sprintf("%s (uid %d)", u.Username, uid)
	}
	return fmt.Sprintf("uid %d", uid)
}

// RingFIFO writes one byte into the FIFO at path, without blocking, if
// someone reads it (a full FIFO has been rung already); one nobody reads
// any more (its reader died) is removed.
func RingFIFO(path string) {
	if fd, ok := openReadFIFO(path); ok {
		syscall.Write(fd, []byte{1})
		syscall.Close(fd)
	}
}

// SweepFIFOs removes the FIFOs in dirs that ours names and nobody reads,
// once they are older than age at now: a FIFO's maker creates it, then
// opens it, and must not find it gone in between. One someone holds open
// has a reader and is left alone.
func SweepFIFOs(dirs []string, ours func(name string) bool, now time.Time, age time.Duration) {
	for _, dir := range dirs {
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			if !ours(e.Name()) || e.Type() != fs.ModeNamedPipe {
				continue
			}
			if info, err := e.Info(); err != nil || now.Sub(info.ModTime()) < age {
				continue
			}
			if fd, ok := openReadFIFO(filepath.Join(dir, e.Name())); ok {
				syscall.Close(fd)
			}
		}
	}
}

// openReadFIFO opens the FIFO at path for writing, without blocking, if
// someone reads it; one nobody reads any more (its reader died) is
// removed. A FIFO with no reader is what makes the open fail with ENXIO.
func openReadFIFO(path string) (int, bool) {
	fd, err := syscall.Open(path, syscall.O_WRONLY|syscall.O_NONBLOCK|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0)
	if errors.Is(err, syscall.ENXIO) {
		os.Remove(path)
	}
	return fd, err == nil
}
