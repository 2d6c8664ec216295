package statefs

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"syscall"

	"golang.org/x/sys/unix"
)

// Home is the directory a default state directory is made in:
// $XDG_STATE_HOME, or $HOME. qtask makes the few levels below it (qtask,
// or .local/state/qtask), and $XDG_STATE_HOME itself where its parent
// exists (Create), never HOME: a missing home is a mistake to report, not
// a directory to create (as root, `HOME=/nonexistent qtask ls` once made
// /nonexistent).
type Home struct {
	Dir string // "" when the state directory was named outright
	Var string // the variable that named Dir, for the error when it is missing
	// Create lets Dir itself be made (0700) when its parent exists: the XDG
	// base directory spec asks that of $XDG_STATE_HOME. A missing parent
	// is still refused, and HOME is never made.
	Create bool
}

// Root is the state directory as OpenRoot checked it, held open. Every
// name its methods take is relative to it. What is created beside the
// records (the locks, the status counts) is created through the open
// directory, never through a symlink, so a directory put in its path's
// place afterwards never receives it; under a lock, Check proves the path
// still names it before anything is written by path.
type Root struct {
	dir string
	f   *os.File // O_PATH
}

// OpenRoot checks the state directory dir and opens it, creating it (and
// any missing parents) 0700 when absent, inside home only. A directory that
// already exists is used as it is or refused, never changed: qtask does
// not chmod what it finds (the state dir could be /tmp), does not follow a
// symlink in its place, and does not trust a directory another user owns,
// who could swap the records and specs it reads, nor one inside a
// directory another user may change (see checkParents). The error is one
// line naming the path, what is wrong and the fix.
func OpenRoot(dir string, home Home) (*Root, error) {
	if err := checkParents(dir); err != nil {
		return nil, err
	}
	fi, err := ensurePrivateDir(dir, true, home)
	if err != nil {
		return nil, err
	}
	fd, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("open state directory: %w", &fs.PathError{Op: "open", Path: dir, Err: err})
	}
	f := os.NewFile(uintptr(fd), dir)
	if st, err := f.Stat(); err != nil || !os.SameFile(fi, st) {
		f.Close()
		return nil, fmt.Errorf("state directory %s was replaced while qtask checked it: run the command again", dir)
	}
	return &Root{dir: dir, f: f}, nil
}

// Dir is the state directory's path.
func (r *Root) Dir() string { return r.dir }

// EnsureDir holds rel, a directory in the state directory, to the state
// directory's own rules (see OpenRoot), creating it 0700 when absent.
func (r *Root) EnsureDir(rel string) error {
	_, err := ensurePrivateDir(filepath.Join(r.dir, rel), false, Home{})
	return err
}

// makeStateDir creates the missing state directory dir 0700, with its
// missing parents, but inside home only: home itself must exist (or, with
// home.Create, its parent).
func makeStateDir(dir string, home Home) error {
	if home.Dir != "" {
		must := home.Dir
		if home.Create {
			must = filepath.Dir(home.Dir)
		}
		fi, err := os.Stat(must)
		if err == nil && !fi.IsDir() {
			err = errors.New("not a directory")
		}
		if errors.Is(err, fs.ErrNotExist) {
			err = errors.New("does not exist")
		}
		if err != nil {
			return fmt.Errorf("%s=%s %v, and qtask does not create it for its state directory %s: set %s to an existing directory, or QTASK_STATE_DIR to the directory qtask should use",
				home.Var, home.Dir, err, dir, home.Var)
		}
	}
	if err := os.MkdirAll(dir, DirMode); err != nil {
		return fmt.Errorf("create state directory: %w", err)
	}
	return nil
}

