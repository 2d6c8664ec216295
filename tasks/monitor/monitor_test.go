package monitor

import (
	"strings"
	"testing"
	"time"
)

// fakeClock is a clock the test moves by hand.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time          { return c.t }
func (c *fakeClock) advance(d time.Duration) { c.t = c.t.Add(d) }

func takes(b *Bucket, n int) int {
	got := 0
	for range n {
		if b.Take() {
			got++
		}
	}
	return got
}

func TestBucketBurstThenOnePerSecond(t *testing.T) {
	c := &fakeClock{t: time.Unix(1000, 0)}
	b := NewBucket(c.now)
	if got := takes(b, 60); got != Burst {
		t.Fatalf("60 lines at once: %d events, want the burst of %d", got, Burst)
	}
	c.advance(999 * time.Millisecond)
	if b.Take() {
		t.Fatal("a token came back before a second had passed")
	}
	c.advance(time.Millisecond)
	if !b.Take() || b.Take() {
		t.Fatal("one second later: want exactly one token")
	}
	c.advance(time.Hour)
	if got := takes(b, 60); got != Burst {
		t.Fatalf("after an hour idle: %d tokens, want the burst of %d (never more)", got, Burst)
	}
}

func TestBucketFractionsAddUp(t *testing.T) {
	c := &fakeClock{t: time.Unix(1000, 0)}
	b := NewBucket(c.now)
	takes(b, Burst)
	got := 0
	for range 40 { // 10 s in steps of 250 ms
		c.advance(250 * time.Millisecond)
		got += takes(b, 1)
	}
	if got != 10 {
		t.Fatalf("10 s of refill in quarter seconds gave %d tokens, want 10", got)
	}
}

func TestBucketClockGoingBack(t *testing.T) {
	c := &fakeClock{t: time.Unix(1000, 0)}
	b := NewBucket(c.now)
	takes(b, Burst)
	c.advance(-time.Hour)
	if b.Take() {
		t.Fatal("a clock stepping back gave a token")
	}
}

func TestEventLine(t *testing.T) {
	if got := EventLine("short"); got != "short" {
		t.Fatalf("short line changed: %q", got)
	}
	exact := strings.Repeat("ü", LineMax)
	if got := EventLine(exact); got != exact {
		t.Fatal("a line of exactly LineMax characters was cut")
	}
	got := EventLine(exact + "z")
	if got != exact+TruncatedMark {
		t.Fatalf("long line: got %d bytes ending %q, want LineMax characters then the mark", len(got), got[len(got)-20:])
	}
}

func TestBlank(t *testing.T) {
	for s, want := range map[string]bool{"": true, " \t ": true, " x ": false} {
		if Blank(s) != want {
			t.Errorf("Blank(%q) = %v", s, !want)
		}
	}
}

func TestResolve(t *testing.T) {
	got, err := Options{}.Resolve()
	if err != nil || got.MaxEvents != DefaultMaxEvents || got.IdleTimeout != DefaultIdle {
		t.Fatalf("defaults: %+v, %v", got, err)
	}
	for _, bad := range []Options{
		{MaxEvents: MaxEventsCap + 1}, {MaxEvents: -1},
		{IdleTimeout: IdleCap + time.Second}, {IdleTimeout: -time.Second},
		{Match: "("},
	} {
		if _, err := bad.Resolve(); err == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
	if got, err := (Options{MaxEvents: MaxEventsCap, IdleTimeout: IdleCap, Match: "ERR"}).Resolve(); err != nil || got.MaxEvents != MaxEventsCap {
		t.Fatalf("the caps themselves refused: %v", err)
	}
}
