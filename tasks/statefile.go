package tasks

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// State files (records, specs, notifications) are read only when they are
// regular files the effective user owns, and written by replacing them
// atomically, never through a symlink.

// effectiveUID is os.Geteuid, asked once: `ls` checks the owner of every
// record, and qtask never changes its uid.
var effectiveUID = sync.OnceValue(os.Geteuid)

// maxStateFile bounds what readOwnFile reads: records and specs are small,
// and a planted huge file must not exhaust memory.
const maxStateFile = 64 << 20

// readOwnFile reads a state file (a record, a spec, a notification),
// refusing anything but a regular file the effective user owns: not through
// a symlink (O_NOFOLLOW), not a FIFO or device (opened O_NONBLOCK, so a
// planted FIFO cannot hang the reader), and not another user's file. It
// makes plain system calls: `ls` reads every record, and an *os.File costs
// twice the calls (poller set-up, flag juggling, a growing read buffer).
func readOwnFile(path string) ([]byte, error) {
	data, _, err := readOwnFileStat(path)
	return data, err
}

// readOwnFileStat is readOwnFile, also returning the file's stat(2) as it
// was opened (see fileStamp).
func readOwnFileStat(path string) ([]byte, *syscall.Stat_t, error) {
	fd, err := openNoEINTR(path, syscall.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK|syscall.O_CLOEXEC)
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
		return nil, nil, fmt.Errorf("it is owned by %s, not by %s who runs qtask", userName(uid), userName(effectiveUID()))
	}
	if st.Size > maxStateFile {
		return nil, nil, fmt.Errorf("it is %d bytes, more than any record or spec", st.Size)
	}
	// One byte more than the size: the usual whole read fits, and the
	// next one, returning 0, says it was the end.
	buf, err := readToEnd(fd, path, make([]byte, 0, st.Size+1))
	if err != nil {
		return nil, nil, err
	}
	return buf, &st, nil
}

// readToEnd appends what fd holds, up to maxStateFile bytes, to buf, whose
// spare capacity is the size of the first read: plain read(2) calls,
// retried when a signal interrupts one.
func readToEnd(fd int, path string, buf []byte) ([]byte, error) {
	for len(buf) < maxStateFile {
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

// openNoEINTR is open(2), retried when a signal interrupts it.
func openNoEINTR(path string, flags int) (int, error) {
	for {
		fd, err := syscall.Open(path, flags, 0)
		if !errors.Is(err, syscall.EINTR) {
			return fd, err
		}
	}
}

// writeFileAtomic writes data to a fresh 0600 temp file beside path and
// renames it into place. The temp file is created with O_EXCL, which never
// follows a symlink, and rename replaces a symlink at path rather than
// writing through it.
func writeFileAtomic(path string, data []byte) error {
	return writeFileReplacing(path, data, false)
}

// writeFileReplacing is writeFileAtomic and writeFileSynced: with synced, the data
// and then the directory entry are flushed to disk before it returns.
func writeFileReplacing(path string, data []byte, synced bool) error {
	w, err := prepareWrite(path)
	if err != nil {
		return err
	}
	return w.commit(data, synced, "")
}

// replaceRecycling replaces path with data by writing data over the file
// at spare and exchanging the two names in one rename: the name path goes
// from the whole old version to the whole new one, and spare keeps the old
// version's inode for the next replacement, so no inode is allocated or
// freed. Without a spare, or on a filesystem without RENAME_EXCHANGE, it
// does nothing and reports false; recycled is true once it has acted,
// whatever the error.
func replaceRecycling(path, spare string, data []byte) (recycled bool, err error) {
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
			// No record yet: the spare becomes it.
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

// pendingWrite is an atomic replacement of a file whose temp file exists
// already, so that it can be created while something else is waited for
// and the write itself allocates no inode (see statusline.Line.mark for
// why that matters on the path of a start).
type pendingWrite struct {
	path string
	tmp  *os.File
}

// prepareWrite creates the temp file of a replacement of path, beside it.
func prepareWrite(path string) (*pendingWrite, error) {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return nil, fmt.Errorf("write %s: %w", path, err)
	}
	return &pendingWrite{path: path, tmp: f}, nil
}

// commit writes data to the temp file and puts it in place of the path;
// with synced, the data and then the directory entry are flushed first.
// With a spare name, the version it replaces is not freed but kept there
// (one RENAME_EXCHANGE), for replaceRecycling to write over next time.
func (w *pendingWrite) commit(data []byte, synced bool, spare string) error {
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

// abandon removes the temp file of a replacement that will not be made.
func (w *pendingWrite) abandon() {
	w.tmp.Close()
	os.Remove(w.tmp.Name())
}

// namesIn lists the names in dir that keep accepts, sorted; none, and no
// error, when dir does not exist, as a directory nothing was written to
// yet may not.
func namesIn(dir string, keep func(name string) bool) ([]string, error) {
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
