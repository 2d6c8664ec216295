package tasks

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/user"
	"strconv"
	"syscall"
)

// ensurePrivateDir creates dir 0700 if it is missing, then checks that it is
// a real directory of the effective user's that no one else may enter. The
// error is one line naming the path, what is wrong and the fix; top says
// whether dir is the state directory itself, whose fix differs.
func ensurePrivateDir(dir string, top bool) error {
	fi, err := os.Lstat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		if err := os.MkdirAll(dir, dirMode); err != nil {
			return fmt.Errorf("create state directory: %w", err)
		}
		fi, err = os.Lstat(dir)
	}
	if err != nil {
		return fmt.Errorf("state directory: %w", err)
	}
	other := "set QTASK_STATE_DIR to a directory of your own"
	if !top {
		other = "set QTASK_STATE_DIR to a fresh directory"
	}
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		target, _ := os.Readlink(dir)
		fix := "set QTASK_STATE_DIR to the directory it points to"
		if !top {
			fix = "remove the link, or " + other
		}
		return fmt.Errorf("state directory %s is a symlink to %s, and qtask does not follow it: %s", dir, target, fix)
	case !fi.IsDir():
		return fmt.Errorf("state directory %s is not a directory (%v): %s", dir, fi.Mode().Type(), other)
	}
	if uid := ownerUID(fi); uid != effectiveUID() {
		return fmt.Errorf("state directory %s is owned by %s, not by %s who runs qtask, and qtask does not use another user's state: "+
			"`chown %d %s` if it is yours, or %s", dir, userName(uid), userName(effectiveUID()), effectiveUID(), dir, other)
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		mode := uint32(perm)
		if fi.Mode()&fs.ModeSticky != 0 {
			mode |= syscall.S_ISVTX
		}
		fix := fmt.Sprintf("run `chmod 700 %s`, or %s", dir, other)
		if perm&0o002 != 0 || fi.Mode()&fs.ModeSticky != 0 {
			// A directory like /tmp is shared on purpose: making it
			// private would break everyone else.
			fix = other
		}
		return fmt.Errorf("state directory %s has mode %04o, open to other users, and qtask never changes the mode of a directory it finds: %s",
			dir, mode, fix)
	}
	return nil
}

// ownerUID is the uid owning the file fi describes.
func ownerUID(fi fs.FileInfo) int {
	return int(fi.Sys().(*syscall.Stat_t).Uid)
}

// userName is "name (uid N)", or "uid N" when the name is unknown.
func userName(uid int) string {
	if u, err := user.LookupId(strconv.Itoa(uid)); err == nil {
		return fmt.Sprintf("%s (uid %d)", u.Username, uid)
	}
	return fmt.Sprintf("uid %d", uid)
}
