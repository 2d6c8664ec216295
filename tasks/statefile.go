package tasks

import (
	"errors"
	"fmt"
	"os"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/qtask/qtask/tasks/statefs"
)

// State files (records, specs, notifications) are read only when they are
// regular files the effective user owns, and written by replacing them
// atomically, never through a symlink: the primitives are statefs's, shared
// with the notification queue. tasks calls them by these short names.
var (
	effectiveUID    = statefs.EffectiveUID
	readOwnFile     = statefs.ReadOwn
	readOwnFileStat = statefs.ReadOwnStat
	readToEnd       = statefs.ReadToEnd
	openNoEINTR     = statefs.Open
	writeFileAtomic = statefs.WriteAtomic
	prepareWrite    = statefs.Prepare
	namesIn         = statefs.Names
	mkdirPrivate    = statefs.MkdirPrivate
	mkdirPrivateAt  = statefs.MkdirPrivateAt
	userName        = statefs.UserName
)

// pendingWrite is a replacement whose temp file exists already.
type pendingWrite = statefs.PendingWrite

// maxStateFile bounds what a state file may hold.
const maxStateFile = statefs.MaxFile

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
