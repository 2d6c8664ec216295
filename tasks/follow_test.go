package tasks

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// TestFollowerMarksWhatTheCapDropped: output a cap rotation removed before
// the follower read it is announced with its size, never skipped silently,
// and nothing is printed twice.
func TestFollowerMarksWhatTheCapDropped(t *testing.T) {
	const maxBytes = 100
	path := newOutputFile(t, "")
	f := openCapped(t, path, maxBytes)
	var stream strings.Builder
	write := func(from, to int) {
		for i := from; i < to; i++ {
			line := fmt.Sprintf("line %03d\n", i)
			mustWrite(t, f, line)
			stream.WriteString(line)
		}
	}
	fl := newFollower(path, 0)
	defer fl.close()
	var got strings.Builder
	follow := func() string {
		before := got.Len()
		if err := fl.copyNew(&got); err != nil {
			t.Fatal(err)
		}
		return got.String()[before:]
	}

	write(0, 5)
	if s := follow(); s != stream.String() {
		t.Fatalf("before any rotation the follower printed %q, want %q", s, stream.String())
	}
	seen := int64(stream.Len())

	// Rotations the follower did not keep up with.
	write(5, 50)
	s := follow()
	b, _ := os.ReadFile(path)
	dropped, hlen := capParseHeader(b)
	want := fmt.Sprintf(capDroppedFormat, dropped-seen) + string(b[hlen:])
	if dropped <= seen || s != want {
		t.Fatalf("after rotations dropped %d unread bytes, the follower printed\n%q\nwant\n%q", dropped-seen, s, want)
	}

	// A rotation of bytes already printed: nothing to announce.
	write(50, 60)
	follow()
	write(60, 61)
	s = follow()
	b, _ = os.ReadFile(path)
	if again, _ := capParseHeader(b); again == dropped {
		t.Fatalf("line 060 did not rotate the file (%d bytes dropped before and after): the test misses its case", dropped)
	}
	if s != "line 060\n" {
		t.Fatalf("after a rotation of already printed bytes the follower printed %q, want only the new line", s)
	}
}