// ensurePrivateDir creates dir 0700 if it is missing (makeStateDir), then
// checks that it is a real directory of the effective user's that no one
// else may enter, and returns what it found. The error is one line naming
// the path, what is wrong and the fix; top says whether dir is the state
// directory itself, whose fix differs.
func ensurePrivateDir(dir string, top bool, home Home) (fs.FileInfo, error) {
	fi, err := os.Lstat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		if err := makeStateDir(dir, home); err != nil {
			return nil, err
		}
		fi, err = os.Lstat(dir)
	}
	if err != nil {
		return nil, fmt.Errorf("state directory: %w", err)
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
		return nil, fmt.Errorf("state directory %s is a symlink to %s, and qtask does not follow it: %s", dir, target, fix)
	case !fi.IsDir():
		return nil, fmt.Errorf("state directory %s is not a directory (%v): %s", dir, fi.Mode().Type(), other)
	}
	if uid := ownerUID(fi); uid != effectiveUID() {
		return nil, fmt.Errorf("state directory %s is owned by %s, not by %s who runs qtask, and qtask does not use another user's state: "+
			"`chown %d %s` if it is yours, or %s", dir, UserName(uid), UserName(effectiveUID()), effectiveUID(), dir, other)
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		fix := fmt.Sprintf("run `chmod 700 %s`, or %s", dir, other)
		if perm&0o002 != 0 || fi.Mode()&fs.ModeSticky != 0 {
			// A directory like /tmp is shared on purpose: making it
			// private would break everyone else.
			fix = other
		}
		return nil, fmt.Errorf("state directory %s has mode %04o, open to other users, and qtask never changes the mode of a directory it finds: %s",
			dir, octalMode(fi), fix)
	}
	return fi, nil
}

// checkParents refuses a state directory inside a directory another user
// may change: whoever can write to a parent can rename the state directory
// away and put their own in its place, under a qtask that has checked it,
// and have it read their specs and records. A parent is safe when it is
// root's or the effective user's and no one else may write to it, or it
// has the sticky bit (as /tmp does: others may add entries there but not
// rename ours). Parents that do not exist yet are skipped: qtask makes them
// 0700. A symlink on the way is followed to check the directories it
// leads through too. It costs an lstat(2) per level: every command, the
// status line's included, opens the state directory.
func checkParents(dir string) error {
	linked, err := checkChain(dir, filepath.Dir(dir))
	if err != nil || !linked {
		return err
	}
	// Only the existing part of the path can be resolved.
	existing := filepath.Dir(dir)
	for {
		if _, err := os.Lstat(existing); err == nil || existing == filepath.Dir(existing) {
			break
		}
		existing = filepath.Dir(existing)
	}
	real, err := filepath.EvalSymlinks(existing)
	if err != nil {
		return fmt.Errorf("state directory %s: %w", dir, err)
	}
	_, err = checkChain(dir, real)
	return err
}

// checkChain checks parent and every directory above it, for the state
// directory dir, and reports whether any of them is a symlink (whose own
// mode means nothing: the directory holding it is what guards it).
func checkChain(dir, parent string) (linked bool, err error) {
	for d := parent; ; d = filepath.Dir(d) {
		fi, err := os.Lstat(d)
		switch {
		case errors.Is(err, fs.ErrNotExist):
		case err != nil:
			return false, fmt.Errorf("state directory %s: %w", dir, err)
		case fi.Mode()&fs.ModeSymlink != 0:
			linked = true
		default:
			if err := checkParent(dir, d, fi); err != nil {
				return false, err
			}
		}
		if d == filepath.Dir(d) {
			return linked, nil
		}
	}
}

// checkParent refuses parent, a directory above the state directory dir,
// if a user other than root and the effective user could replace what is
// in it (see checkParents). The error is one line, as for a state
// directory another user owns.
func checkParent(dir, parent string, fi fs.FileInfo) error {
	const refuse = "state directory %s is inside %s, which %s: they could replace the state directory with their own, and qtask keeps its state only where no other user can: %s"
	uid, me := ownerUID(fi), effectiveUID()
	if uid != 0 && uid != me {
		return fmt.Errorf(refuse, dir, parent, "is owned by "+UserName(uid), "set QTASK_STATE_DIR to a directory of your own")
	}
	perm := fi.Mode().Perm()
	if perm&0o022 == 0 || fi.Mode()&fs.ModeSticky != 0 {
		return nil
	}
	fix := "set QTASK_STATE_DIR to a directory of your own"
	if uid == me && perm&0o002 == 0 {
		// A directory shared with everyone is so on purpose; one's own
		// group-writable directory can simply be made not so.
		fix = fmt.Sprintf("run `chmod g-w %s`, or %s", parent, fix)
	}
	who := "other users"
	if perm&0o002 == 0 {
		who = "its group"
	}
	return fmt.Errorf(refuse, dir, parent, fmt.Sprintf("has mode %04o (%s may write to it, and it has no sticky bit)", octalMode(fi), who), fix)
}

