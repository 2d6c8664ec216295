package tasks

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/qtask/qtask/tasks/retention"
)

// settleIndexQuickly lets records be indexed once 20 ms old rather than a
// second, for the test's duration.
func settleIndexQuickly(t *testing.T) {
	old := indexSettle
	indexSettle = 20 * time.Millisecond
	t.Cleanup(func() { indexSettle = old })
}

// indexedStore is a store with n finished tasks (ids 00000100 on) and one
// running one, 00000001, read once by loadAll after the finished ones
// settled, so that the index holds them.
func indexedStore(t *testing.T, n int) *Store {
	t.Helper()
	settleIndexQuickly(t)
	s := storeWithFinished(t, n)
	saveAlive(t, s, "00000001", time.Now().Add(-2*time.Hour).UTC())
	time.Sleep(2 * indexSettle)
	if _, _, err := s.loadAll(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(s.indexPath()); err != nil {
		t.Fatalf("no index after reading %d settled records: %v", n, err)
	}
	return s
}

func indexTestID(i int) string { return fmt.Sprintf("%08x", 0x100+i) }

// storeWithFinished is a store with n finished tasks, ids 00000100 on,
// started a second apart an hour ago.
func storeWithFinished(t *testing.T, n int) *Store {
	t.Helper()
	s := newTestStore(t)
	base := time.Now().Add(-time.Hour).UTC()
	for i := range n {
		saveFinished(t, s, indexTestID(i), base.Add(time.Duration(i)*time.Second))
	}
	return s
}

// servedFromIndex loads every record as loadAll does and reports which
// came from the index.
func servedFromIndex(t *testing.T, s *Store) map[string]bool {
	t.Helper()
	ids, err := s.ids()
	if err != nil {
		t.Fatal(err)
	}
	all := make([]loaded, len(ids))
	s.loadEach(ids, s.readIndex(), all)
	served := map[string]bool{}
	for i, l := range all {
		if l.err != nil {
			t.Fatalf("load %s: %v", ids[i], l.err)
		}
		served[ids[i]] = l.indexed
	}
	return served
}

// assertLoadAllMatchesFiles checks that loadAll gives each task exactly as
// its own record file says.
func assertLoadAllMatchesFiles(t *testing.T, s *Store) {
	t.Helper()
	recs, warnings, err := s.loadAll()
	if err != nil || len(warnings) > 0 {
		t.Fatalf("loadAll: %v, warnings %q", err, warnings)
	}
	ids, _ := s.ids()
	if len(recs) != len(ids) {
		t.Fatalf("loadAll gave %d records, the directory has %d", len(recs), len(ids))
	}
	for _, r := range recs {
		want, err := s.load(r.ID)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(r.Task, want.Task) {
			t.Fatalf("loadAll gave task %s as\n%+v\nits file says\n%+v", r.ID, r.Task, want.Task)
		}
	}
}

func TestIndexServesUnchangedFinishedRecords(t *testing.T) {
	s := indexedStore(t, 40)
	if perm := permOf(t, s.indexPath()); perm != fileMode {
		t.Errorf("index mode %v, want %v", perm, os.FileMode(fileMode))
	}
	served := servedFromIndex(t, s)
	for i := range 40 {
		if !served[indexTestID(i)] {
			t.Errorf("finished task %s was read from its file, not the index", indexTestID(i))
		}
	}
	if served["00000001"] {
		t.Error("a running task was served from the index")
	}
	if data, _ := os.ReadFile(s.indexPath()); bytes.Contains(data, []byte(`"id":"00000001"`)) {
		t.Error("the index holds a running task's record")
	}
	assertLoadAllMatchesFiles(t, s)
}

// TestIndexNeverServesAChangedRecord changes indexed records in every way
// a file can change — even back onto the inode and size it was indexed
// with — and expects loadAll to give what the file now says.
func TestIndexNeverServesAChangedRecord(t *testing.T) {
	s := indexedStore(t, 40)
	inode := func(id string) uint64 {
		var st syscall.Stat_t
		if err := syscall.Stat(s.recordPath(id), &st); err != nil {
			t.Fatal(err)
		}
		return st.Ino
	}

	// Saved twice with a same-length name: the second save writes the
	// inode the index saw, and the size is the same.
	recycled := indexTestID(0)
	before := inode(recycled)
	for _, name := range []string{"aaaa", "bbbb"} {
		if _, err := s.update(context.Background(), recycled, func(r *record) error { r.Name = name; return nil }); err != nil {
			t.Fatal(err)
		}
	}
	if after := inode(recycled); after != before {
		t.Fatalf("two saves left task %s on inode %d, not %d: the test needs the recycled inode", recycled, after, before)
	}

	// Rewritten in place by hand, same length.
	inPlace := indexTestID(1)
	data, err := os.ReadFile(s.recordPath(inPlace))
	if err != nil {
		t.Fatal(err)
	}
	edited := bytes.Replace(data, []byte("echo "+inPlace), []byte("ECHO "+inPlace), 1)
	if err := os.WriteFile(s.recordPath(inPlace), edited, fileMode); err != nil {
		t.Fatal(err)
	}

	// Replaced by another file.
	replaced := indexTestID(2)
	if _, err := s.update(context.Background(), replaced, func(r *record) error { r.Error = "replaced"; return nil }); err != nil {
		t.Fatal(err)
	}

	served := servedFromIndex(t, s)
	for _, id := range []string{recycled, inPlace, replaced} {
		if served[id] {
			t.Errorf("changed task %s was served from the index", id)
		}
	}
	assertLoadAllMatchesFiles(t, s)
	recs, _, _ := s.loadAll()
	got := map[string]Task{}
	for _, r := range recs {
		got[r.ID] = r.Task
	}
	if got[recycled].Name != "bbbb" || got[inPlace].Command != "ECHO "+inPlace || got[replaced].Error != "replaced" {
		t.Errorf("loadAll gave the old versions: %q, %q, %q", got[recycled].Name, got[inPlace].Command, got[replaced].Error)
	}
}

// TestIndexIgnoresWhatItCannotTrust plants indexes qtask did not write or
// cannot use: each is ignored, the records are read from their files, and
// the index is written anew.
func TestIndexIgnoresWhatItCannotTrust(t *testing.T) {
	for _, tc := range []struct {
		name  string
		plant func(t *testing.T, s *Store, index []byte)
	}{
		{"garbage", func(t *testing.T, s *Store, _ []byte) {
			writeFile(t, s.indexPath(), "not an index\n")
		}},
		{"cut short", func(t *testing.T, s *Store, index []byte) {
			writeFile(t, s.indexPath(), string(index[:len(index)-100]))
		}},
		{"an entry edited in place", func(t *testing.T, s *Store, index []byte) {
			// Same length, so the stamp still matches the file.
			edited := bytes.Replace(index, []byte("echo "+indexTestID(3)), []byte("ECHO "+indexTestID(3)), 1)
			writeFile(t, s.indexPath(), string(edited))
		}},
		{"an entry holding another task", func(t *testing.T, s *Store, index []byte) {
			// Same length, so the stamp still matches the file.
			forged := bytes.Replace(index, []byte(`"id":"`+indexTestID(3)+`"`), []byte(`"id":"`+indexTestID(4)+`"`), 1)
			writeFile(t, s.indexPath(), string(forged))
		}},
		{"a symlink", func(t *testing.T, s *Store, index []byte) {
			elsewhere := t.TempDir() + "/index"
			writeFile(t, elsewhere, string(index))
			os.Remove(s.indexPath())
			symlink(t, elsewhere, s.indexPath())
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := indexedStore(t, 40)
			index, err := os.ReadFile(s.indexPath())
			if err != nil {
				t.Fatal(err)
			}
			tc.plant(t, s, index)
			served := servedFromIndex(t, s)
			if onlyTask3 := strings.HasPrefix(tc.name, "an entry"); !onlyTask3 {
				for id, ok := range served {
					if ok {
						t.Fatalf("task %s was served from an index that cannot be used", id)
					}
				}
			} else if served[indexTestID(3)] || !served[indexTestID(5)] {
				t.Fatalf("served from the index: task %s, changed there, %v; task %s %v; want false, true",
					indexTestID(3), served[indexTestID(3)], indexTestID(5), served[indexTestID(5)])
			}
			assertLoadAllMatchesFiles(t, s)
			if fi, err := os.Lstat(s.indexPath()); err != nil || !fi.Mode().IsRegular() {
				t.Fatalf("the index was not written anew: %v, %v", fi, err)
			}
			if served := servedFromIndex(t, s); !served[indexTestID(0)] {
				t.Error("the index written anew does not serve the tasks")
			}
		})
	}
}

// TestIndexKeepsNoCopyOfARemovedTask: a prune takes the index with it, and
// an index that still names a removed task (written by a reader racing
// the prune) is rewritten without it by the next reader.
func TestIndexKeepsNoCopyOfARemovedTask(t *testing.T) {
	s := indexedStore(t, 40)
	removed, _, err := s.Prune(context.Background(), PruneOptions{Rule: retention.Rule{Keep: 38}})
	if err != nil || len(removed) != 2 {
		t.Fatalf("Prune removed %d tasks: %v", len(removed), err)
	}
	if _, err := os.Lstat(s.indexPath()); err == nil {
		t.Error("the index outlived a prune")
	}
	time.Sleep(2 * indexSettle)
	if _, _, err := s.loadAll(); err != nil {
		t.Fatal(err)
	}
	index, _ := os.ReadFile(s.indexPath())
	raced := indexTestID(39)
	if !bytes.Contains(index, []byte("echo "+raced)) {
		t.Fatalf("the index does not hold task %s:\n%s", raced, index)
	}
	for _, r := range removed {
		if bytes.Contains(index, []byte("echo "+r.ID)) {
			t.Errorf("the index holds pruned task %s", r.ID)
		}
	}
	// As if a reader had read task 39 before a prune removed it and
	// written the index after.
	if err := os.Remove(s.recordPath(raced)); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.loadAll(); err != nil {
		t.Fatal(err)
	}
	if index, _ := os.ReadFile(s.indexPath()); bytes.Contains(index, []byte("echo "+raced)) {
		t.Errorf("the index still holds removed task %s", raced)
	}
}

// TestIndexWaitsForRecordsToSettle: records changed within indexSettle are
// not indexed (their stamp could repeat), so a store of fresh records gets
// no index at all.
func TestIndexWaitsForRecordsToSettle(t *testing.T) {
	s := storeWithFinished(t, 40)
	if _, _, err := s.loadAll(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(s.indexPath()); err == nil {
		data, _ := os.ReadFile(s.indexPath())
		t.Errorf("records changed a moment ago were indexed:\n%s", strings.SplitN(string(data), "\n", 3)[:2])
	}
}

// TestIndexLeavesOutTimesBefore1970: a record whose mtime was set before
// 1970 by hand is read from its file; the others are still indexed, and
// the index is not rewritten on every read for want of it.
func TestIndexLeavesOutTimesBefore1970(t *testing.T) {
	settleIndexQuickly(t)
	s := storeWithFinished(t, 40)
	old := time.Date(1960, 1, 1, 0, 0, 0, 0, time.UTC)
	if err := os.Chtimes(s.recordPath(indexTestID(0)), old, old); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * indexSettle)
	if _, _, err := s.loadAll(); err != nil {
		t.Fatal(err)
	}
	written, err := os.Stat(s.indexPath())
	if err != nil {
		t.Fatalf("no index: %v", err)
	}
	served := servedFromIndex(t, s)
	if served[indexTestID(0)] || !served[indexTestID(1)] {
		t.Errorf("served from the index: the 1960 record %v, another %v; want false, true", served[indexTestID(0)], served[indexTestID(1)])
	}
	assertLoadAllMatchesFiles(t, s)
	if now, err := os.Stat(s.indexPath()); err != nil || !os.SameFile(now, written) {
		t.Error("the index was written again though nothing changed")
	}
}

// TestIndexWrittenAfterAPruneDropsItself: a reader that read every record,
// then lost the race to a prune, writes an index naming the pruned tasks;
// it notices and takes it back, so no copy of their command lines stays.
func TestIndexWrittenAfterAPruneDropsItself(t *testing.T) {
	settleIndexQuickly(t)
	s := storeWithFinished(t, 40)
	time.Sleep(2 * indexSettle)
	// loadAll, cut in two by the prune.
	settled := time.Now().Add(-indexSettle)
	idx := s.readIndex()
	ids, err := s.ids()
	if err != nil {
		t.Fatal(err)
	}
	all := make([]loaded, len(ids))
	s.loadEach(ids, idx, all)
	removed, _, err := s.Prune(context.Background(), PruneOptions{Rule: retention.Rule{Keep: 38}})
	if err != nil || len(removed) != 2 {
		t.Fatalf("Prune removed %d tasks: %v", len(removed), err)
	}
	s.refreshIndex(idx, ids, all, settled)

	index, err := os.ReadFile(s.indexPath())
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	for _, r := range removed {
		if bytes.Contains(index, []byte("echo "+r.ID)) {
			t.Errorf("the index holds pruned task %s's command line", r.ID)
		}
	}
	assertLoadAllMatchesFiles(t, s)
}
