package tasks

import (
	"fmt"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestLoadAllManyRecordsOnManyWorkers reads enough records for several
// workers to share them: every record comes back once, in start order, and
// every unusable one is a warning, whichever worker met it.
func TestLoadAllManyRecordsOnManyWorkers(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	s := newTestStore(t)
	base := time.Now().Add(-time.Hour).UTC()
	const n = 300
	for i := range n {
		// Saved newest first, so directory order is not start order.
		saveFinished(t, s, fmt.Sprintf("%08x", 0x100+i), base.Add(time.Duration(n-i)*time.Second))
	}
	for _, id := range []string{"000000aa", "000000bb"} {
		if err := os.WriteFile(s.recordPath(id), []byte("{"), fileMode); err != nil {
			t.Fatal(err)
		}
	}
	recs, warnings, err := s.loadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != n {
		t.Fatalf("loadAll returned %d records, want %d", len(recs), n)
	}
	for i, r := range recs {
		if want := fmt.Sprintf("%08x", 0x100+n-1-i); r.ID != want {
			t.Fatalf("record %d is %s, want %s: not in start order", i, r.ID, want)
		}
	}
	if len(warnings) != 2 || !strings.Contains(strings.Join(warnings, "\n"), "000000aa.json") ||
		!strings.Contains(strings.Join(warnings, "\n"), "000000bb.json") {
		t.Errorf("warnings = %q, want one for each corrupt record", warnings)
	}
}