// octalMode is fi's permission bits with the setuid, setgid and sticky
// bits, as chmod and ls -l spell them.
func octalMode(fi fs.FileInfo) uint32 {
	mode := uint32(fi.Mode().Perm())
	for _, b := range []struct {
		fs  fs.FileMode
		sys uint32
	}{{fs.ModeSetuid, syscall.S_ISUID}, {fs.ModeSetgid, syscall.S_ISGID}, {fs.ModeSticky, syscall.S_ISVTX}} {
		if fi.Mode()&b.fs != 0 {
			mode |= b.sys
		}
	}
	return mode
}

// ownerUID is the uid owning the file fi describes.
func ownerUID(fi fs.FileInfo) int {
	return int(fi.Sys().(*syscall.Stat_t).Uid)
}

// ErrReplaced: the state directory's path no longer names the directory
// OpenRoot opened (see Check).
var ErrReplaced = errors.New("it was moved or replaced by another directory since qtask opened it, and qtask writes only into the directory it checked")

// Check reports an error unless the state directory's path still names the
// directory OpenRoot opened: whatever lives as long as a task (the wrapper,
// the capture, the MCP server) checks it under a lock (see Lock), before
// each write into the state directory by path, so that a directory put in
// its place meanwhile is never written. The error wraps ErrReplaced; if the
// path names nothing any more, also fs.ErrNotExist.
func (r *Root) Check() error {
	fi, err := os.Lstat(r.dir)
	if err == nil {
		var st fs.FileInfo
		if st, err = r.f.Stat(); err == nil && os.SameFile(fi, st) {
			return nil
		}
	}
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("state directory %s: %w (%w)", r.dir, ErrReplaced, err)
	}
	return fmt.Errorf("state directory %s: %w: put it back, or run the command again", r.dir, ErrReplaced)
}

// OpenFile opens rel with flag (os.O_CREATE and the like), never through a
// symlink; a file it creates is 0600.
func (r *Root) OpenFile(rel string, flag int) (*os.File, error) {
	fd, err := openatNoEINTR(int(r.f.Fd()), rel, flag|unix.O_NOFOLLOW|unix.O_CLOEXEC, FileMode)
	runtime.KeepAlive(r.f)
	path := filepath.Join(r.dir, rel)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	return os.NewFile(uintptr(fd), path), nil
}

// openatNoEINTR is openat(2), retried when a signal interrupts it.
func openatNoEINTR(dirfd int, name string, flag int, perm uint32) (int, error) {
	for {
		fd, err := unix.Openat(dirfd, name, flag, perm)
		if !errors.Is(err, unix.EINTR) {
			return fd, err
		}
	}
}

// Mkdir creates rel 0700 unless it exists as a real directory.
func (r *Root) Mkdir(rel string) error {
	defer runtime.KeepAlive(r.f)
	return MkdirPrivateAt(int(r.f.Fd()), rel, filepath.Join(r.dir, rel))
}

// Link makes newrel a hard link to oldrel; errors are the errno's.
func (r *Root) Link(oldrel, newrel string) error {
	defer runtime.KeepAlive(r.f)
	fd := int(r.f.Fd())
	return unix.Linkat(fd, oldrel, fd, newrel, 0)
}

// Remove unlinks the file rel; errors are the errno's.
func (r *Root) Remove(rel string) error {
	defer runtime.KeepAlive(r.f)
	return unix.Unlinkat(int(r.f.Fd()), rel, 0)
}

// Names lists the directory rel, sorted; none when it is missing.
func (r *Root) Names(rel string) ([]string, error) {
	return Names(filepath.Join(r.dir, rel), func(string) bool { return true })
}

// Exists says whether anything is at rel.
func (r *Root) Exists(rel string) bool {
	_, err := os.Lstat(filepath.Join(r.dir, rel))
	return err == nil
}

// ReadFile reads rel, a regular file of the effective user's (ReadOwn).
func (r *Root) ReadFile(rel string) ([]byte, error) {
	return ReadOwn(filepath.Join(r.dir, rel))
}

// WriteFile replaces rel with data atomically (WriteAtomic).
func (r *Root) WriteFile(rel string, data []byte) error {
	return WriteAtomic(filepath.Join(r.dir, rel), data)
}
