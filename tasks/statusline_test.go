package tasks

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// Count markers are links to one file: starting and ending tasks moves
// the counts without allocating an inode per task.
func TestCountMarkersShareOneInode(t *testing.T) {
	s := newTestStore(t)
	for _, id := range []string{"aaaa0001", "aaaa0002", "aaaa0003"} {
		s.statusLine().Start(id)
	}
	s.statusLine().End("aaaa0004", true)
	s.statusLine().Unstart("aaaa0002")
	c, err := s.Counts()
	if err != nil {
		t.Fatal(err)
	}
	if c.Running != 2 || c.Failed != 1 {
		t.Fatalf("counts %+v, want 2 running and 1 failed", c)
	}
	inodes := map[uint64]bool{}
	for _, path := range []string{
		filepath.Join(s.dir, "counts", "running", "aaaa0001"),
		filepath.Join(s.dir, "counts", "running", "aaaa0003"),
		filepath.Join(s.dir, "counts", "unseen", "aaaa0004"),
	} {
		fi, err := os.Lstat(path)
		if err != nil {
			t.Fatal(err)
		}
		if !fi.Mode().IsRegular() || fi.Mode().Perm() != fileMode {
			t.Errorf("%s: mode %v, want a regular file %v", path, fi.Mode(), os.FileMode(fileMode))
		}
		inodes[fi.Sys().(*syscall.Stat_t).Ino] = true
	}
	if len(inodes) != 1 {
		t.Errorf("the markers are %d files, want links to one", len(inodes))
	}
}
